// SPDX-License-Identifier: GPL-2.0

//! Bad sector ranges, for C null_blk's configfs `badblocks`,
//! `badblocks_once` and `badblocks_partial_io`: the table of records the
//! kernel's `badblocks` library (block/badblocks.c) keeps for C null_blk,
//! what a request that meets a bad record does, and the attribute's text.
//!
//! - `echo +START-END > badblocks` marks sectors START..=END bad (512-byte
//!   sectors; numbers as `kstrtoull(.., 0)`: decimal, `0x` hex, `0` octal);
//!   `-START-END` clears them.
//! - The table holds records of at most [`MAX_LEN`] sectors (C's
//!   `BB_MAX_LEN`), sorted and disjoint, laid out as `badblocks_set()` and
//!   `badblocks_clear()` lay them out: a range longer than [`MAX_LEN`] is
//!   stored as several records, a range that overlaps or touches a record
//!   grows it up to [`MAX_LEN`] sectors and goes on in a new record, two
//!   touching records are joined when they fit in one, and a clear trims or
//!   splits records but never joins them.
//! - `cat badblocks` shows one `START LENGTH` line per record.
//! - A request that touches a bad record fails with an I/O error, and
//!   `badblocks_check()` reports the first record it touches. With
//!   `badblocks_once` that record, and only it, is cleared: the rest of a
//!   range written at once stays bad. With `badblocks_partial_io` the sectors
//!   before the record, rounded down to the block size, are transferred
//!   first ([`partial_sectors`]).
//!
//! The table has room for as many records as its storage (a slice the
//! caller allocates: [`MAX_RANGES`], the kernel's page of entries, for
//! null_blk). As in C, a set stops when the table is full (what was stored
//! until then stays) and a clear that would split a record of a full table
//! does nothing; both then report failure.
//!
//! All records are acknowledged (null_blk sets them so), which leaves out
//! the library's cases for unacknowledged records.
//!
//! No kernel dependencies: the host unit tests compile this file.

use crate::params::kstrtoull;

/// Records the table holds at most (C's `MAX_BADBLOCKS`, a page of entries).
pub const MAX_RANGES: usize = 512;

/// The most sectors one record holds (C's `BB_MAX_LEN`).
pub const MAX_LEN: u64 = 512;

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

/// Sorted, disjoint records of 1..=[`MAX_LEN`] sectors, in `S`: the first
/// `count` entries of its slice, whose length is the capacity.
pub struct BadBlocks<S> {
    ranges: S,
    count: usize,
}

impl<S: core::ops::DerefMut<Target = [Range]>> BadBlocks<S> {
    /// An empty table in `storage`, with room for as many records as it has
    /// entries (their values do not matter).
    pub fn new(storage: S) -> Self {
        Self {
            ranges: storage,
            count: 0,
        }
    }

    /// The records, in order.
    pub fn ranges(&self) -> &[Range] {
        &self.ranges[..self.count]
    }

    /// Whether no sector is bad.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Whether there is no room for another record.
    fn is_full(&self) -> bool {
        self.count >= self.ranges.len()
    }

    /// The index of the last record that starts at or before `sector`.
    fn last_starting_by(&self, sector: u64) -> Option<usize> {
        self.ranges()
            .partition_point(|r| r.start <= sector)
            .checked_sub(1)
    }

    /// The first sector of record `i`, if there is one.
    fn start_of(&self, i: usize) -> Option<u64> {
        self.ranges().get(i).map(|r| r.start)
    }

    /// Put `r` at index `i`; there must be room.
    fn insert(&mut self, i: usize, r: Range) {
        self.ranges.copy_within(i..self.count, i + 1);
        self.ranges[i] = r;
        self.count += 1;
    }

    /// Take out record `i`.
    fn remove(&mut self, i: usize) {
        self.ranges.copy_within(i + 1..self.count, i);
        self.count -= 1;
    }

    /// Join records `i` and `i + 1` if they touch and fit in one record.
    /// Whether it did.
    fn join_with_next(&mut self, i: usize) -> bool {
        let (Some(a), Some(b)) = (self.ranges().get(i).copied(), self.ranges().get(i + 1)) else {
            return false;
        };
        if a.end() != b.start || a.len + b.len > MAX_LEN {
            return false;
        }
        self.ranges[i].len += b.len;
        self.remove(i + 1);
        true
    }

