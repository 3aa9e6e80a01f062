// SPDX-License-Identifier: GPL-2.0

//! A configfs disk's `badblocks` (C null_blk's): the table of records of
//! `common/badblocks.rs` under a lock, shared by the configfs directory,
//! which changes it at any time, and the disk, which checks each request
//! against it.

use crate::badblocks::{parse_change, partial_sectors, BadBlocks, Change, Range, MAX_RANGES};
use core::sync::atomic::{AtomicBool, Ordering};
use kernel::{
    block::mq::{Command, Operations, Request},
    fmt::Write,
    new_spinlock,
    prelude::*,
    sync::{Arc, SpinLock},
};

/// The bad records of a disk.
#[pin_data]
pub(crate) struct BadSectors {
    /// Set once a change has been written (C: `badblocks.shift != -1`);
    /// until then requests do not take the lock.
    enabled: AtomicBool,
    #[pin]
    list: SpinLock<BadBlocks<KVec<Range>>>,
}

impl BadSectors {
    /// An empty table, with room for C's [`MAX_RANGES`] records.
    pub(crate) fn new() -> Result<Arc<Self>> {
        let storage = KVec::from_elem(Range::default(), MAX_RANGES, GFP_KERNEL)?;
        Arc::pin_init(
            pin_init!(Self {
                enabled: AtomicBool::new(false),
                list <- new_spinlock!(BadBlocks::new(storage), "rnull_split:badblocks"),
            }),
            GFP_KERNEL,
        )
    }

    /// Apply `text` written to `badblocks` (`+START-END` or `-START-END`).
    /// `EINVAL` for other text, or if the table has no room for the change,
    /// as C null_blk (a set keeps the records it stored before the table
    /// filled up; a clear that would split a record changes nothing).
    pub(crate) fn change(&self, text: &str) -> Result {
        let change = parse_change(text).ok_or(EINVAL)?;
        let mut list = self.list.lock();
        let done = match change {
            Change::Set(r) => list.set(r.start, r.len),
            Change::Clear(r) => list.clear(r.start, r.len),
        };
        self.enabled.store(true, Ordering::Relaxed);
        if done {
            Ok(())
        } else {
            Err(EINVAL)
        }
    }

    /// Write what `cat badblocks` shows: a `START LENGTH` line per record,
    /// as long as `out` has room.
    pub(crate) fn show(&self, out: &mut impl Write) {
        let list = self.list.lock();
        for r in list.ranges() {
            if writeln!(out, "{} {}", r.start, r.len).is_err() {
                break;
            }
        }
    }
}

/// How a disk's requests meet its bad records: its table and the
/// `badblocks_once` and `badblocks_partial_io` it was made with.
pub(crate) struct BadBlockCheck {
    list: Arc<BadSectors>,
    once: bool,
    partial_io: bool,
    block_sectors: u64,
}

impl BadBlockCheck {
    pub(crate) fn new(
        list: Arc<BadSectors>,
        once: bool,
        partial_io: bool,
        block_size: u32,
    ) -> Self {
        Self {
            list,
            once,
            partial_io,
            block_sectors: u64::from(block_size / 512),
        }
    }

    /// Whether `sectors` sectors from `sector` touch a bad record: `None` if
    /// not, otherwise how many of them to transfer before the request fails
    /// with an I/O error (C null_blk's `null_handle_badblocks()`). With
    /// `badblocks_once` the first record met, and only it, is cleared (C:
    /// `badblocks_clear(bb, first_bad, bad_sectors)`): the other records of
    /// a range written at once stay bad.
    #[inline]
    pub(crate) fn meets(&self, sector: u64, sectors: u64) -> Option<u64> {
        if !self.list.enabled.load(Ordering::Relaxed) {
            return None;
        }
        let mut list = self.list.list.lock();
        let bad = list.check(sector, sectors)?;
        if self.once {
            // Deleting a whole record needs no room: this cannot fail.
            list.clear(bad.start, bad.len);
        }
        Some(partial_sectors(
            sector,
            bad,
            self.block_sectors,
            self.partial_io,
        ))
    }

    /// [`Self::meets`] for the sectors of `rq`, if C null_blk checks its
    /// operation: reads, writes, discards and write zeroes, not flushes or
    /// zone management (a zoned disk's writes are checked at the write
    /// pointer, `zones.rs`).
    #[inline]
    pub(crate) fn meets_rq<T: Operations>(&self, rq: &Request<T>) -> Option<u64> {
        match rq.command() {
            Command::Read | Command::Write | Command::Discard | Command::WriteZeroes => {
                self.meets(rq.sector(), rq.sectors().into())
            }
            _ => None,
        }
    }
}
