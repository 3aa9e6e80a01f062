//! common/fifo.rs: the slot queue of rnull_split's bio timer pool.

use rnull_host_tests::fifo::Fifo;
use std::collections::VecDeque;

#[test]
fn empty_and_full() {
    let mut q = Fifo::new(3);
    assert!(q.is_empty());
    assert_eq!(q.pop(), None);
    assert_eq!((q.push(), q.push(), q.push()), (Some(0), Some(1), Some(2)));
    assert_eq!(q.len(), 3);
    assert_eq!(q.push(), None, "a full queue takes no more");
    assert_eq!(q.len(), 3);
}

#[test]
fn zero_slots() {
    let mut q = Fifo::new(0);
    assert_eq!(q.push(), None);
    assert_eq!(q.pop(), None);
}

#[test]
fn oldest_first_across_the_wrap() {
    let mut q = Fifo::new(4);
    for _ in 0..4 {
        q.push();
    }
    assert_eq!(q.pop(), Some(0));
    assert_eq!(q.pop(), Some(1));
    // The freed slots are reused after the ones still queued.
    assert_eq!(q.push(), Some(0));
    assert_eq!(q.push(), Some(1));
    assert_eq!(
        [q.pop(), q.pop(), q.pop(), q.pop(), q.pop()],
        [Some(2), Some(3), Some(0), Some(1), None]
    );
}

/// Against std's VecDeque over an array: every item comes out of the slot it
/// went into, in the order it went in, and no two queued items share a slot.
#[test]
fn matches_a_deque() {
    for cap in 1..9 {
        let mut q = Fifo::new(cap);
        let mut slots = vec![None; cap];
        let mut model = VecDeque::new();
        let mut next = 0u32;
        // A fixed pseudo-random walk of pushes and pops.
        let mut x = 0x2545_f491u32.wrapping_mul(cap as u32 + 1);
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            if x % 3 != 0 {
                match q.push() {
                    Some(s) => {
                        assert!(slots[s].is_none(), "slot {s} of {cap} queued twice");
                        slots[s] = Some(next);
                        model.push_back(next);
                        next += 1;
                    }
                    None => assert_eq!(model.len(), cap),
                }
            } else {
                let got = q
                    .pop()
                    .map(|s| slots[s].take().expect("a queued slot holds an item"));
                assert_eq!(got, model.pop_front());
            }
            assert_eq!(q.len(), model.len());
        }
    }
}
