//! common/page_table.rs: where rnull_split's store keeps page `idx`.

use rnull_host_tests::page_table::{
    slot, top_len, Slot, LEAF_SLOTS, MID_SLOTS, TOP_SPAN_BITS, UPPER_SLOTS,
};
use std::collections::HashSet;

#[test]
fn top_len_covers_the_capacity() {
    assert_eq!(top_len(0), Some(0));
    assert_eq!(top_len(1), Some(1));
    let span = 1u64 << TOP_SPAN_BITS;
    assert_eq!(top_len(span), Some(1));
    assert_eq!(top_len(span + 1), Some(2));
    // 4 KiB pages: an entry per 16 GiB; C null_blk's default gb=250 takes
    // 16 entries, its largest (1 PiB) 65,536.
    assert_eq!(top_len(250 << 18), Some(16));
    assert_eq!(top_len(1 << 38), Some(65536));
    assert_eq!(
        top_len(u64::MAX),
        usize::try_from(u64::MAX.div_ceil(span)).ok()
    );
}

#[test]
fn every_page_of_a_device_has_its_own_slot() {
    let pages = 2 * (1u64 << TOP_SPAN_BITS) + 17;
    let top = top_len(pages).unwrap();
    assert_eq!(top, 3);
    let mut seen = HashSet::new();
    for idx in 0..pages {
        let s = slot(idx, top).expect("a page of the device has a slot");
        assert!(s.top < top && s.upper < UPPER_SLOTS && s.mid < MID_SLOTS && s.leaf < LEAF_SLOTS);
        assert!(
            seen.insert((s.top, s.upper, s.mid, s.leaf)),
            "page {idx} shares a slot"
        );
    }
}

#[test]
fn neighbours_share_a_leaf() {
    let top = top_len(1 << 20).unwrap();
    let a = slot(64 * 5, top).unwrap();
    let b = slot(64 * 5 + 63, top).unwrap();
    assert_eq!((a.top, a.upper, a.mid), (b.top, b.upper, b.mid));
    assert_eq!((a.leaf, b.leaf), (0, 63));
    assert_eq!(slot(64 * 6, top).unwrap().mid, a.mid + 1);
    assert_eq!(
        slot(64 * 256 * 3 + 64 * 2 + 1, top),
        Some(Slot {
            top: 0,
            upper: 3,
            mid: 2,
            leaf: 1
        })
    );
    let top = top_len(1 << 23).unwrap();
    assert_eq!(
        slot((1 << TOP_SPAN_BITS) + 1, top),
        Some(Slot {
            top: 1,
            upper: 0,
            mid: 0,
            leaf: 1
        })
    );
}

#[test]
fn pages_past_the_table_have_no_slot() {
    let top = top_len(100).unwrap();
    assert_eq!(top, 1);
    // Within the one top entry: the table has room up to its span.
    assert!(slot(100, top).is_some());
    assert_eq!(slot(1 << TOP_SPAN_BITS, top), None);
    assert_eq!(slot(u64::MAX, top), None);
    assert_eq!(slot(0, 0), None);
}
