// standalone
// what: a module parameter is set once, at load (a SetOnce read without a lock): module! refuses a writable sysfs mode, so no write can race a reader
// expect: module parameter permissions may have read bits only
use kernel::prelude::*;

module! {
    type: Case,
    name: "@NAME@",
    authors: ["rnull-split project"],
    description: "a case of the compile-fail suite",
    license: "GPL",
    params: {
        depth: u32 {
            default: 1,
            description: "a parameter",
            permissions: 0o644,
        },
    },
}

struct Case;

impl kernel::Module for Case {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        Ok(Case)
    }
}
