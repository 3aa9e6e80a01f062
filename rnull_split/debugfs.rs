// SPDX-License-Identifier: GPL-2.0

//! The driver's only use of raw debugfs bindings (6.12's kernel crate has no
//! debugfs abstraction): a directory per device with its counters as
//! read-only `u64` files.

use crate::stats::Stats;
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::{bindings, error::from_err_ptr, prelude::*, str::CStr, sync::Arc};

/// The module's directory (`/sys/kernel/debug/rnull_split`), set while the
/// [`Root`] made by module init exists; devices add their directories to it.
static ROOT: AtomicPtr<bindings::dentry> = AtomicPtr::new(core::ptr::null_mut());

/// The module's debugfs directory. Create it before any device and drop it
/// after the last one.
pub(crate) struct Root {
    _dir: Dir,
}

impl Root {
    /// Create `/sys/kernel/debug/<name>`.
    pub(crate) fn new(name: &CStr) -> Self {
        let dir = Dir::new(name, None);
        ROOT.store(dir.dentry, Ordering::Release);
        Self { _dir: dir }
    }
}

impl Drop for Root {
    fn drop(&mut self) {
        ROOT.store(core::ptr::null_mut(), Ordering::Release);
    }
}

/// A debugfs directory, removed with everything in it on drop.
///
/// # Invariants
///
/// `dentry` was returned by `debugfs_create_dir` (possibly an error pointer
/// when debugfs is unavailable, which every debugfs call accepts and
/// ignores), and is removed only in `drop`. `_stats`, when set, keeps the
/// counters its files point to alive until then.
pub(crate) struct Dir {
    dentry: *mut bindings::dentry,
    _stats: Option<Arc<Stats>>,
}

// SAFETY: The dentry pointer is only handed to debugfs functions, which may be
// called from any thread.
unsafe impl Send for Dir {}
// SAFETY: `Dir` has no methods that use `&self` concurrently with mutation.
unsafe impl Sync for Dir {}

impl Dir {
    /// Create directory `name` under `parent` (or the debugfs root).
    fn new(name: &CStr, parent: Option<&Dir>) -> Self {
        let parent = parent.map_or(core::ptr::null_mut(), |p| p.dentry);
        Self::new_raw(name, parent)
    }

    fn new_raw(name: &CStr, parent: *mut bindings::dentry) -> Self {
        // SAFETY: `name` is a valid C string; `parent` is null or a live
        // dentry (a borrowed `Dir`, or the `Root`, which outlives devices).
        let dentry = unsafe { bindings::debugfs_create_dir(name.as_char_ptr(), parent) };
        if let Err(e) = from_err_ptr(dentry) {
            pr_warn!("debugfs directory not created: {:?}\n", e);
        }
        // INVARIANT: `dentry` comes from `debugfs_create_dir`.
        Self {
            dentry,
            _stats: None,
        }
    }

    /// Create directory `name` in the module's directory, holding one
    /// read-only file per counter of `stats`.
    pub(crate) fn with_stats(name: &CStr, stats: Arc<Stats>) -> Self {
        let mut dir = Self::new_raw(name, ROOT.load(Ordering::Acquire));
        for (file, counter) in stats.named() {
            // `counter` lives in `stats`, which `dir` keeps until the file is removed.
            // SAFETY: `dir.dentry` is live; an `AtomicU64` has the layout of a `u64`.
            unsafe {
                bindings::debugfs_create_u64(
                    file.as_char_ptr(),
                    0o444,
                    dir.dentry,
                    counter.as_ptr(),
                )
            };
        }
        dir._stats = Some(stats);
        dir
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        // SAFETY: By the type invariant `dentry` came from
        // `debugfs_create_dir` and was not removed yet.
        unsafe { bindings::debugfs_remove(self.dentry) };
    }
}
