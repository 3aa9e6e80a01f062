// standalone
// what: a read-only module parameter (mode 0o444, shown in /sys/module) builds, as rnull_split's and rvirtio_blk's
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
            permissions: 0o444,
        },
    },
}

struct Case;

impl kernel::Module for Case {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        Ok(Case)
    }
}
