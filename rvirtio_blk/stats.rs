// SPDX-License-Identifier: GPL-2.0

//! SG memory counters, shown in debugfs under
//! `/sys/kernel/debug/rvirtio_blk/<disk>/`, each a read-only file holding a
//! decimal number and a newline:
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
//!
//! The counters that move with every I/O (`requests`, `polled`,
//! `vqN_requests`, and `chained` for requests of more than two segments) are
//! kept per CPU ([`PerCpuCounter`]): counting is one unlocked instruction on
//! the local CPU's copy, with no cache line shared between the CPUs that
//! submit and complete I/O; a read sums the copies. `sg_bytes` and
//! `sg_bytes_peak` are one shared `AtomicU64` each, because a peak of the sum
//! needs the sum: they move only for requests with a chained table, which
//! take SG pool memory anyway;
//! - `break_device` (write-only, for tests): marks the device broken like a
//!   surprise removal does (`virtio_break_device`), so that requests in
//!   flight are never answered and `remove` has to end them.
//!
//! The files are made with `kernel::debugfs`:
//!
//! 1. module init makes the driver's directory `/sys/kernel/debug/rvirtio_blk`
//!    ([`Root::new`]) before it registers the driver, and drops the [`Root`]
//!    after unregistering it;
//! 2. probe makes a disk's directory in it with [`DiskDir::new`], from the
//!    disk's name and the device's shared state, which says what to show and
//!    what a write to `break_device` does ([`Shown`]);
//! 3. dropping the [`DiskDir`] removes the directory and its files (waiting
//!    for reads and writes in progress), then drops its reference to the
//!    state. The driver's directory goes when the [`Root`] and every
//!    [`DiskDir`] have.
//!
//! As everywhere in debugfs, failures are not errors: a directory or file
//! that could not be made is just missing (with a warning when memory ran
//! out), and probe goes on.

use crate::sg_plan;
use core::sync::atomic::{
    AtomicU64, AtomicU8,
    Ordering::{Acquire, Relaxed, Release},
};
use kernel::{
    debugfs::{self, Scope, ScopedDir},
    fmt,
    percpu::PerCpuCounter,
    prelude::*,
    str::CString,
    sync::{global_lock, Arc, GlobalLock},
    uaccess::UserSliceReader,
};

/// The counters of one disk.
pub(crate) struct Stats {
    /// Data requests mapped.
    pub(crate) requests: PerCpuCounter,
    /// Requests that needed a chained table.
    pub(crate) chained: PerCpuCounter,
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
    pub(crate) polled: PerCpuCounter,
}

impl Stats {
    /// Every counter at zero.
    pub(crate) fn new() -> Result<Self> {
        Ok(Self {
            requests: PerCpuCounter::new(GFP_KERNEL)?,
            chained: PerCpuCounter::new(GFP_KERNEL)?,
            sg_bytes: AtomicU64::new(0),
            sg_bytes_peak: AtomicU64::new(0),
            pdu_bytes: AtomicU64::new(0),
            inline_sg: AtomicU64::new(0),
            tagset_sg_bytes: AtomicU64::new(0),
            queue_depth: AtomicU64::new(0),
            nr_hw_queues: AtomicU64::new(0),
            ring_full: AtomicU64::new(0),
            polled: PerCpuCounter::new(GFP_KERNEL)?,
        })
    }

    /// Accounts a request mapped with `nents` segments. Returns the SG pool
    /// bytes its chained table holds (0 if it has none), which the request
    /// keeps for [`Stats::unmapped`]: the table's size is worked out once
    /// per request, not again at its completion.
    pub(crate) fn mapped(&self, nents: u32, first_chunk: u32) -> u64 {
        self.requests.inc();
        if !sg_plan::needs_chained_table(nents, first_chunk) {
            return 0;
        }
        self.chained.inc();
        let b = sg_plan::chained_table_bytes(nents, first_chunk, sg_size());
        let now = self.sg_bytes.fetch_add(b, Relaxed) + b;
        // A new peak is rare: a plain load first spares the locked update.
        if now > self.sg_bytes_peak.load(Relaxed) {
            self.sg_bytes_peak.fetch_max(now, Relaxed);
        }
        b
    }

    /// Accounts the release of a request's chained table of `bytes` SG pool
    /// bytes, as [`Stats::mapped`] returned them.
    pub(crate) fn unmapped(&self, bytes: u64) {
        if bytes != 0 {
            self.sg_bytes.fetch_sub(bytes, Relaxed);
        }
    }

