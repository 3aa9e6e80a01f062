use rnull_host_tests::split::*;

fn lim(max_sectors: u32) -> SplitLimits {
    SplitLimits { max_sectors, max_segments: 0, max_segment_size: 0, logical_block_size: 512 }
}

#[test]
fn seed_case_1mib_at_16kib() {
    // 1 MiB direct read in 256 page segments, max_sectors_kb=16.
    let l = lim(32);
    assert_eq!(split_point([4096u32; 256], &l), SplitPoint::At(32));
    assert_eq!(count_pieces(1 << 20, 4096, &l), Some(64));
}

#[test]
fn fits() {
    assert_eq!(split_point([4096u32; 4], &lim(32)), SplitPoint::Fits);
    assert_eq!(split_point([512u32], &lim(8)), SplitPoint::Fits);
    assert_eq!(split_point(core::iter::empty(), &lim(8)), SplitPoint::Fits);
}

#[test]
fn stops_before_the_segment_that_crosses_the_limit() {
    // 3 KiB + 3 KiB + 3 KiB with a 4 KiB limit: stop after the first.
    assert_eq!(split_point([3072u32, 3072, 3072], &lim(8)), SplitPoint::At(6));
    // 2 KiB + 4 KiB with 4 KiB limit: after the 2 KiB.
    assert_eq!(split_point([2048u32, 4096], &lim(8)), SplitPoint::At(4));
}

#[test]
fn single_segment_larger_than_the_limit_is_cut_inside() {
    assert_eq!(split_point([65536u32], &lim(32)), SplitPoint::At(32));
    assert_eq!(count_pieces(65536, 65536, &lim(32)), Some(4));
}

#[test]
fn exact_multiples() {
    assert_eq!(split_point([4096u32; 8], &lim(64)), SplitPoint::Fits);
    assert_eq!(split_point([4096u32; 9], &lim(64)), SplitPoint::At(64));
    assert_eq!(count_pieces(128 << 10, 4096, &lim(64)), Some(4));
    assert_eq!(count_pieces(4 << 20, 4096, &lim(2048)), Some(4));
}

#[test]
fn uneven_tail() {
    // 1 MiB + 4 KiB at 16 KiB: 64 full pieces and a 4 KiB one.
    assert_eq!(count_pieces((1 << 20) + 4096, 4096, &lim(32)), Some(65));
    // 124 KiB limit (max_sectors_kb=124) over 1 MiB: 8 full + 1 of 32 KiB.
    assert_eq!(count_pieces(1 << 20, 4096, &lim(248)), Some(9));
}

#[test]
fn max_segments() {
    let l = SplitLimits { max_sectors: 2048, max_segments: 4, max_segment_size: 0, logical_block_size: 512 };
    assert_eq!(split_point([4096u32; 8], &l), SplitPoint::At(32));
    assert_eq!(split_point([4096u32; 4], &l), SplitPoint::Fits);
}

#[test]
fn max_segment_size_counts_long_segments_as_several() {
    // one 64 KiB segment, 16 KiB max segment size, 2 segments max: 32 KiB.
    let l = SplitLimits { max_sectors: 2048, max_segments: 2, max_segment_size: 16384, logical_block_size: 512 };
    assert_eq!(split_point([65536u32], &l), SplitPoint::At(64));
}

#[test]
fn logical_block_alignment() {
    let l = SplitLimits { max_sectors: 16, max_segments: 0, max_segment_size: 0, logical_block_size: 4096 };
    // 6 KiB + 6 KiB: before the second segment would be 6 KiB, aligned down to 4 KiB.
    assert_eq!(split_point([6144u32, 6144], &l), SplitPoint::At(8));
    // max_sectors not a multiple of the block size: aligned down.
    let l = SplitLimits { max_sectors: 12, max_segments: 0, max_segment_size: 0, logical_block_size: 4096 };
    assert_eq!(split_point([65536u32], &l), SplitPoint::At(8));
    // 512-byte segments, 1 segment max, 4 KiB blocks: impossible.
    let l = SplitLimits { max_sectors: 64, max_segments: 1, max_segment_size: 0, logical_block_size: 4096 };
    assert_eq!(split_point([512u32; 8], &l), SplitPoint::Impossible);
}

#[test]
fn split_is_always_smaller_than_the_bio_and_within_limits() {
    for max_sectors in [8u32, 9, 16, 32, 248, 255, 2048, 2560] {
        for seg in [512u32, 1024, 4096, 12288, 65536] {
            for n in 1..40u32 {
                let total = seg * n;
                let l = lim(max_sectors);
                match split_point(core::iter::repeat(seg).take(n as usize), &l) {
                    SplitPoint::Fits => assert!(total <= max_sectors * 512),
                    SplitPoint::At(s) => {
                        assert!(s > 0 && s * 512 < total, "{max_sectors} {seg} {n} {s}");
                        assert!(s <= max_sectors);
                    }
                    SplitPoint::Impossible => panic!("512-byte blocks always fit"),
                }
            }
        }
    }
}

#[test]
fn page_chunks_follow_page_boundaries() {
    let v: Vec<u32> = page_chunks(0, 8192, 4096).collect();
    assert_eq!(v, [4096, 4096]);
    let v: Vec<u32> = page_chunks(512, 8192, 4096).collect();
    assert_eq!(v, [3584, 4096, 512]);
    let v: Vec<u32> = page_chunks(4096 + 1024, 1024, 4096).collect();
    assert_eq!(v, [1024]);
    assert_eq!(page_chunks(0, 0, 4096).count(), 0);
    // A 1 MiB multi-page segment walks like 256 pages: split at 16 KiB.
    let l = SplitLimits { max_sectors: 32, max_segments: 0, max_segment_size: 0, logical_block_size: 512 };
    assert_eq!(split_point(page_chunks(0, 1 << 20, 4096), &l), SplitPoint::At(32));
    // 8 KiB segments starting mid-page: same split as page by page.
    let segs = [8192u32; 8];
    let chunks = segs.iter().flat_map(|&len| page_chunks(2048, len, 4096));
    assert_eq!(split_point(chunks, &l), SplitPoint::At(32));
}

/// A small deterministic generator (no crates on the host tests).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self, n: u32) -> u32 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) % u64::from(n)) as u32
    }
}

#[test]
fn split_point_pages_is_the_page_by_page_walk() {
    let mut r = Lcg(7);
    let page = 4096;
    for case in 0..20000 {
        let lim = SplitLimits {
            max_sectors: [1, 7, 8, 32, 255, 256, 2048, 2560][r.next(8) as usize],
            max_segments: [0, 1, 2, 4, 128][r.next(5) as usize],
            max_segment_size: [0, 512, 4096, 6000, 65536][r.next(5) as usize],
            logical_block_size: [512, 4096][r.next(2) as usize],
        };
        let bvecs: Vec<(u32, u32)> = (0..r.next(12))
            .map(|_| {
                let off = if r.next(2) == 0 { 0 } else { r.next(8) * 512 };
                let len = match r.next(4) {
                    0 => 512 * (1 + r.next(8)),
                    1 => page - off,
                    2 => page * (1 + r.next(300)) - off,
                    _ => 0,
                };
                (off, len)
            })
            .collect();
        let pages = split_point(
            bvecs.iter().flat_map(|&(o, l)| page_chunks(o, l, page)),
            &lim,
        );
        assert_eq!(
            split_point_pages(bvecs.iter().copied(), page, &lim),
            pages,
            "case {case}: {lim:?} {bvecs:?}"
        );
    }
}
