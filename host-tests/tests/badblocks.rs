use rnull_host_tests::badblocks::*;

fn r(start: u64, len: u64) -> Range {
    Range { start, len }
}

fn table() -> BadBlocks<Vec<Range>> {
    BadBlocks::new(vec![Range::default(); MAX_RANGES])
}

fn records<S: std::ops::DerefMut<Target = [Range]>>(bb: &BadBlocks<S>) -> Vec<(u64, u64)> {
    bb.ranges().iter().map(|r| (r.start, r.len)).collect()
}

#[test]
fn a_long_range_is_stored_in_records_of_512() {
    let mut bb = table();
    assert!(bb.set(0, 1024)); // +0-1023
    assert_eq!(records(&bb), [(0, 512), (512, 512)]);
    assert!(bb.set(2000, 513));
    assert!(bb.set(5000, 1));
    assert_eq!(
        records(&bb),
        [(0, 512), (512, 512), (2000, 512), (2512, 1), (5000, 1)]
    );
    // from where the range starts, not aligned to 512
    let mut bb = table();
    assert!(bb.set(100, 1024)); // +0x64-0x463
    assert_eq!(records(&bb), [(100, 512), (612, 512)]);
}

#[test]
fn check_reports_the_first_record_met() {
    let mut bb = table();
    bb.set(0, 1024);
    bb.set(2000, 8);
    assert_eq!(bb.check(0, 8), Some(r(0, 512)));
    // the second record of the range written at once
    assert_eq!(bb.check(600, 8), Some(r(512, 512)));
    assert_eq!(bb.check(512, 1), Some(r(512, 512)));
    // an I/O over both records meets the first
    assert_eq!(bb.check(508, 8), Some(r(0, 512)));
    assert_eq!(bb.check(1024, 976), None); // between them
    assert_eq!(bb.check(1020, 2000), Some(r(512, 512)));
    assert_eq!(bb.check(1024, 977), Some(r(2000, 8)));
    assert_eq!(bb.check(10, 0), None);
}

#[test]
fn check_touching_and_not() {
    let mut bb = table();
    bb.set(10, 5);
    bb.set(30, 5);
    assert_eq!(bb.check(0, 10), None); // ends just before
    assert_eq!(bb.check(0, 11), Some(r(10, 5)));
    assert_eq!(bb.check(12, 1), Some(r(10, 5))); // begins before the request
    assert_eq!(bb.check(15, 15), None);
    assert_eq!(bb.check(14, 100), Some(r(10, 5)));
    assert_eq!(bb.check(16, 100), Some(r(30, 5)));
}

/// What `null_handle_badblocks()` does with `badblocks_once`: clear the
/// record `check` reported.
fn meet_once<S: std::ops::DerefMut<Target = [Range]>>(
    bb: &mut BadBlocks<S>,
    sector: u64,
    sectors: u64,
) -> Option<Range> {
    let bad = bb.check(sector, sectors)?;
    assert!(bb.clear(bad.start, bad.len));
    Some(bad)
}

#[test]
fn once_clears_only_the_record_met() {
    let mut bb = table();
    // +0-1023, badblocks_once=1
    bb.set(0, 1024);
    // a 4 KiB read at sector 0 fails, then succeeds
    assert_eq!(meet_once(&mut bb, 0, 8), Some(r(0, 512)));
    assert_eq!(meet_once(&mut bb, 0, 8), None);
    // sector 600 is in the other record: it still fails, once
    assert_eq!(meet_once(&mut bb, 600, 8), Some(r(512, 512)));
    assert_eq!(meet_once(&mut bb, 600, 8), None);
    assert!(bb.is_empty());

    // an I/O over two records clears the first only
    let mut bb = table();
    bb.set(0, 1024);
    assert_eq!(meet_once(&mut bb, 504, 16), Some(r(0, 512)));
    assert_eq!(records(&bb), [(512, 512)]);
    assert_eq!(meet_once(&mut bb, 504, 16), Some(r(512, 512)));
    assert_eq!(meet_once(&mut bb, 504, 16), None);

    // a record that begins before the I/O is cleared whole
    let mut bb = table();
    bb.set(100, 50);
    bb.set(400, 10);
    assert_eq!(meet_once(&mut bb, 120, 8), Some(r(100, 50)));
    assert_eq!(records(&bb), [(400, 10)]);
}

