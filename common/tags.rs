// SPDX-License-Identifier: GPL-2.0

//! A fixed set of tags `0..count`, taken and given back without a lock: a
//! bitmap of atomic words, one bit per tag, set while the tag is taken, as
//! C null_blk's old bio mode kept its commands (`get_tag()`: find a zero
//! bit, `test_and_set_bit_lock()`, retry on a race; `put_tag()`:
//! `clear_bit_unlock()`).
//!
//! rnull_split's `irqmode=2` bio timer pool numbers its timers with one. A
//! search starts after the tag taken last and wraps, so a bio gets a timer
//! that has been free a while rather than the one given back last, whose
//! callback may still be returning on another CPU (starting it then waits
//! for that callback, and leaves the timer on that CPU's timer base).
//!
//! No kernel dependencies: the host unit tests compile this file.

use core::ops::Deref;
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Tags per word.
const BITS: usize = u64::BITS as usize;

/// The tags `0..count` over the words `S` (a `KVec` in the kernel, a `Vec`
/// on the host).
///
/// # Invariants
///
/// `words.len() == count.div_ceil(64)`; the bits of the last word at and
/// above `count % 64` (when that is not 0) are always set, so that a search
/// never yields a tag `>= count`.
pub struct Tags<S> {
    words: S,
    count: usize,
    /// Where the next search starts: the tag after the one taken last.
    hint: AtomicUsize,
}

impl<S: Deref<Target = [AtomicU64]>> Tags<S> {
    /// `count` free tags over `words`, which must be `count.div_ceil(64)`
    /// words, all zero; `None` otherwise.
    pub fn new(words: S, count: usize) -> Option<Self> {
        if words.len() != count.div_ceil(BITS)
            || words.iter().any(|w| w.load(Ordering::Relaxed) != 0)
        {
            return None;
        }
        if let Some(last) = words.last() {
            last.store(Self::padding(count), Ordering::Relaxed);
        }
        Some(Self {
            words,
            count,
            hint: AtomicUsize::new(0),
        })
    }

    /// The always-set bits of the last word.
    fn padding(count: usize) -> u64 {
        match count % BITS {
            0 => 0,
            used => u64::MAX << used,
        }
    }

    /// How many tags there are.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Take a free tag, if there is one.
    ///
    /// Acquire: what the last holder of the tag did before giving it back
    /// happens before what the new holder does.
    #[inline]
    pub fn take(&self) -> Option<usize> {
        let n = self.words.len();
        // The hint is at most `n * 64` (one past the last tag of the last
        // word): wrap it without a division.
        let hint = match self.hint.load(Ordering::Relaxed) {
            h if h >= n * BITS => 0,
            h => h,
        };
        let (first, from) = (hint / BITS, hint % BITS);
        // The hint's word from the hint up, the other words, then the
        // hint's word below the hint.
        let mut w = first;
        for i in 0..=n {
            let mask = match i {
                0 => u64::MAX << from,
                i if i == n => !(u64::MAX << from),
                _ => u64::MAX,
            };
            if let Some(bit) = self.take_in(w, mask) {
                let tag = w * BITS + bit;
                self.hint.store(tag + 1, Ordering::Relaxed);
                return Some(tag);
            }
            w += 1;
            if w == n {
                w = 0;
            }
        }
        None
    }

    /// Take a free tag of word `w` among the bits of `mask`.
    #[inline]
    fn take_in(&self, w: usize, mask: u64) -> Option<usize> {
        let word = self.words.get(w)?;
        let mut free = !word.load(Ordering::Relaxed) & mask;
        while free != 0 {
            let bit = free.trailing_zeros();
            if word.fetch_or(1u64 << bit, Ordering::Acquire) & (1u64 << bit) == 0 {
                return Some(bit as usize);
            }
            // Somebody took it first: look again at what is free now.
            free = !word.load(Ordering::Relaxed) & mask;
        }
        None
    }

    /// Give back `tag`, which the caller took (a tag out of range, or not
    /// taken, is left alone).
    ///
    /// Sequentially consistent (a release, and ordered before a waiter
    /// count the caller reads next, after a fence of its own).
    pub fn give_back(&self, tag: usize) {
        if tag >= self.count {
            return;
        }
        if let Some(word) = self.words.get(tag / BITS) {
            word.fetch_and(!(1u64 << (tag % BITS)), Ordering::SeqCst);
        }
    }

    /// Whether every tag is free.
    pub fn all_free(&self) -> bool {
        let n = self.words.len();
        self.words.iter().enumerate().all(|(i, w)| {
            let expect = if i + 1 == n {
                Self::padding(self.count)
            } else {
                0
            };
            w.load(Ordering::Acquire) == expect
        })
    }
}
