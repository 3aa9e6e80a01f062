// SPDX-License-Identifier: GPL-2.0

//! Where a bio-mode rnull_split device splits a bio.
//!
//! Pure logic, included by the module and by the host unit tests. The walk
//! is the one of the 2015 block-layer change (`blk_bio_segment_split()`):
//! go through the bio's segments from its current position and stop before
//! the first segment that would take the piece past `max_sectors` or past
//! `max_segments`; a segment longer than `max_segment_size` counts as several
//! segments. When even the first segment is larger than `max_sectors`, the
//! piece ends inside it, at `max_sectors`. Split points are aligned down to
//! the logical block size.

/// The queue limits a piece must respect.
#[derive(Clone, Copy, Debug)]
pub struct SplitLimits {
    /// Largest piece, in 512-byte sectors (the queue's `max_sectors`).
    pub max_sectors: u32,
    /// Most segments in a piece; 0 means no limit.
    pub max_segments: u32,
    /// Largest segment in bytes; 0 means no limit.
    pub max_segment_size: u32,
    /// Logical block size in bytes; pieces are multiples of it.
    pub logical_block_size: u32,
}

/// Outcome of [`split_point`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SplitPoint {
    /// The bio respects the limits as it is.
    Fits,
    /// Split off the first this many sectors (less than the bio's size).
    At(u32),
    /// No piece of at least one logical block fits the limits.
    Impossible,
}

/// Find where to split a bio whose remaining segments have the byte lengths
/// `segments` (in order).
pub fn split_point<I: IntoIterator<Item = u32>>(segments: I, lim: &SplitLimits) -> SplitPoint {
    let lbs = u64::from(lim.logical_block_size.max(512));
    let max_bytes = u64::from(lim.max_sectors) * 512 / lbs * lbs;
    let seg_max = match lim.max_segment_size {
        0 => u64::MAX,
        n => u64::from(n),
    };
    let cut = |bytes: u64| -> SplitPoint {
        let aligned = bytes / lbs * lbs;
        if aligned == 0 {
            SplitPoint::Impossible
        } else {
            SplitPoint::At((aligned / 512) as u32)
        }
    };
    if max_bytes == 0 {
        return SplitPoint::Impossible;
    }

    let mut bytes: u64 = 0;
    let mut nsegs: u32 = 0;
    for len in segments {
        let mut left = u64::from(len);
        while left > 0 {
            let chunk = left.min(seg_max);
            if lim.max_segments != 0 && nsegs == lim.max_segments {
                return cut(bytes);
            }
            if bytes + chunk > max_bytes {
                // Stop before this segment; inside it only when nothing
                // (or less than a block) comes before it.
                return match cut(bytes) {
                    SplitPoint::Impossible => cut(max_bytes),
                    at => at,
                };
            }
            bytes += chunk;
            nsegs += 1;
            left -= chunk;
        }
    }
    SplitPoint::Fits
}

/// The page-sized pieces of a segment of `len` bytes starting `offset`
/// bytes into its first page: the lengths `bio_for_each_segment` yields for
/// one multi-page bvec (the 2015 walk saw single pages).
pub fn page_chunks(offset: u32, len: u32, page_size: u32) -> impl Iterator<Item = u32> {
    let mut left = len;
    let mut in_page = offset % page_size;
    core::iter::from_fn(move || {
        if left == 0 {
            return None;
        }
        let n = left.min(page_size - in_page);
        left -= n;
        in_page = 0;
        Some(n)
    })
}

/// How many pieces a bio of `total_bytes` in segments of `seg_len` bytes
/// becomes (for tests and benchmarks: repeatedly splits off the front).
pub fn count_pieces(total_bytes: u32, seg_len: u32, lim: &SplitLimits) -> Option<u32> {
    let mut left = total_bytes;
    let mut pieces = 0;
    let mut first_offset = 0u32; // bytes already consumed of the first segment
    while left > 0 {
        let head = (seg_len - first_offset).min(left);
        let rest = left - head;
        let segs = core::iter::once(head)
            .chain((0..rest.div_ceil(seg_len)).map(|i| (rest - i * seg_len).min(seg_len)));
        pieces += 1;
        match split_point(segs, lim) {
            SplitPoint::Fits => return Some(pieces),
            SplitPoint::Impossible => return None,
            SplitPoint::At(s) => {
                let b = s * 512;
                left -= b;
                first_offset = (first_offset + b) % seg_len;
            }
        }
    }
    Some(pieces)
}
