// SPDX-License-Identifier: GPL-2.0

//! SG memory counters, shown in debugfs under
//! `/sys/kernel/debug/rvirtio_blk/<disk>/`:
//!
//! - `requests`: data requests mapped (those with at least one segment);
//! - `chained`: of those, how many needed a chained table from the SG pool;
//! - `sg_bytes`, `sg_bytes_peak`: SG pool bytes held now / at most;
//! - `pdu_bytes`, `inline_sg`, `tagset_sg_bytes`, `queue_depth`,
//!   `nr_hw_queues`: the per-request data size, inline entries per request and
//!   the SG memory preallocated by the whole tag set;
//! - `ring_full`: times a request found the ring full;
//! - `polled`: requests completed by polling a poll queue;
//! - `vqN_requests`: requests submitted on virtqueue N;
//! - `break_device` (write-only, for tests): marks the device broken like a
//!   surprise removal does (`virtio_break_device`), so that requests in
//!   flight are never answered and `remove` has to end them.

use crate::sg_plan;
use core::sync::atomic::{
    AtomicPtr, AtomicU64,
    Ordering::{Acquire, Relaxed, Release},
};
use kernel::{bindings, prelude::*};

/// The driver's directory, `/sys/kernel/debug/rvirtio_blk` (null when
/// debugfs has none): set by module init before the driver is registered,
/// cleared by module exit after it is unregistered, so that every probe sees
/// it set.
static ROOT: AtomicPtr<bindings::dentry> = AtomicPtr::new(core::ptr::null_mut());

/// The counters of one disk.
#[derive(Default)]
pub(crate) struct Stats {
    /// Data requests mapped.
    pub(crate) requests: AtomicU64,
    /// Requests that needed a chained table.
    pub(crate) chained: AtomicU64,
    /// SG pool bytes held now.
    pub(crate) sg_bytes: AtomicU64,
    /// Peak of `sg_bytes`.
    pub(crate) sg_bytes_peak: AtomicU64,
    /// Per-request data size.
    pub(crate) pdu_bytes: AtomicU64,
    /// Inline SG entries per request.
    pub(crate) inline_sg: AtomicU64,
    /// SG bytes preallocated by the tag set.
    pub(crate) tagset_sg_bytes: AtomicU64,
    /// Tag set queue depth.
    pub(crate) queue_depth: AtomicU64,
    /// Hardware queues.
    pub(crate) nr_hw_queues: AtomicU64,
    /// Times a request found the ring full (`queue_rq` then stops the
    /// hardware queue, `queue_rqs` requeues the request).
    pub(crate) ring_full: AtomicU64,
    /// Requests completed by polling a poll queue.
    pub(crate) polled: AtomicU64,
}

impl Stats {
    /// Accounts a request mapped with `nents` segments.
    pub(crate) fn mapped(&self, nents: u32, first_chunk: u32) {
        self.requests.fetch_add(1, Relaxed);
        if sg_plan::needs_chained_table(nents, first_chunk) {
            self.chained.fetch_add(1, Relaxed);
            let b = sg_plan::chained_table_bytes(nents, first_chunk, sg_size());
            let now = self.sg_bytes.fetch_add(b, Relaxed) + b;
            self.sg_bytes_peak.fetch_max(now, Relaxed);
        }
    }

    /// Accounts the release of a request mapped with `nents` segments.
    pub(crate) fn unmapped(&self, nents: u32, first_chunk: u32) {
        if sg_plan::needs_chained_table(nents, first_chunk) {
            let b = sg_plan::chained_table_bytes(nents, first_chunk, sg_size());
            self.sg_bytes.fetch_sub(b, Relaxed);
        }
    }
}

/// `sizeof(struct scatterlist)`.
pub(crate) const fn sg_size() -> usize {
    core::mem::size_of::<bindings::scatterlist>()
}

/// A debugfs directory, removed (with its files) on drop.
///
/// # Invariants
///
/// `self.0` is null or a directory created by `debugfs_create_dir`.
pub(crate) struct DebugfsDir(*mut bindings::dentry);

// SAFETY: debugfs calls may be made from any thread.
unsafe impl Send for DebugfsDir {}
// SAFETY: see `Send`.
unsafe impl Sync for DebugfsDir {}

impl DebugfsDir {
    /// No directory.
    pub(crate) const fn none() -> Self {
        Self(core::ptr::null_mut())
    }

    /// `debugfs_create_dir(name, parent)`; `None` parent means the root.
    pub(crate) fn create(name: &CStr, parent: Option<&DebugfsDir>) -> Self {
        let p = parent.map_or(core::ptr::null_mut(), |d| d.0);
        // SAFETY: `name` is a NUL-terminated string; `p` null or a directory
        // (type invariant), which outlives the call.
        let d = unsafe { bindings::debugfs_create_dir(name.as_char_ptr(), p) };
        // debugfs returns error pointers, which must not be used as parents.
        // SAFETY: `IS_ERR` only looks at the value.
        if d.is_null() || unsafe { bindings::IS_ERR(d.cast()) } {
            Self::none()
        } else {
            // INVARIANT: a directory created by debugfs.
            Self(d)
        }
    }

