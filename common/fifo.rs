// SPDX-License-Identifier: GPL-2.0

//! A first-in first-out queue of the slots of a fixed array: which slots
//! hold queued items, oldest first. The array is the caller's; this only
//! says which slot an item goes to and which comes out next.
//!
//! rnull_split's `irqmode=2` bio timer pool keeps its free timers in one, so
//! that a bio gets the timer that has been free the longest: its callback
//! returned long ago (a just-returned timer's callback may still be running
//! on another CPU, which would keep the timer there), as C null_blk's old
//! bio mode took the lowest free tag rather than the last one freed.
//!
//! No kernel dependencies: the host unit tests compile this file.

/// The queued slots of an array of `cap` slots.
///
/// # Invariants
///
/// `head < cap` (or `head == 0` when `cap == 0`) and `len <= cap`; the
/// queued slots are `head, head + 1, ...` (`len` of them, wrapping at `cap`).
pub struct Fifo {
    head: usize,
    len: usize,
    cap: usize,
}

impl Fifo {
    /// An empty queue over `cap` slots.
    pub const fn new(cap: usize) -> Self {
        Self {
            head: 0,
            len: 0,
            cap,
        }
    }

    /// How many slots are queued.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no slot is queued.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// `head + n`, wrapped at `cap`, for `n <= cap` (no division).
    fn wrap(&self, n: usize) -> usize {
        let i = self.head + n;
        if i >= self.cap {
            i - self.cap
        } else {
            i
        }
    }

    /// Queue a slot: the slot to put the new item in, or `None` if all are
    /// queued.
    pub fn push(&mut self) -> Option<usize> {
        if self.len == self.cap {
            return None;
        }
        let slot = self.wrap(self.len);
        self.len += 1;
        Some(slot)
    }

    /// Dequeue the oldest slot: the slot to take the item from, or `None`
    /// if none is queued.
    pub fn pop(&mut self) -> Option<usize> {
        if self.len == 0 {
            return None;
        }
        let slot = self.head;
        self.head = self.wrap(1);
        self.len -= 1;
        Some(slot)
    }
}