    /// Mark `len` sectors from `start` bad, as `badblocks_set()` does: from
    /// the start on, each step joins the record before to the one that
    /// begins here, skips what a record covers, grows the record that ends
    /// here (up to [`MAX_LEN`] sectors and the next record) or stores a new
    /// record (up to [`MAX_LEN`] sectors and the next record); at the end
    /// the last record it touched is joined with the next one if they fit.
    /// `false` for `len == 0`, or if the table is full before the last step
    /// (the steps done stay, as in C).
    pub fn set(&mut self, start: u64, len: u64) -> bool {
        if len == 0 {
            return false;
        }
        let (mut s, mut left) = (start, len);
        // The record the last step was about.
        let mut last = None;
        while left > 0 {
            // C looks for room before each step, even one that needs none.
            if self.is_full() {
                return false;
            }
            let step = match self.last_starting_by(s) {
                None => {
                    // Before every record: a new one, up to the first.
                    let room = self.start_of(0).map_or(left, |next| next - s);
                    let n = left.min(room).min(MAX_LEN);
                    self.insert(0, Range { start: s, len: n });
                    last = Some(0);
                    n
                }
                Some(i) => {
                    let r = self.ranges[i];
                    last = Some(i);
                    if i > 0 && r.start == s && self.join_with_next(i - 1) {
                        // The record before ends where this one begins and
                        // both fit in one: joined, then on from there.
                        0
                    } else if s < r.end() {
                        // Bad already.
                        left.min(r.end() - s)
                    } else if s == r.end() && r.len < MAX_LEN {
                        // Grow the record that ends here.
                        let mut n = left.min(MAX_LEN - r.len);
                        if let Some(next) = self.start_of(i + 1) {
                            n = n.min(next - s);
                        }
                        self.ranges[i].len += n;
                        n
                    } else {
                        // A new record after it, up to the next.
                        let mut n = left.min(MAX_LEN);
                        if let Some(next) = self.start_of(i + 1) {
                            n = n.min(next - s);
                        }
                        self.insert(i + 1, Range { start: s, len: n });
                        last = Some(i + 1);
                        n
                    }
                }
            };
            s = s.saturating_add(step);
            left -= step;
        }
        if let Some(i) = last {
            self.join_with_next(i);
        }
        true
    }

    /// Clear `len` sectors from `start`, as `badblocks_clear()` does:
    /// records are trimmed, deleted or split in two, never joined. `false`
    /// for `len == 0`, or if the sectors lie inside one record, away from
    /// both its ends, and the table has no room for the split (nothing
    /// changes then).
    pub fn clear(&mut self, start: u64, len: u64) -> bool {
        if len == 0 {
            return false;
        }
        let (mut s, mut left) = (start, len);
        let mut cleared = false;
        while left > 0 {
            let end = s.saturating_add(left);
            let step = match self.last_starting_by(s) {
                Some(i) if s < self.ranges[i].end() => {
                    let r = self.ranges[i];
                    if r.start < s && r.end() > end {
                        // Inside the record: split it, if there is room.
                        if self.is_full() {
                            left
                        } else {
                            self.ranges[i].len = s - r.start;
                            self.insert(
                                i + 1,
                                Range {
                                    start: end,
                                    len: r.end() - end,
                                },
                            );
                            cleared = true;
                            left
                        }
                    } else if r.start == s {
                        cleared = true;
                        if r.len > left {
                            // Its head.
                            self.ranges[i] = Range {
                                start: end,
                                len: r.len - left,
                            };
                            left
                        } else {
                            // All of it.
                            self.remove(i);
                            r.len
                        }
                    } else {
                        // Its tail.
                        cleared = true;
                        self.ranges[i].len = s - r.start;
                        r.end() - s
                    }
                }
                // Not bad: on to the next record, if it comes before `end`.
                i => {
                    cleared = true;
                    let next = i.map_or(0, |i| i + 1);
                    self.start_of(next).map_or(left, |n| left.min(n - s))
                }
            };
            s = s.saturating_add(step);
            left -= step;
        }
        cleared
    }

    /// The first bad record that `sectors` sectors from `sector` touch,
    /// whole (it may begin before `sector`): `badblocks_check()`'s
    /// `first_bad` and `bad_sectors`.
    pub fn check(&self, sector: u64, sectors: u64) -> Option<Range> {
        if sectors == 0 {
            return None;
        }
        let end = sector.saturating_add(sectors);
        let i = self.ranges().partition_point(|r| r.end() <= sector);
        self.ranges().get(i).copied().filter(|r| r.start < end)
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

/// How many sectors from `sector` a request whose first bad record is `bad`
/// ([`BadBlocks::check`]) transfers before it fails, as
/// `null_handle_badblocks()`: with `partial_io`, those before the record's
/// start (`first_bad`) rounded down to a block of `block_sectors`, none if
/// that is not after `sector`; otherwise none.
pub fn partial_sectors(sector: u64, bad: Range, block_sectors: u64, partial_io: bool) -> u64 {
    if !partial_io {
        return 0;
    }
    let block = block_sectors.max(1);
    let first_bad = bad.start - bad.start % block;
    first_bad.saturating_sub(sector)
}