    /// Creates the driver's root directory, which disks' directories go in
    /// ([`DebugfsDir::create_in_root`]) until it drops.
    pub(crate) fn create_root() -> RootDir {
        let d = Self::create(c"rvirtio_blk", None);
        ROOT.store(d.0, Release);
        RootDir(d)
    }

    /// A directory `name` in the driver's root directory.
    pub(crate) fn create_in_root(name: &CStr) -> Self {
        let root = ROOT.load(Acquire);
        if root.is_null() {
            return Self::none();
        }
        // The root is removed after the driver is unregistered.
        // SAFETY: `name` is NUL-terminated; `root` outlives every device.
        let d = unsafe { bindings::debugfs_create_dir(name.as_char_ptr(), root) };
        // SAFETY: `IS_ERR` only looks at the value.
        if d.is_null() || unsafe { bindings::IS_ERR(d.cast()) } {
            Self::none()
        } else {
            // INVARIANT: a directory created by debugfs.
            Self(d)
        }
    }

    /// A read-only file showing `v`.
    ///
    /// # Safety
    ///
    /// `v` outlives this directory (the file is removed with it).
    pub(crate) unsafe fn u64_file(&self, name: *const kernel::ffi::c_char, v: &AtomicU64) {
        if self.0.is_null() {
            return;
        }
        // SAFETY: `self.0` is a directory; `v` outlives the file (caller);
        // debugfs reads the u64 with a plain load, fine for a counter.
        unsafe { bindings::debugfs_create_u64(name, 0o444, self.0, v.as_ptr()) };
    }

    /// Shows every counter of `s`.
    ///
    /// # Safety
    ///
    /// `s` outlives this directory.
    pub(crate) unsafe fn add_stats(&self, s: &Stats) {
        // SAFETY: per the caller.
        unsafe {
            self.u64_file(c"requests".as_char_ptr(), &s.requests);
            self.u64_file(c"chained".as_char_ptr(), &s.chained);
            self.u64_file(c"sg_bytes".as_char_ptr(), &s.sg_bytes);
            self.u64_file(c"sg_bytes_peak".as_char_ptr(), &s.sg_bytes_peak);
            self.u64_file(c"pdu_bytes".as_char_ptr(), &s.pdu_bytes);
            self.u64_file(c"inline_sg".as_char_ptr(), &s.inline_sg);
            self.u64_file(c"tagset_sg_bytes".as_char_ptr(), &s.tagset_sg_bytes);
            self.u64_file(c"queue_depth".as_char_ptr(), &s.queue_depth);
            self.u64_file(c"nr_hw_queues".as_char_ptr(), &s.nr_hw_queues);
            self.u64_file(c"ring_full".as_char_ptr(), &s.ring_full);
            self.u64_file(c"polled".as_char_ptr(), &s.polled);
        }
    }
}

/// A write-only debugfs file that calls `f(data)` on every write.
pub(crate) struct TriggerFops(core::cell::UnsafeCell<bindings::file_operations>);

// SAFETY: only read by debugfs after creation.
unsafe impl Sync for TriggerFops {}

impl TriggerFops {
    /// Operations calling `write` (which gets `file->private_data`).
    pub(crate) const fn new(
        write: unsafe extern "C" fn(
            *mut bindings::file,
            *const kernel::ffi::c_char,
            usize,
            *mut bindings::loff_t,
        ) -> isize,
    ) -> Self {
        // SAFETY: all-zero is a valid `file_operations` (no operations).
        let mut f: bindings::file_operations = unsafe { core::mem::zeroed() };
        f.open = Some(bindings::simple_open);
        f.write = Some(write);
        Self(core::cell::UnsafeCell::new(f))
    }
}

impl DebugfsDir {
    /// A write-only file `name` whose writes run `fops` with `data`.
    ///
    /// # Safety
    ///
    /// `data` stays valid for as long as this directory exists.
    pub(crate) unsafe fn trigger_file(
        &self,
        name: *const kernel::ffi::c_char,
        data: *mut core::ffi::c_void,
        fops: &'static TriggerFops,
    ) {
        if self.0.is_null() {
            return;
        }
        // (`debugfs_create_file()` is a macro picking `_full` for a
        // `struct file_operations`.)
        // SAFETY: `self.0` is a directory; `data` outlives the file (caller).
        unsafe {
            bindings::debugfs_create_file_full(
                name,
                0o200,
                self.0,
                data,
                core::ptr::null(),
                fops.0.get(),
            )
        };
    }
}

/// The driver's root directory; unpublished and removed on drop.
pub(crate) struct RootDir(#[expect(dead_code)] DebugfsDir);

impl Drop for RootDir {
    fn drop(&mut self) {
        ROOT.store(core::ptr::null_mut(), Release);
    }
}

impl Drop for DebugfsDir {
    fn drop(&mut self) {
        if !self.0.is_null() {
            // SAFETY: a directory we created (type invariant).
            unsafe { bindings::debugfs_remove(self.0) };
        }
    }
}