#[test]
fn set_merges_overlapping_and_adjacent() {
    let mut bb = table();
    assert!(bb.set(100, 10));
    assert!(bb.set(0, 10));
    assert_eq!(records(&bb), [(0, 10), (100, 10)]);
    assert!(bb.set(10, 5)); // touches the end of 0..10
    assert_eq!(records(&bb), [(0, 15), (100, 10)]);
    assert!(bb.set(12, 90)); // overlaps both
    assert_eq!(records(&bb), [(0, 110)]);
    assert!(bb.set(50, 3)); // inside
    assert_eq!(records(&bb), [(0, 110)]);
    assert!(bb.set(110, 5)); // touches the end
    assert_eq!(records(&bb), [(0, 115)]);

    // touching the start of a record: joined after the insert
    let mut bb = table();
    assert!(bb.set(100, 10));
    assert!(bb.set(90, 10));
    assert_eq!(records(&bb), [(90, 20)]);
    // three records and the gaps between them
    let mut bb = table();
    for s in [0, 20, 40] {
        bb.set(s, 10);
    }
    assert!(bb.set(5, 40));
    assert_eq!(records(&bb), [(0, 50)]);
    // zero sectors: C's badblocks_set() fails
    assert!(!bb.set(5, 0));
    assert_eq!(records(&bb), [(0, 50)]);
}

#[test]
fn merges_stop_at_512_sectors() {
    // touching the end of a full record: a new record
    let mut bb = table();
    bb.set(0, 512);
    assert!(bb.set(512, 10));
    assert_eq!(records(&bb), [(0, 512), (512, 10)]);
    // growing a record fills it to 512, the rest is a new record
    let mut bb = table();
    bb.set(0, 400);
    assert!(bb.set(400, 200));
    assert_eq!(records(&bb), [(0, 512), (512, 88)]);
    let mut bb = table();
    bb.set(0, 500);
    assert!(bb.set(100, 500)); // overlapping
    assert_eq!(records(&bb), [(0, 512), (512, 88)]);
    // touching the start of a record, too long together: not joined
    let mut bb = table();
    bb.set(100, 500);
    assert!(bb.set(0, 100));
    assert_eq!(records(&bb), [(0, 100), (100, 500)]);
    assert_eq!(bb.check(50, 100), Some(r(0, 100)));
    // two records that touch are joined when a set reaches the second
    let mut bb = table();
    bb.set(0, 100);
    bb.set(100, 500); // (0, 512), (512, 88)
    bb.clear(0, 512); // (512, 88)
    bb.set(200, 312); // touches: joined up to 400 sectors
    assert_eq!(records(&bb), [(200, 400)]);
    // a range over a record: in front of it up to 512, then the record, grown
    let mut bb = table();
    bb.set(600, 100);
    assert!(bb.set(0, 1024));
    assert_eq!(records(&bb), [(0, 512), (512, 512)]);
}

#[test]
fn clear_trims_and_splits_records() {
    let mut bb = table();
    bb.set(0, 100);
    assert!(bb.clear(40, 10));
    assert_eq!(records(&bb), [(0, 40), (50, 50)]);
    assert!(bb.clear(0, 5));
    assert_eq!(records(&bb), [(5, 35), (50, 50)]);
    assert!(bb.clear(30, 30)); // the end of one, the start of the other
    assert_eq!(records(&bb), [(5, 25), (60, 40)]);
    assert!(bb.clear(200, 10)); // nothing there
    assert!(bb.clear(0, 1000));
    assert!(bb.is_empty());
    assert!(bb.clear(0, 10)); // an empty table
    assert!(!bb.clear(0, 0)); // zero sectors: C's badblocks_clear() fails
}

#[test]
fn clear_like_c_then_set_again() {
    let mut bb = table();
    bb.set(0, 1024); // (0, 512), (512, 512)
    assert!(bb.clear(100, 100)); // -100-199
    assert_eq!(records(&bb), [(0, 100), (200, 312), (512, 512)]);
    // over the boundary of two records: both trimmed, never joined
    assert!(bb.clear(500, 100)); // -500-599
    assert_eq!(records(&bb), [(0, 100), (200, 300), (600, 424)]);
    // setting the hole again grows (0, 100) to the next record, then joins
    // the two, as they fit in 512
    assert!(bb.set(100, 100));
    assert_eq!(records(&bb), [(0, 500), (600, 424)]);
    // a clear that ends inside a record and one that begins inside one
    assert!(bb.clear(550, 100));
    assert_eq!(records(&bb), [(0, 500), (650, 374)]);
    assert!(bb.clear(400, 300));
    assert_eq!(records(&bb), [(0, 400), (700, 324)]);
}

