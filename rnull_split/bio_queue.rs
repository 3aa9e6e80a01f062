// SPDX-License-Identifier: GPL-2.0

//! The bio-based path (`queue_mode=0`): the driver splits every bio that is
//! larger than the queue's limits itself, the way the block layer has done
//! since 2015, and serves the pieces.
//!
//! For each bio: find the split point against the queue's current
//! `max_sectors` (which `queue/max_sectors_kb` sets), `max_segments` and
//! `max_segment_size` (`common/split.rs`); if the bio does not fit, split
//! off the front piece, chain it to the bio, resubmit the rest of the bio
//! with `submit_bio_noacct` (it comes back here) and serve the piece. The
//! parent bio completes once every piece has.
//!
//! `split_clone` picks how the piece is made:
//! - `fast`: `bio_split()`, a clone sharing the parent's immutable bvec
//!   table: no bvec allocation or copy (the 2015 change);
//! - `deep`: as `bio_clone_bioset()` made split pieces before it: a new bio
//!   with a bvec table sized for all of the parent's remaining segments,
//!   every one copied, then trimmed to the piece and the parent advanced.
//!
//! A piece is served at once: its data moves (memory-backed devices), then
//! it ends, inline with `irqmode=0` and `1` (as old C null_blk's bio mode
//! did), or from a timer `completion_nsec` later with `irqmode=2`
//! ([`BioTimers`]).
//!
//! The disk takes `REQ_NOWAIT` bios (`BioOperations::NOWAIT`), so io_uring
//! and `RWF_NOWAIT` submit them inline instead of from a worker thread. Such
//! a bio must not sleep: one that needs a split ends with `EAGAIN`, as the
//! block layer ends it on a blk-mq disk (`bio_split_rw_at`), and so does one
//! that finds every `irqmode=2` timer busy or no memory for the store's
//! pages without waiting (`GFP_NOWAIT`). The submitter retries it without
//! `REQ_NOWAIT`.

use crate::{
    bad_sectors::BadBlockCheck,
    params::{DeviceConfig, IrqMode, SplitClone},
    split::{split_point_pages, SplitLimits, SplitPoint},
    stats::Stats,
    store::Store,
    timer::{self, BioTimers},
};
use kernel::{
    alloc::flags::{GFP_NOIO, GFP_NOWAIT},
    block::{
        bio::{BioOperations, BioSet, OwnedBio},
        mq::Command,
    },
    prelude::*,
    sync::{Arc, ArcBorrow},
};

/// `PAGE_SIZE`.
const PAGE_SIZE: u32 = kernel::page::PAGE_SIZE as u32;

/// Bios the driver's bio set can lend at once without waiting.
const BIOSET_POOL: u32 = 64;

/// Queue data of a bio-based device.
#[pin_data]
pub(crate) struct BioQueue {
    /// For `irqmode=2`. Dropping it waits for the bios in flight, so it goes
    /// first: their split pieces came from `bioset`.
    timers: Option<BioTimers>,
    #[pin]
    bioset: BioSet,
    split_clone: SplitClone,
    logical_block_size: u32,
    stats: Arc<Stats>,
    store: Option<Arc<Store>>,
    /// A configfs disk's `badblocks`.
    badblocks: Option<BadBlockCheck>,
}

impl BioQueue {
    pub(crate) fn new(
        config: &DeviceConfig,
        stats: Arc<Stats>,
        store: Option<Arc<Store>>,
        badblocks: Option<BadBlockCheck>,
    ) -> Result<impl PinInit<Self, Error>> {
        let split_clone = config.split_clone;
        let logical_block_size = config.block_size;
        let timers = match config.irqmode {
            // As many as a blk-mq device of this configuration has tags.
            IrqMode::Timer => Some(BioTimers::new(
                timer::delay(config.completion_nsec)?,
                config.submit_queues as usize * config.hw_queue_depth as usize,
            )?),
            IrqMode::None | IrqMode::Softirq => None,
        };
        Ok(try_pin_init!(Self {
            timers,
            bioset <- BioSet::new(BIOSET_POOL),
            split_clone,
            logical_block_size,
            stats,
            store,
            badblocks,
        }))
    }

