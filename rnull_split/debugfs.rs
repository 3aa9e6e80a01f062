// SPDX-License-Identifier: GPL-2.0

//! The driver's debugfs files, on `kernel::debugfs`: the module's directory
//! `/sys/kernel/debug/rnull_split` ([`Root`]) and in it one directory per
//! disk ([`Dir`]) with each counter of its [`Stats`] as a read-only file
//! holding a decimal number and a newline.
//!
//! A [`Root`] is a reference to the module's directory: module init makes
//! it and hands clones to whoever creates disks. Each disk's directory
//! holds a reference to it too, so the module's directory goes once the
//! last disk's and the last [`Root`] have.
//!
//! As everywhere in debugfs, failures are not errors: a directory or file
//! that could not be made is just missing (with a warning when memory ran
//! out).

use crate::stats::Stats;
use core::fmt;
use kernel::{
    debugfs::{self, Scope},
    percpu::PerCpuCounter,
    prelude::*,
    str::CStr,
    sync::Arc,
};

/// The module's debugfs directory. Clones refer to the same directory.
#[derive(Clone)]
pub(crate) struct Root(debugfs::Dir);

impl Root {
    /// Create `/sys/kernel/debug/<name>`.
    pub(crate) fn new(name: &CStr) -> Self {
        Self(debugfs::Dir::new(name))
    }
}

/// A disk's debugfs directory; dropping it removes the directory and its
/// files, then releases the counters they show.
pub(crate) struct Dir {
    /// `None` when there was no memory for it.
    _scope: Option<Pin<KBox<Scope<Arc<Stats>>>>>,
}

/// Show one counter as C's `debugfs_create_u64` does: `%llu\n`.
fn show(counter: &PerCpuCounter, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    writeln!(f, "{}", counter.sum())
}

impl Dir {
    /// Create directory `name` in `parent`, holding one read-only file per
    /// counter of `stats`.
    pub(crate) fn with_stats(parent: &Root, name: &CStr, stats: Arc<Stats>) -> Self {
        let scope = KBox::pin_init(
            parent.0.scope(stats, name, |stats, dir| {
                for (file, counter) in stats.named() {
                    dir.read_callback_file(file, counter, &show);
                }
            }),
            GFP_KERNEL,
        );
        Self {
            _scope: scope
                .inspect_err(|e| pr_warn!("{}: debugfs directory not created: {:?}\n", name, e))
                .ok(),
        }
    }
}
