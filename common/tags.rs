// SPDX-License-Identifier: GPL-2.0

//! A fixed set of tags `0..count`, taken and given back without a lock: a
//! bitmap of atomic words, one bit per tag, set while the tag is taken, as
//! C null_blk's old bio mode kept its commands (`get_tag()`: find a zero
//! bit, `test_and_set_bit_lock()`, retry on a race; `put_tag()`:
//! `clear_bit_unlock()`).
//!
//! rnull_split's `irqmode=2` bio timer pool numbers its timers with one.
//! Each CPU searches from a hint of its own, as blk-mq's `sbitmap_queue`
//! does (`alloc_hint`): the tag after the one it took last, or the one
//! given back last on it. A timer's callback runs on the CPU that started
//! it and gives its tag back there, so the next bio on that CPU gets the
//! same timer again: its callback has returned (it ran in an interrupt on
//! this CPU), and it is on this CPU's timer base already. A timer given
//! back on one CPU is found by another only when that one's own tags are
//! busy. (With one hint for all CPUs, timers went back and forth between
//! the CPUs' timer bases, and a tag given back on one CPU could be taken on
//! the other while its callback was still returning.)
//!
//! No kernel dependencies: the host unit tests compile this file.

use core::ops::Deref;
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Tags per word.
const BITS: usize = u64::BITS as usize;

/// Where one CPU's next search starts, alone in a cache line: CPUs write
/// their hints all the time, and must not share the line.
#[repr(align(64))]
pub struct Hint(AtomicUsize);

impl Hint {
    /// A hint at tag 0.
    pub const fn new() -> Self {
        Self(AtomicUsize::new(0))
    }
}

impl Default for Hint {
    fn default() -> Self {
        Self::new()
    }
}

/// The tags `0..count` over the words `S`, searched from one hint of `H`
/// per CPU (`KVec`s in the kernel, `Vec`s on the host).
///
/// # Invariants
///
/// `words.len() == count.div_ceil(64)`; the bits of the last word at and
/// above `count % 64` (when that is not 0) are always set, so that a search
/// never yields a tag `>= count`. `hints` is not empty.
pub struct Tags<S, H> {
    words: S,
    count: usize,
    hints: H,
}

impl<S: Deref<Target = [AtomicU64]>, H: Deref<Target = [Hint]>> Tags<S, H> {
    /// `count` free tags over `words`, which must be `count.div_ceil(64)`
    /// words, all zero, searched from `hints`, one per CPU (at least one);
    /// `None` otherwise. The CPUs' searches start spread over the tags.
    pub fn new(words: S, hints: H, count: usize) -> Option<Self> {
        if words.len() != count.div_ceil(BITS)
            || words.iter().any(|w| w.load(Ordering::Relaxed) != 0)
            || hints.is_empty()
        {
            return None;
        }
        if let Some(last) = words.last() {
            last.store(Self::padding(count), Ordering::Relaxed);
        }
        let cpus = hints.len();
        for (cpu, hint) in hints.iter().enumerate() {
            // Below `count` (`cpu < cpus`); no overflow for any sane pool.
            let start = count.checked_mul(cpu).map_or(0, |n| n / cpus);
            hint.0.store(start, Ordering::Relaxed);
        }
        Some(Self {
            words,
            count,
            hints,
        })
    }

    /// The hint of `cpu` (any number: CPUs beyond the hints share them).
    #[inline]
    fn hint(&self, cpu: usize) -> Option<&AtomicUsize> {
        let n = self.hints.len();
        let i = if cpu < n { cpu } else { cpu % n.max(1) };
        self.hints.get(i).map(|h| &h.0)
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

    /// Take a free tag on `cpu`, if there is one: the first free one from
    /// `cpu`'s hint on, wrapping.
    ///
    /// Acquire: what the last holder of the tag did before giving it back
    /// happens before what the new holder does.
    #[inline]
    pub fn take(&self, cpu: usize) -> Option<usize> {
        let n = self.words.len();
        let slot = self.hint(cpu)?;
        // A hint is at most `n * 64` (one past the last tag of the last
        // word): wrap it without a division.
        let hint = match slot.load(Ordering::Relaxed) {
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
                slot.store(tag + 1, Ordering::Relaxed);
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

    /// Give back `tag`, which the caller took, on `cpu`, whose next search
    /// starts at `tag` then (a tag out of range, or not taken, is left
    /// alone).
    ///
    /// Sequentially consistent (a release, and ordered before a waiter
    /// count the caller reads next, after a fence of its own).
    #[inline]
    pub fn give_back(&self, tag: usize, cpu: usize) {
        if tag >= self.count {
            return;
        }
        if let Some(word) = self.words.get(tag / BITS) {
            word.fetch_and(!(1u64 << (tag % BITS)), Ordering::SeqCst);
        }
        if let Some(slot) = self.hint(cpu) {
            slot.store(tag, Ordering::Relaxed);
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