    /// The per-CPU counters with their debugfs file names.
    fn per_cpu(&self) -> [(&'static CStr, &PerCpuCounter); 3] {
        [
            (c"requests", &self.requests),
            (c"chained", &self.chained),
            (c"polled", &self.polled),
        ]
    }

    /// The other counters with their debugfs file names.
    fn shared(&self) -> [(&'static CStr, &AtomicU64); 8] {
        [
            (c"sg_bytes", &self.sg_bytes),
            (c"sg_bytes_peak", &self.sg_bytes_peak),
            (c"pdu_bytes", &self.pdu_bytes),
            (c"inline_sg", &self.inline_sg),
            (c"tagset_sg_bytes", &self.tagset_sg_bytes),
            (c"queue_depth", &self.queue_depth),
            (c"nr_hw_queues", &self.nr_hw_queues),
            (c"ring_full", &self.ring_full),
        ]
    }
}

/// `sizeof(struct scatterlist)`: `SGEntry` is a transparent wrapper of it.
pub(crate) const fn sg_size() -> usize {
    core::mem::size_of::<kernel::scatterlist::SGEntry>()
}

/// What a disk's debugfs directory shows and does: implemented by the
/// device's shared state.
pub(crate) trait Shown: Send + Sync + 'static {
    /// The disk's counters.
    fn stats(&self) -> &Stats;

    /// The requests submitted on each virtqueue, in order (`vqN_requests`).
    fn vq_requests(&self) -> impl Iterator<Item = &PerCpuCounter>;

    /// A write to `break_device`: called only by the file (see
    /// [`BreakWrite`]), so only while the [`DiskDir`] showing `self` exists
    /// (dropping it waits for writes in progress).
    fn break_device(&self, write: &BreakWrite);
}

/// A write to a `break_device` file in progress: only that file's write
/// makes one, so [`Shown::break_device`] runs nowhere else.
pub(crate) struct BreakWrite(());

global_lock! {
    // SAFETY: `root()` hands the lock out only after `Root::new` has
    // initialised it.
    unsafe(uninit) static ROOT: Mutex<Option<debugfs::Dir>> = None;
}

/// `ROOT` is not initialised yet.
const UNINIT: u8 = 0;
/// `ROOT` is being initialised.
const BUSY: u8 = 1;
/// `ROOT` is initialised.
const READY: u8 = 2;

/// The state of `ROOT`: `UNINIT`, `BUSY` or `READY`.
static ROOT_STATE: AtomicU8 = AtomicU8::new(UNINIT);

/// The lock holding the driver's directory, once initialised.
fn root() -> Option<&'static GlobalLock<ROOT>> {
    (ROOT_STATE.load(Acquire) == READY).then_some(&ROOT)
}

/// The driver's directory, `/sys/kernel/debug/rvirtio_blk`: made by module
/// init before it registers the driver, dropped after it unregisters it, so
/// that every probe finds it. Disks' directories ([`DiskDir`]) go in it.
pub(crate) struct Root(());

impl Root {
    /// Creates `/sys/kernel/debug/rvirtio_blk` (made once, by module init).
    pub(crate) fn new() -> Self {
        if ROOT_STATE
            .compare_exchange(UNINIT, BUSY, Acquire, Relaxed)
            .is_ok()
        {
            // Only the one caller that moved `ROOT_STATE` from `UNINIT` gets
            // here; nothing locks `ROOT` before `ROOT_STATE` is `READY`.
            // SAFETY: So this runs once, before any use of the lock.
            unsafe { ROOT.init() };
            ROOT_STATE.store(READY, Release);
        }
        if let Some(root) = root() {
            *root.lock() = Some(debugfs::Dir::new(c"rvirtio_blk"));
        }
        Self(())
    }
}

impl Drop for Root {
    fn drop(&mut self) {
        // Removed outside the lock, once the last disk's directory has gone
        // too.
        let dir = root().and_then(|root| root.lock().take());
        drop(dir);
    }
}

/// A disk's directory in the driver's: dropping it removes the directory
/// and its files, then drops the reference to the state they show.
pub(crate) struct DiskDir<T: Shown> {
    /// `None` when there is no driver's directory or no memory for this one.
    _scope: Option<Pin<KBox<Scope<Arc<T>>>>>,
}

/// Shows one counter as C's `debugfs_create_u64` does: `%llu\n`.
fn show(counter: &AtomicU64, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    writeln!(f, "{}", counter.load(Relaxed))
}

/// Shows the sum of a per-CPU counter, likewise.
fn show_sum(counter: &PerCpuCounter, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    writeln!(f, "{}", counter.sum())
}

/// A write to `break_device`, whatever was written.
fn break_write<T: Shown>(state: &T, _data: &mut UserSliceReader) -> Result {
    state.break_device(&BreakWrite(()));
    Ok(())
}

/// Fills a disk's directory (see the module documentation).
fn fill<'data, T: Shown>(state: &'data T, dir: &ScopedDir<'data, '_>) {
    for (file, counter) in state.stats().per_cpu() {
        dir.read_callback_file(file, counter, &show_sum);
    }
    for (file, counter) in state.stats().shared() {
        dir.read_callback_file(file, counter, &show);
    }
    for (i, counter) in state.vq_requests().enumerate() {
        // (debugfs copies the name.)
        if let Ok(file) = CString::try_from_fmt(fmt!("vq{i}_requests")) {
            dir.read_callback_file(&file, counter, &show_sum);
        }
    }
    dir.write_only_callback_file(c"break_device", state, &break_write::<T>);
}

impl<T: Shown> DiskDir<T> {
    /// Creates directory `name` in the driver's, showing `state`.
    pub(crate) fn new(name: impl fmt::Display, state: Arc<T>) -> Self {
        let Some(parent) = root().and_then(|root| root.lock().clone()) else {
            return Self { _scope: None };
        };
        let Ok(cname) = CString::try_from_fmt(fmt!("{name}")) else {
            pr_warn!("{}: debugfs directory not created: no memory\n", name);
            return Self { _scope: None };
        };
        let scope = KBox::pin_init(
            parent.scope(state, &cname, |state, dir| fill(&**state, dir)),
            GFP_KERNEL,
        );
        Self {
            _scope: scope
                .inspect_err(|e| pr_warn!("{}: debugfs directory not created: {:?}\n", name, e))
                .ok(),
        }
    }
}
