// SPDX-License-Identifier: GPL-2.0

//! C null_blk's `mbps`: a disk's bandwidth limit in MiB/s.
//!
//! As in C null_blk, time runs in ticks of 20 ms ([`TICK_NS`]), and each
//! tick has a budget of `mbps` MiB/s worth of bytes ([`bytes_per_tick`]).
//! A request is admitted while the budget is positive and takes its bytes
//! from it; one that finds it spent waits for a later tick (the driver
//! hands it back busy, and blk-mq issues it again). Unlike C, which resets
//! the budget every tick, a request larger than a tick's budget leaves its
//! debt to the next ticks, so that the rate holds for any request size (C
//! would never admit such a request).
//!
//! No kernel dependencies: the host unit tests compile this file.

use core::sync::atomic::{AtomicI64, AtomicU64, Ordering};

/// Ticks per second, C's `TICKS_PER_SEC`.
pub const TICKS_PER_SEC: u64 = 50;
/// One tick in nanoseconds, C's `TIMER_INTERVAL`.
pub const TICK_NS: u64 = 1_000_000_000 / TICKS_PER_SEC;
/// The largest `mbps` C null_blk takes (40 GiB/s).
pub const MAX_MBPS: u32 = 40 * 1024;

/// The budget of one tick, C's `mb_per_tick()`.
pub const fn bytes_per_tick(mbps: u32) -> i64 {
    ((1u64 << 20) / TICKS_PER_SEC * mbps as u64) as i64
}

/// The bandwidth limit of one disk.
pub struct Throttle {
    per_tick: i64,
    /// The tick the budget was last refilled for.
    tick: AtomicU64,
    /// Bytes left in this tick; negative: owed by a large request.
    budget: AtomicI64,
}

impl Throttle {
    /// A limit of `mbps` MiB/s (1 to [`MAX_MBPS`]), its first tick full.
    pub fn new(mbps: u32) -> Self {
        let per_tick = bytes_per_tick(mbps);
        Self {
            per_tick,
            tick: AtomicU64::new(0),
            budget: AtomicI64::new(per_tick),
        }
    }

    /// Whether a request of `bytes` may go now, `now_ns` nanoseconds after
    /// the throttle was made; an admitted request takes its bytes from the
    /// budget.
    pub fn admit(&self, bytes: u64, now_ns: u64) -> bool {
        let tick = now_ns / TICK_NS;
        let seen = self.tick.load(Ordering::Relaxed);
        if tick > seen
            && self
                .tick
                .compare_exchange(seen, tick, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            // One refill per tick elapsed, up to a full tick's budget.
            let ticks = i64::try_from(tick - seen).unwrap_or(i64::MAX);
            let add = ticks.saturating_mul(self.per_tick);
            let _ = self
                .budget
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| {
                    Some(b.saturating_add(add).min(self.per_tick))
                });
        }
        let bytes = i64::try_from(bytes).unwrap_or(i64::MAX);
        if self.budget.load(Ordering::Relaxed) <= 0 {
            return false;
        }
        self.budget.fetch_sub(bytes, Ordering::Relaxed);
        true
    }
}
