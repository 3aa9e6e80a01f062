// SPDX-License-Identifier: GPL-2.0

//! Bad sector ranges, for C null_blk's configfs `badblocks`,
//! `badblocks_once` and `badblocks_partial_io`: the list the kernel's
//! `badblocks` library (block/badblocks.c) keeps for C null_blk, what a
//! request that meets a bad range does, and the attribute's text.
//!
//! - `echo +START-END > badblocks` marks sectors START..=END bad (512-byte
//!   sectors; numbers as `kstrtoull(.., 0)`: decimal, `0x` hex, `0` octal);
//!   `-START-END` clears them. Overlapping and adjacent ranges merge.
//! - `cat badblocks` shows one `START LENGTH` line per range, in pieces of
//!   at most [`MAX_PIECE`] sectors, as the kernel's list stores them.
//! - A request that touches a bad range fails with an I/O error. With
//!   `badblocks_once` the range it met is cleared (the next try succeeds);
//!   with `badblocks_partial_io` the sectors before the bad one, rounded
//!   down to the block size, are transferred first ([`partial_sectors`]).
//!
//! The list has room for as many ranges as its storage (a slice the caller
//! allocates: [`MAX_RANGES`], the kernel's page of entries, for null_blk);
//! a change that does not fit is refused and changes nothing.
//!
//! No kernel dependencies: the host unit tests compile this file.

use crate::params::kstrtoull;

/// Ranges the list holds at most (C's `MAX_BADBLOCKS`, a page of entries).
pub const MAX_RANGES: usize = 512;

/// The longest piece `badblocks` shows on one line (C's `BB_MAX_LEN`).
pub const MAX_PIECE: u64 = 512;

/// Sectors `start..start + len`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Range {
    /// The first sector.
    pub start: u64,
    /// The number of sectors, at least 1.
    pub len: u64,
}

impl Range {
    /// One past the last sector.
    pub const fn end(&self) -> u64 {
        self.start.saturating_add(self.len)
    }
}

/// Sorted, disjoint, non-adjacent bad ranges, in `S`: the first `count`
/// entries of its slice, whose length is the capacity.
pub struct BadBlocks<S> {
    ranges: S,
    count: usize,
}

impl<S: core::ops::DerefMut<Target = [Range]>> BadBlocks<S> {
    /// An empty list in `storage`, with room for as many ranges as it has
    /// entries (their values do not matter).
    pub fn new(storage: S) -> Self {
        Self {
            ranges: storage,
            count: 0,
        }
    }

    /// The ranges, in order.
    pub fn ranges(&self) -> &[Range] {
        &self.ranges[..self.count]
    }

    /// Whether no sector is bad.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The index of the first range that ends at or after `sector`.
    fn first_ending_at_or_after(&self, sector: u64) -> usize {
        self.ranges().partition_point(|r| r.end() < sector)
    }

    /// Replace the ranges `i..j` by `new` (at most two), keeping the order.
    /// `false`, changing nothing, if the result would not fit.
    fn splice(&mut self, i: usize, j: usize, new: &[Range]) -> bool {
        let count = self.count - (j - i) + new.len();
        if count > self.ranges.len() {
            return false;
        }
        self.ranges.copy_within(j..self.count, i + new.len());
        self.ranges[i..i + new.len()].copy_from_slice(new);
        self.count = count;
        true
    }

    /// Mark `len` sectors from `start` bad, merging them with the ranges
    /// they overlap or touch. `false` if there is no room (nothing changes);
    /// nothing to do for `len == 0`.
    pub fn set(&mut self, start: u64, len: u64) -> bool {
        if len == 0 {
            return true;
        }
        let mut new = Range { start, len };
        let end = new.end();
        // Ranges `i..j` overlap or touch `start..end`.
        let i = self.first_ending_at_or_after(start);
        let j = i + self.ranges[i..self.count].partition_point(|r| r.start <= end);
        if i < j {
            let lo = self.ranges[i].start.min(start);
            let hi = self.ranges[j - 1].end().max(end);
            new = Range {
                start: lo,
                len: hi - lo,
            };
        }
        self.splice(i, j, &[new])
    }

    /// Clear `len` sectors from `start`, splitting a range that goes on
    /// both sides. `false` if a split does not fit (nothing changes).
    pub fn clear(&mut self, start: u64, len: u64) -> bool {
        if len == 0 {
            return true;
        }
        let end = start.saturating_add(len);
        // Ranges `i..j` overlap `start..end` (touching is not enough).
        let i = self.ranges().partition_point(|r| r.end() <= start);
        let j = i + self.ranges[i..self.count].partition_point(|r| r.start < end);
        if i == j {
            return true;
        }
        let (first, last) = (self.ranges[i], self.ranges[j - 1]);
        let mut keep = [Range::default(); 2];
        let mut n = 0;
        if first.start < start {
            keep[n] = Range {
                start: first.start,
                len: start - first.start,
            };
            n += 1;
        }
        if last.end() > end {
            keep[n] = Range {
                start: end,
                len: last.end() - end,
            };
            n += 1;
        }
        self.splice(i, j, &keep[..n])
    }

    /// The first bad range that `sectors` sectors from `sector` touch, whole
    /// (it may begin before `sector`), as `badblocks_check()` reports it.
    pub fn check(&self, sector: u64, sectors: u64) -> Option<Range> {
        if sectors == 0 {
            return None;
        }
        let end = sector.saturating_add(sectors);
        let i = self.ranges().partition_point(|r| r.end() <= sector);
        self.ranges().get(i).copied().filter(|r| r.start < end)
    }

    /// The lines `cat badblocks` shows, in order: each range in pieces of
    /// at most [`MAX_PIECE`] sectors, `(start, len)`.
    pub fn pieces(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.ranges().iter().flat_map(|r| {
            let n = r.len.div_ceil(MAX_PIECE);
            (0..n).map(move |k| {
                let start = r.start + k * MAX_PIECE;
                (start, (r.end() - start).min(MAX_PIECE))
            })
        })
    }
}

/// A change written to `badblocks`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// `+START-END`: mark bad.
    Set(Range),
    /// `-START-END`: clear.
    Clear(Range),
}

/// Parse what is written to `badblocks` (white space around it already
/// trimmed): `+START-END` or `-START-END`, `START <= END`. `None` for
/// anything else, which C null_blk refuses with `EINVAL`.
pub fn parse_change(text: &str) -> Option<Change> {
    let set = match text.as_bytes().first()? {
        b'+' => true,
        b'-' => false,
        _ => return None,
    };
    let (start, end) = text[1..].split_once('-')?;
    let (start, end) = (kstrtoull(start)?, kstrtoull(end)?);
    if start > end {
        return None;
    }
    // END is inclusive; the last sector cannot be marked (its range would
    // not end), as sectors are counted below the device size anyway.
    let range = Range {
        start,
        len: (end - start).checked_add(1)?,
    };
    Some(if set {
        Change::Set(range)
    } else {
        Change::Clear(range)
    })
}

/// How many sectors from `sector` a request that met bad range `bad`
/// transfers before it fails: with `partial_io`, those before the first bad
/// sector rounded down to a block of `block_sectors`; otherwise none.
pub fn partial_sectors(sector: u64, bad: Range, block_sectors: u64, partial_io: bool) -> u64 {
    if !partial_io {
        return 0;
    }
    let block = block_sectors.max(1);
    let first_bad = bad.start - bad.start % block;
    first_bad.saturating_sub(sector)
}