    /// Serve one piece that fits the limits.
    fn serve(&self, bio: OwnedBio) {
        let nowait = bio.is_nowait();
        // Before anything moves: a `REQ_NOWAIT` bio that would wait for a
        // timer is handed back untouched.
        let timer = match self.timers.as_ref().map(|t| t.take(nowait)).transpose() {
            Ok(timer) => timer,
            Err(e) => return bio.end(Err(e)),
        };
        let bytes = bio.size();
        // As on a blk-mq disk: a bio that meets a bad range fails, after
        // the sectors before it with `badblocks_partial_io`.
        let bad = match bio.command() {
            Command::Read | Command::Write | Command::Discard | Command::WriteZeroes => self
                .badblocks
                .as_ref()
                .and_then(|bad| bad.meets(bio.sector(), u64::from(bio.size()) >> 9)),
            _ => None,
        };
        // `submit_bio` may sleep: wait for memory rather than fail, unless
        // the bio is `REQ_NOWAIT`.
        let gfp = if nowait { GFP_NOWAIT } else { GFP_NOIO };
        let status = match (&self.store, bad) {
            (Some(store), None) => store.transfer(&bio, gfp),
            (Some(store), Some(part)) => store.transfer_part(&bio, part, gfp).and(Err(EIO)),
            (None, None) => Ok(()),
            (None, Some(_)) => Err(EIO),
        };
        let status = match status {
            // Not served: the submitter retries it without `REQ_NOWAIT`, and
            // that is when it counts.
            Err(e) if nowait && e == ENOMEM => Err(EAGAIN),
            status => {
                self.stats.requests.inc();
                self.stats.bytes.add(bytes.into());
                status
            }
        };
        match timer {
            Some(timer) => timer.complete_later(bio, status),
            None => bio.end(status),
        }
    }
}

/// The bio-based operations of a [`crate::device::NullDevice`].
pub(crate) struct NullBio;

#[vtable]
impl BioOperations for NullBio {
    type QueueData = Arc<BioQueue>;

    /// Never sleeps on a `REQ_NOWAIT` bio (see the module documentation).
    const NOWAIT: bool = true;

    fn submit_bio(queue: ArcBorrow<'_, BioQueue>, mut bio: OwnedBio) {
        queue.stats.bios.inc();
        if !matches!(bio.command(), Command::Read | Command::Write) || bio.size() == 0 {
            // Flush, discard, write-zeroes: no data to split.
            return queue.serve(bio);
        }
        let limits = SplitLimits {
            max_sectors: bio.queue_max_sectors(),
            max_segments: bio.queue_max_segments(),
            max_segment_size: bio.queue_max_segment_size(),
            logical_block_size: queue.logical_block_size,
        };
        // The 2015 walk, over single pages (`bio_for_each_segment`), taking
        // each multi-page segment whose pages all fit at once.
        let bvecs = bio.segments().map(|s| (s.offset(), s.len()));
        let sectors = match split_point_pages(bvecs, PAGE_SIZE, &limits) {
            SplitPoint::Fits => return queue.serve(bio),
            // As the block layer does: a split may wait for a bio.
            SplitPoint::At(_) if bio.is_nowait() => return bio.end(Err(EAGAIN)),
            SplitPoint::At(sectors) => sectors,
            SplitPoint::Impossible => return bio.end(Err(EIO)),
        };
        let piece = match queue.split_clone {
            SplitClone::Fast => bio.split(sectors, &queue.bioset),
            SplitClone::Deep => bio.split_deep(sectors, &queue.bioset),
        };
        match piece {
            Ok(piece) => {
                queue.stats.splits.inc();
                match queue.split_clone {
                    SplitClone::Fast => queue.stats.fast_clones.inc(),
                    SplitClone::Deep => queue.stats.deep_clones.inc(),
                }
                // The rest comes back through `submit_bio` once we return.
                bio.submit_noacct();
                queue.serve(piece);
            }
            Err(e) => bio.end(Err(e)),
        }
    }
}
