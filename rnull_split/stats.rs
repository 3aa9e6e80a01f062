// SPDX-License-Identifier: GPL-2.0

//! Per-device counters, shown in debugfs (`/sys/kernel/debug/rnull_split/<disk>/`).

use core::sync::atomic::{AtomicU64, Ordering};

/// What a device has seen. Relaxed atomics: each counter is exact, and they
/// are read only after the I/O they count has completed.
#[derive(Default)]
pub(crate) struct Stats {
    /// Bios that reached `submit_bio` (bio mode), remainders after a split
    /// included.
    pub(crate) bios: AtomicU64,
    /// Splits made by the driver (bio mode).
    pub(crate) splits: AtomicU64,
    /// Split pieces made with `bio_split()` (shared bvec table).
    pub(crate) fast_clones: AtomicU64,
    /// Split pieces made as pre-2015 deep clones (bvec table copied).
    pub(crate) deep_clones: AtomicU64,
    /// Units of I/O served: blk-mq requests, or bio pieces in bio mode.
    pub(crate) requests: AtomicU64,
    /// Bytes of data served (reads and writes).
    pub(crate) bytes: AtomicU64,
    /// Requests completed by polling a poll queue (`poll_queues`).
    pub(crate) polled: AtomicU64,
    /// Requests given back to be issued again (`requeue` injection).
    pub(crate) requeued: AtomicU64,
    /// Requests ended with `ETIMEDOUT` (`timeout` injection).
    pub(crate) timed_out: AtomicU64,
    /// Requests handed back to wait for bandwidth (`mbps`).
    pub(crate) throttled: AtomicU64,
    /// Flush requests served (`cache_size`: the cache went to the store).
    pub(crate) flushes: AtomicU64,
    /// Cache pages written back to the store (`cache_size`): to make room,
    /// or by a flush.
    pub(crate) cache_writebacks: AtomicU64,
}

impl Stats {
    /// Count one event.
    #[inline(always)]
    pub(crate) fn inc(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Add `n` to a counter.
    #[inline(always)]
    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    /// Every counter with its debugfs file name.
    pub(crate) fn named(&self) -> [(&'static kernel::str::CStr, &AtomicU64); 12] {
        [
            (c"bios", &self.bios),
            (c"splits", &self.splits),
            (c"fast_clones", &self.fast_clones),
            (c"deep_clones", &self.deep_clones),
            (c"requests", &self.requests),
            (c"bytes", &self.bytes),
            (c"polled", &self.polled),
            (c"requeued", &self.requeued),
            (c"timed_out", &self.timed_out),
            (c"throttled", &self.throttled),
            (c"flushes", &self.flushes),
            (c"cache_writebacks", &self.cache_writebacks),
        ]
    }
}
