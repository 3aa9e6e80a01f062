use rnull_host_tests::badblocks::*;

fn r(start: u64, len: u64) -> Range {
    Range { start, len }
}

#[test]
fn set_merges_overlapping_and_adjacent() {
    let mut bb = BadBlocks::new(vec![Range::default(); MAX_RANGES]);
    assert!(bb.set(100, 10));
    assert!(bb.set(0, 10));
    assert_eq!(bb.ranges(), &[r(0, 10), r(100, 10)]);
    assert!(bb.set(10, 5)); // touches 0..10
    assert_eq!(bb.ranges(), &[r(0, 15), r(100, 10)]);
    assert!(bb.set(12, 90)); // overlaps both
    assert_eq!(bb.ranges(), &[r(0, 110)]);
    assert!(bb.set(50, 3)); // inside
    assert_eq!(bb.ranges(), &[r(0, 110)]);
    assert!(bb.set(5, 0));
    assert_eq!(bb.ranges(), &[r(0, 110)]);
}

#[test]
fn clear_trims_and_splits() {
    let mut bb = BadBlocks::new(vec![Range::default(); MAX_RANGES]);
    bb.set(0, 100);
    assert!(bb.clear(40, 10));
    assert_eq!(bb.ranges(), &[r(0, 40), r(50, 50)]);
    assert!(bb.clear(0, 5));
    assert_eq!(bb.ranges(), &[r(5, 35), r(50, 50)]);
    assert!(bb.clear(30, 30)); // the end of one, the start of the other
    assert_eq!(bb.ranges(), &[r(5, 25), r(60, 40)]);
    assert!(bb.clear(200, 10)); // nothing there
    assert!(bb.clear(0, 1000));
    assert!(bb.is_empty());
}

#[test]
fn check_reports_the_whole_first_range() {
    let mut bb = BadBlocks::new(vec![Range::default(); MAX_RANGES]);
    bb.set(10, 5);
    bb.set(30, 5);
    assert_eq!(bb.check(0, 10), None); // ends just before
    assert_eq!(bb.check(0, 11), Some(r(10, 5)));
    assert_eq!(bb.check(12, 1), Some(r(10, 5))); // begins before the request
    assert_eq!(bb.check(15, 15), None); // between them
    assert_eq!(bb.check(14, 100), Some(r(10, 5)));
    assert_eq!(bb.check(16, 100), Some(r(30, 5)));
    assert_eq!(bb.check(10, 0), None);
}

#[test]
fn full_list_refuses_and_keeps_what_it_had() {
    let mut bb = BadBlocks::new(vec![Range::default(); MAX_RANGES]);
    for i in 0..MAX_RANGES as u64 {
        assert!(bb.set(i * 10, 1));
    }
    assert!(!bb.set(100_000, 1));
    assert_eq!(bb.ranges().len(), MAX_RANGES);
    // a split needs one more entry: refused, nothing changes
    assert!(bb.set(5000, 5)); // grows (5000, 1): still MAX_RANGES entries
    let before: Vec<_> = bb.ranges().to_vec();
    assert!(!bb.clear(5001, 1));
    assert_eq!(bb.ranges(), &before[..]);
    assert!(bb.clear(5000, 1)); // trimming needs no entry
    // merging frees entries, so this fits
    assert!(bb.set(0, 25));
    assert!(bb.ranges().len() < before.len());
}

#[test]
fn pieces_are_at_most_512_sectors() {
    let mut bb = BadBlocks::new(vec![Range::default(); MAX_RANGES]);
    bb.set(0, 1024);
    bb.set(2000, 513);
    bb.set(5000, 1);
    let p: Vec<_> = bb.pieces().collect();
    assert_eq!(p, vec![(0, 512), (512, 512), (2000, 512), (2512, 1), (5000, 1)]);
}

#[test]
fn parse_like_c() {
    assert_eq!(parse_change("+0-9"), Some(Change::Set(r(0, 10))));
    assert_eq!(parse_change("-100-100"), Some(Change::Clear(r(100, 1))));
    assert_eq!(parse_change("+0x10-0x1f"), Some(Change::Set(r(16, 16))));
    assert_eq!(parse_change("+010-011"), Some(Change::Set(r(8, 2))));
    for bad in ["", "0-9", "+9-0", "+a-9", "+0-", "+-9", "+0-9x", "*0-9", "+0 9", "+0--9"] {
        assert_eq!(parse_change(bad), None, "{bad:?}");
    }
    assert_eq!(parse_change("+0-18446744073709551615"), None);
}

#[test]
fn partial_io_sectors() {
    // 4 KiB blocks: the bad sector 13 rounds down to 8
    assert_eq!(partial_sectors(0, r(13, 2), 8, true), 8);
    assert_eq!(partial_sectors(0, r(13, 2), 8, false), 0);
    assert_eq!(partial_sectors(10, r(13, 2), 1, true), 3);
    // the bad range began before the request: nothing transferred
    assert_eq!(partial_sectors(20, r(13, 20), 1, true), 0);
}
