// SPDX-License-Identifier: GPL-2.0

//! The shape of rnull_split's page table: where page `idx` of a
//! memory-backed device lives.
//!
//! Levels of fixed fan-out, as a CPU's page table: a top array sized for
//! the device's capacity when the device is made, whose entries point to
//! upper nodes of [`UPPER_SLOTS`] middle nodes, each of [`MID_SLOTS`]
//! leaves, each of [`LEAF_SLOTS`] pages. The nodes are allocated on first
//! write below them. A lookup is four dependent loads and no loop (C
//! null_blk's radix tree walks three or four levels of 64-way nodes for
//! the same devices, out of line).
//!
//! Memory: a top entry (8 bytes) per 16 GiB of capacity (512 KiB at
//! null_blk's largest, 1 PiB); a leaf (64 pointers, 512 bytes: 0.2% of the
//! 256 KiB it indexes, as a radix tree node of C's per 64 pages) per
//! 256 KiB range with data; a middle node (256 pointers and a count, a
//! 4 KiB slab object) per 64 MiB range and an upper node per 16 GiB.
//!
//! No kernel dependencies: the host unit tests compile this file.

/// log2 of [`LEAF_SLOTS`].
pub const LEAF_BITS: u32 = 6;
/// log2 of [`MID_SLOTS`].
pub const MID_BITS: u32 = 8;
/// log2 of [`UPPER_SLOTS`].
pub const UPPER_BITS: u32 = 8;
/// Pages in a leaf.
pub const LEAF_SLOTS: usize = 1 << LEAF_BITS;
/// Leaves in a middle node.
pub const MID_SLOTS: usize = 1 << MID_BITS;
/// Middle nodes in an upper node.
pub const UPPER_SLOTS: usize = 1 << UPPER_BITS;
/// log2 of the pages under one top entry.
pub const TOP_SPAN_BITS: u32 = LEAF_BITS + MID_BITS + UPPER_BITS;

/// Where a page lives: top entry, middle node in the upper node, leaf in
/// the middle node, page in the leaf.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    /// Index into the top array.
    pub top: usize,
    /// Index into the upper node (below [`UPPER_SLOTS`]).
    pub upper: usize,
    /// Index into the middle node (below [`MID_SLOTS`]).
    pub mid: usize,
    /// Index into the leaf (below [`LEAF_SLOTS`]).
    pub leaf: usize,
}

/// The top array's length for a device of `pages` pages; `None` if it
/// does not fit in memory's index range.
pub fn top_len(pages: u64) -> Option<usize> {
    usize::try_from(pages.div_ceil(1 << TOP_SPAN_BITS)).ok()
}

/// Where page `idx` lives; `None` if it is beyond a top array of `top_len`
/// entries.
#[inline]
pub fn slot(idx: u64, top_len: usize) -> Option<Slot> {
    let top = idx >> TOP_SPAN_BITS;
    if top >= top_len as u64 {
        return None;
    }
    Some(Slot {
        top: top as usize,
        upper: (idx >> (LEAF_BITS + MID_BITS)) as usize & (UPPER_SLOTS - 1),
        mid: (idx >> LEAF_BITS) as usize & (MID_SLOTS - 1),
        leaf: idx as usize & (LEAF_SLOTS - 1),
    })
}
