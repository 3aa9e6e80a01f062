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

/// The state of the walk: bytes and segments taken into the piece so far.
struct Walk {
    lbs: u64,
    max_bytes: u64,
    seg_max: u64,
    max_segments: u32,
    bytes: u64,
    nsegs: u32,
}

impl Walk {
    /// `None` if no piece can be made at all (`max_sectors` below a block).
    fn new(lim: &SplitLimits) -> Option<Self> {
        let lbs = u64::from(lim.logical_block_size.max(512));
        let max_bytes = u64::from(lim.max_sectors) * 512 / lbs * lbs;
        (max_bytes != 0).then_some(Self {
            lbs,
            max_bytes,
            seg_max: match lim.max_segment_size {
                0 => u64::MAX,
                n => u64::from(n),
            },
            max_segments: lim.max_segments,
            bytes: 0,
            nsegs: 0,
        })
    }

    /// The piece ends after `bytes`, aligned down to the block size.
    fn cut(&self, bytes: u64) -> SplitPoint {
        let aligned = bytes / self.lbs * self.lbs;
        if aligned == 0 {
            SplitPoint::Impossible
        } else {
            SplitPoint::At((aligned / 512) as u32)
        }
    }

    /// Take the next segment of `len` bytes, or say where the piece ends.
    fn take(&mut self, len: u32) -> Option<SplitPoint> {
        let mut left = u64::from(len);
        while left > 0 {
            let chunk = left.min(self.seg_max);
            if self.max_segments != 0 && self.nsegs == self.max_segments {
                return Some(self.cut(self.bytes));
            }
            if self.bytes + chunk > self.max_bytes {
                // Stop before this segment; inside it only when nothing
                // (or less than a block) comes before it.
                return Some(match self.cut(self.bytes) {
                    SplitPoint::Impossible => self.cut(self.max_bytes),
                    at => at,
                });
            }
            self.bytes += chunk;
            self.nsegs += 1;
            left -= chunk;
        }
        None
    }

    /// Where [`Walk::take`] of the page chunks (`page_chunks`) of a segment
    /// of `len` bytes at `offset` into its first page ends the piece, given
    /// that every page is one segment (`seg_max >= page_size`) and that the
    /// whole segment does not fit: the same result, computed instead of
    /// walked.
    fn stop_in_pages(&self, offset: u32, len: u32, page_size: u32) -> SplitPoint {
        let page = u64::from(page_size);
        let first = u64::from(len).min(page - u64::from(offset % page_size));
        // Chunks the segment count leaves room for.
        let by_segs = match self.max_segments {
            0 => u64::MAX,
            max => u64::from(max.saturating_sub(self.nsegs)),
        };
        // Chunks the bytes leave room for: the first, then whole pages. The
        // segment's last chunk may be shorter, but it is only reached when
        // all bytes fit, and then the segment count stops the walk first.
        let room = self.max_bytes.saturating_sub(self.bytes);
        let by_bytes = if room < first {
            0
        } else {
            1 + (room - first) / page
        };
        // `take` checks the segment count before the bytes.
        let (taken, by_count) = if by_segs <= by_bytes {
            (by_segs, true)
        } else {
            (by_bytes, false)
        };
        let bytes = match taken {
            0 => self.bytes,
            n => self.bytes + first + (n - 1) * page,
        };
        match self.cut(bytes) {
            SplitPoint::Impossible if !by_count => self.cut(self.max_bytes),
            at => at,
        }
    }
}

/// Find where to split a bio whose remaining segments have the byte lengths
/// `segments` (in order).
pub fn split_point<I: IntoIterator<Item = u32>>(segments: I, lim: &SplitLimits) -> SplitPoint {
    let Some(mut walk) = Walk::new(lim) else {
        return SplitPoint::Impossible;
    };
    for len in segments {
        if let Some(at) = walk.take(len) {
            return at;
        }
    }
    SplitPoint::Fits
}

/// [`split_point`] of the pages of multi-page segments, as the 2015 walk saw
/// them (`bio_for_each_segment`): `bvecs` are `(offset into the first page,
/// length)`. The result is that of
/// `split_point(bvecs.flat_map(|(o, l)| page_chunks(o, l, page_size)), lim)`,
/// but a segment whose pages all fit is taken at once, with its page count,
/// and the page the piece ends before in the segment that does not fit is
/// computed (`Walk::stop_in_pages`): no page by page walk, unless
/// `max_segment_size` is below a page.
pub fn split_point_pages<I: IntoIterator<Item = (u32, u32)>>(
    bvecs: I,
    page_size: u32,
    lim: &SplitLimits,
) -> SplitPoint {
    let Some(mut walk) = Walk::new(lim) else {
        return SplitPoint::Impossible;
    };
    let whole_pages = walk.seg_max >= u64::from(page_size);
    for (offset, len) in bvecs {
        if len == 0 {
            continue;
        }
        if whole_pages {
            // Every page is one segment, and the walk only checks sums
            // that grow: if the last page fits, every page before it did.
            let pages = (offset % page_size + len).div_ceil(page_size);
            let segs_fit = walk.max_segments == 0 || walk.nsegs + pages <= walk.max_segments;
            if segs_fit && walk.bytes + u64::from(len) <= walk.max_bytes {
                walk.bytes += u64::from(len);
                walk.nsegs += pages;
                continue;
            }
            // The piece ends inside this segment: find the page it ends
            // before without walking up to it.
            return walk.stop_in_pages(offset, len, page_size);
        }
        for chunk in page_chunks(offset, len, page_size) {
            if let Some(at) = walk.take(chunk) {
                return at;
            }
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
