// SPDX-License-Identifier: GPL-2.0

//! Per-device counters, shown in debugfs (`/sys/kernel/debug/rnull_split/<disk>/`).

use kernel::{percpu::PerCpuCounter, prelude::*};

/// What a device has seen. Each counter is kept per CPU, as C drivers keep
/// statistics: counting is one unlocked instruction on the local CPU's copy,
/// with no cache line shared between the CPUs that submit I/O (a shared
/// `AtomicU64` would cost a locked read-modify-write of a line that moves
/// between them on every I/O). A debugfs read sums the copies; each counter
/// is exact once the I/O it counts has completed.
pub(crate) struct Stats {
    /// Bios that reached `submit_bio` (bio mode), remainders after a split
    /// included.
    pub(crate) bios: PerCpuCounter,
    /// Splits made by the driver (bio mode).
    pub(crate) splits: PerCpuCounter,
    /// Split pieces made with `bio_split()` (shared bvec table).
    pub(crate) fast_clones: PerCpuCounter,
    /// Split pieces made as pre-2015 deep clones (bvec table copied).
    pub(crate) deep_clones: PerCpuCounter,
    /// Units of I/O served: blk-mq requests, or bio pieces in bio mode.
    pub(crate) requests: PerCpuCounter,
    /// Bytes of data served (reads and writes).
    pub(crate) bytes: PerCpuCounter,
    /// Requests completed by polling a poll queue (`poll_queues`).
    pub(crate) polled: PerCpuCounter,
    /// Requests given back to be issued again (`requeue` injection).
    pub(crate) requeued: PerCpuCounter,
    /// Requests ended with `ETIMEDOUT` (`timeout` injection).
    pub(crate) timed_out: PerCpuCounter,
    /// Requests handed back to wait for bandwidth (`mbps`).
    pub(crate) throttled: PerCpuCounter,
    /// Flush requests served (`cache_size`: the cache went to the store).
    pub(crate) flushes: PerCpuCounter,
    /// Cache pages written back to the store (`cache_size`): to make room,
    /// or by a flush.
    pub(crate) cache_writebacks: PerCpuCounter,
}

impl Stats {
    /// Every counter at zero.
    pub(crate) fn new() -> Result<Self> {
        Ok(Self {
            bios: PerCpuCounter::new(GFP_KERNEL)?,
            splits: PerCpuCounter::new(GFP_KERNEL)?,
            fast_clones: PerCpuCounter::new(GFP_KERNEL)?,
            deep_clones: PerCpuCounter::new(GFP_KERNEL)?,
            requests: PerCpuCounter::new(GFP_KERNEL)?,
            bytes: PerCpuCounter::new(GFP_KERNEL)?,
            polled: PerCpuCounter::new(GFP_KERNEL)?,
            requeued: PerCpuCounter::new(GFP_KERNEL)?,
            timed_out: PerCpuCounter::new(GFP_KERNEL)?,
            throttled: PerCpuCounter::new(GFP_KERNEL)?,
            flushes: PerCpuCounter::new(GFP_KERNEL)?,
            cache_writebacks: PerCpuCounter::new(GFP_KERNEL)?,
        })
    }

    /// Every counter with its debugfs file name.
    pub(crate) fn named(&self) -> [(&'static kernel::str::CStr, &PerCpuCounter); 12] {
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