#[test]
fn full_table_like_c() {
    // a small table: three records
    let mut bb = BadBlocks::new(vec![Range::default(); 3]);
    // a set stops when the table is full; what it stored stays
    assert!(!bb.set(0, 2048));
    assert_eq!(records(&bb), [(0, 512), (512, 512), (1024, 512)]);
    // a full table refuses every set, even of sectors bad already
    assert!(!bb.set(10, 1));
    assert_eq!(records(&bb), [(0, 512), (512, 512), (1024, 512)]);
    // a clear that splits a record does not fit: nothing changes
    assert!(!bb.clear(600, 10));
    assert_eq!(records(&bb), [(0, 512), (512, 512), (1024, 512)]);
    // trimming or deleting needs no room
    assert!(bb.clear(512, 10));
    assert!(bb.clear(0, 512));
    assert_eq!(records(&bb), [(522, 502), (1024, 512)]);
    // room again: the set goes on
    assert!(bb.set(0, 10));
    assert_eq!(records(&bb), [(0, 10), (522, 502), (1024, 512)]);

    // the kernel's page of entries
    let mut bb = table();
    for i in 0..MAX_RANGES as u64 {
        assert!(bb.set(i * 10, 1));
    }
    assert!(!bb.set(100_000, 1));
    assert_eq!(bb.ranges().len(), MAX_RANGES);
    let before = records(&bb);
    assert!(bb.clear(5000, 1)); // deleting a record
    assert_eq!(bb.ranges().len(), MAX_RANGES - 1);
    assert!(bb.set(0, 25)); // joins (0, 1), (10, 1), (20, 1)
    assert_eq!(bb.ranges().len(), MAX_RANGES - 3);
    assert_ne!(records(&bb), before);
}

/// A pseudo-random walk of sets and clears: the records always hold
/// exactly the sectors marked and not cleared since, sorted, disjoint and
/// at most 512 long, and a check reports the first record touched.
#[test]
fn random_changes_keep_the_sectors() {
    const SECTORS: usize = 6000;
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let mut bb = table();
    let mut bad = vec![false; SECTORS];
    for round in 0..20_000 {
        let start = next(SECTORS as u64 - 1);
        let len = 1 + next(if round % 7 == 0 { 1500 } else { 40 }).min(SECTORS as u64 - start - 1);
        if next(3) == 0 {
            assert!(bb.clear(start, len));
            bad[start as usize..(start + len) as usize].fill(false);
        } else {
            assert!(bb.set(start, len));
            bad[start as usize..(start + len) as usize].fill(true);
        }
        let mut marked = vec![false; SECTORS];
        let mut prev_end = 0;
        for (k, r) in bb.ranges().iter().enumerate() {
            assert!(r.len >= 1 && r.len <= MAX_LEN, "{r:?}");
            assert!(k == 0 || r.start >= prev_end, "{r:?} after {prev_end}");
            prev_end = r.end();
            marked[r.start as usize..r.end() as usize].fill(true);
        }
        assert_eq!(marked, bad, "round {round}");
        let (s, n) = (next(SECTORS as u64 - 64), 1 + next(64));
        let first = bb
            .ranges()
            .iter()
            .find(|r| r.end() > s && r.start < s + n)
            .copied();
        assert_eq!(bb.check(s, n), first);
    }
}

#[test]
fn parse_like_c() {
    assert_eq!(parse_change("+0-9"), Some(Change::Set(r(0, 10))));
    assert_eq!(parse_change("-100-100"), Some(Change::Clear(r(100, 1))));
    assert_eq!(parse_change("+0x10-0x1f"), Some(Change::Set(r(16, 16))));
    assert_eq!(parse_change("+010-011"), Some(Change::Set(r(8, 2))));
    for bad in [
        "", "0-9", "+9-0", "+a-9", "+0-", "+-9", "+0-9x", "*0-9", "+0 9", "+0--9",
    ] {
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
    // the bad record began before the request: nothing transferred
    assert_eq!(partial_sectors(20, r(13, 20), 1, true), 0);
    // +0-1023 is two records: a request over both ends at the first...
    let mut bb = table();
    bb.set(0, 1024);
    bb.set(2000, 100);
    let first = bb.check(256, 512).unwrap();
    assert_eq!(partial_sectors(256, first, 8, true), 0);
    // ... and one that starts in the gap before (1024, 2000) stops at 2000
    let first = bb.check(1500, 600).unwrap();
    assert_eq!(first, r(2000, 100));
    assert_eq!(partial_sectors(1500, first, 8, true), 500);
    // once the first record is cleared, a request from sector 256 stops
    // at the second one's start
    bb.clear(0, 512);
    let first = bb.check(256, 512).unwrap();
    assert_eq!(first, r(512, 512));
    assert_eq!(partial_sectors(256, first, 8, true), 256);
}
