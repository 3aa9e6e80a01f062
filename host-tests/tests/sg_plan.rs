//! Host tests of rvirtio_blk's pure logic (common/sg_plan.rs).

use rnull_host_tests::sg_plan::*;

const SG: usize = 32; // sizeof(struct scatterlist) on x86_64

#[test]
fn sector_byte_helpers() {
    assert_eq!(sectors_to_bytes(0), 0);
    assert_eq!(sectors_to_bytes(1), 512);
    assert_eq!(sectors_to_bytes(1 << 40), 1u64 << 49);
    assert_eq!(sectors_to_bytes(u64::MAX), u64::MAX); // saturates
    assert_eq!(bytes_to_sectors(511), 0);
    assert_eq!(bytes_to_sectors(4096), 8);
    assert_eq!(nblocks(8, 4096), 1);
    assert_eq!(nblocks(9, 4096), 2);
    assert_eq!(nblocks(9, 512), 9);
}

#[test]
fn inline_entries_by_mode() {
    assert_eq!(first_chunk_entries(false, 126), 2);
    assert_eq!(first_chunk_entries(true, 126), 126);
    assert_eq!(first_chunk_entries(true, 0), 1);
    assert_eq!(pdu_size(48, SG, 2), 48 + 64);
    assert_eq!(pdu_size(48, SG, 126), 48 + 126 * 32);
    assert_eq!(tagset_sg_bytes(2, 128, SG, 2), 2 * 128 * 64);
    assert_eq!(tagset_sg_bytes(1, 256, SG, 126), 256 * 126 * 32);
}

#[test]
fn chained_only_beyond_inline() {
    for n in 1..=2 {
        assert!(!needs_chained_table(n, 2));
        assert_eq!(chained_pool_entries(n, 2), 0);
        assert_eq!(chained_table_bytes(n, 2, SG), 0);
    }
    assert!(needs_chained_table(3, 2));
    // Prealloc mode never chains up to seg_max.
    assert!(!needs_chained_table(126, 126));
    assert_eq!(chained_pool_entries(126, 126), 0);
}

#[test]
fn pool_sizes_follow_sg_pool_index() {
    assert_eq!(sg_pool_entries(1), 8);
    assert_eq!(sg_pool_entries(8), 8);
    assert_eq!(sg_pool_entries(9), 16);
    assert_eq!(sg_pool_entries(33), 64);
    assert_eq!(sg_pool_entries(128), 128);
}

#[test]
fn chained_pool_entries_follow_sg_alloc_table() {
    // 3 segments: inline keeps 1 + link, pool chunk of 2 -> 8-entry pool.
    assert_eq!(chained_pool_entries(3, 2), 8);
    assert_eq!(chained_table_bytes(3, 2, SG), 256);
    // 10 segments: 9 in the pool chunk -> 16-entry pool.
    assert_eq!(chained_pool_entries(10, 2), 16);
    // 126 segments: 125 -> 128-entry pool.
    assert_eq!(chained_pool_entries(126, 2), 128);
    // 129 segments: 128 left fits one chunk exactly.
    assert_eq!(chained_pool_entries(129, 2), 128);
    // 130 segments: 129 left -> 128 (127 used + link) + 2 -> 128 + 8.
    assert_eq!(chained_pool_entries(130, 2), 136);
    // No inline chunk (first_chunk <= 1): all from the pool.
    assert_eq!(chained_pool_entries(2, 1), 8);
    assert_eq!(chained_pool_entries(200, 0), 128 + 128);
}

#[test]
fn commands() {
    let c = setup_cmd(Op::Read, 8).unwrap().unwrap();
    assert_eq!((c.type_, c.sector, c.ranges), (VIRTIO_BLK_T_IN, 8, false));
    let c = setup_cmd(Op::Write, 9).unwrap().unwrap();
    assert_eq!((c.type_, c.sector), (VIRTIO_BLK_T_OUT, 9));
    let c = setup_cmd(Op::Flush, 9).unwrap().unwrap();
    assert_eq!((c.type_, c.sector), (VIRTIO_BLK_T_FLUSH, 0));
    let c = setup_cmd(Op::Discard, 9).unwrap().unwrap();
    assert_eq!((c.type_, c.ranges, c.unmap), (VIRTIO_BLK_T_DISCARD, true, false));
    let c = setup_cmd(Op::WriteZeroes { nounmap: false }, 9).unwrap().unwrap();
    assert_eq!((c.type_, c.unmap), (VIRTIO_BLK_T_WRITE_ZEROES, true));
    let c = setup_cmd(Op::WriteZeroes { nounmap: true }, 9).unwrap().unwrap();
    assert!(!c.unmap);
    assert_eq!(setup_cmd(Op::DrvIn, 0), Ok(None));
    assert_eq!(setup_cmd(Op::Other, 0), Err(CmdError::NotSupported));
}

#[test]
fn ranges_are_little_endian() {
    let r = Range::new(0x0102, 8, true);
    assert_eq!(core::mem::size_of::<Range>(), 16);
    assert_eq!(u64::from_le(r.sector), 0x0102);
    assert_eq!(u32::from_le(r.num_sectors), 8);
    assert_eq!(u32::from_le(r.flags), VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP);
    assert_eq!(u32::from_le(Range::new(0, 1, false).flags), 0);
}

#[test]
fn status_mapping() {
    assert_eq!(result(VIRTIO_BLK_S_OK), Status::Ok);
    assert_eq!(result(VIRTIO_BLK_S_IOERR), Status::IoErr);
    assert_eq!(result(VIRTIO_BLK_S_UNSUPP), Status::NotSupported);
    assert_eq!(result(77), Status::IoErr);
}

#[test]
fn limits_like_c_virtio_blk() {
    // QEMU defaults: seg_max 126, no size_max, discard + write zeroes.
    let c = DevConfig {
        seg_max: Some(126),
        blk_size: Some(512),
        topology: Some((0, 0, 0, 0)),
        discard: Some((0, 0, 1)),
        write_zeroes: Some(0),
        max_dma_size: u64::MAX,
        ..Default::default()
    };
    let l = read_limits(&c);
    assert_eq!(l.max_segments, 126);
    assert_eq!(l.max_segment_size, u32::MAX);
    assert_eq!(l.logical_block_size, 512);
    assert_eq!(l.physical_block_size, 0);
    assert_eq!(l.max_hw_discard_sectors, u32::MAX);
    assert_eq!(l.max_discard_segments, 1);
    assert_eq!(l.discard_granularity, 512);
    assert_eq!(l.max_write_zeroes_sectors, u32::MAX);

    // Missing SEG_MAX -> 1; huge seg_max capped; size_max honoured.
    let l = read_limits(&DevConfig { max_dma_size: 1 << 20, size_max: Some(4096), ..Default::default() });
    assert_eq!((l.max_segments, l.max_segment_size), (1, 4096));
    assert_eq!(l.max_hw_discard_sectors, 0);
    let l = read_limits(&DevConfig { seg_max: Some(u32::MAX), max_dma_size: 4096, ..Default::default() });
    assert_eq!(l.max_segments, MAX_SG_ELEMS - 2);
    assert_eq!(l.max_segment_size, 4096);

    // Topology multiplies by the logical block size.
    let l = read_limits(&DevConfig {
        blk_size: Some(4096),
        topology: Some((1, 2, 3, 4)),
        discard: Some((8, 100, 500)),
        max_dma_size: u64::MAX,
        ..Default::default()
    });
    assert_eq!(l.physical_block_size, 8192);
    assert_eq!(l.alignment_offset, 8192);
    assert_eq!(l.io_min, 3 * 4096);
    assert_eq!(l.io_opt, 4 * 4096);
    assert_eq!(l.max_hw_discard_sectors, 100);
    assert_eq!(l.max_discard_segments, MAX_DISCARD_SEGMENTS as u16);
    assert_eq!(l.discard_granularity, 8 * 512);
}

#[test]
fn queue_count_and_depth() {
    // min_not_zero(num_request_queues, the device's); the CPUs truncate it
    // in the kernel (blk_mq_num_possible_queues)
    assert_eq!(num_vqs(None, 0), Ok(1));
    assert_eq!(num_vqs(None, 4), Ok(1));
    assert_eq!(num_vqs(Some(4), 0), Ok(4));
    assert_eq!(num_vqs(Some(4), 3), Ok(3));
    assert_eq!(num_vqs(Some(2), 8), Ok(2));
    assert_eq!(num_vqs(Some(2), u32::MAX), Ok(2));
    assert_eq!(num_vqs(Some(0), 0), Err(()));
    // Poll queues leave at least one queue with interrupts (C virtio_blk).
    assert_eq!(poll_vqs(2, 1), 1);
    assert_eq!(poll_vqs(2, 4), 1);
    assert_eq!(poll_vqs(1, 1), 0);
    assert_eq!(poll_vqs(4, 0), 0);
    assert_eq!(poll_vqs(0, 1), 0);
    assert_eq!(queue_depth(0, 256, true), 256);
    assert_eq!(queue_depth(0, 256, false), 128);
    assert_eq!(queue_depth(64, 256, true), 64);
}

#[test]
fn disk_names() {
    let mut b = [0u8; 32];
    let mut name = |i| {
        let n = name_format(b"rvd", i, &mut b).unwrap();
        String::from_utf8(b[..n].to_vec()).unwrap()
    };
    assert_eq!(name(0), "rvda");
    assert_eq!(name(25), "rvdz");
    assert_eq!(name(26), "rvdaa");
    assert_eq!(name(27), "rvdab");
    assert_eq!(name(26 + 26 * 26), "rvdaaa");
    let mut small = [0u8; 5];
    assert_eq!(name_format(b"rvd", 26, &mut small), None);
}

#[test]
fn serial_and_cache_type() {
    assert_eq!(serial_len(b"abc\0\0\0"), 3);
    assert_eq!(serial_len(&[b'x'; 20]), 20);
    assert_eq!(serial_len(&[b'x'; 25]), 20);
    assert_eq!(parse_cache_type(b"write back\n"), Some(1));
    assert_eq!(parse_cache_type(b"write through"), Some(0));
    assert_eq!(parse_cache_type(b"writeback"), None);
}

#[test]
fn data_direction() {
    assert!(!data_out(VIRTIO_BLK_T_IN));
    assert!(data_out(VIRTIO_BLK_T_OUT));
    assert!(!data_out(VIRTIO_BLK_T_FLUSH));
    assert!(!data_out(VIRTIO_BLK_T_GET_ID));
    // The range tables of discard and write zeroes go to the device.
    assert!(data_out(VIRTIO_BLK_T_DISCARD));
    assert!(data_out(VIRTIO_BLK_T_WRITE_ZEROES));
}

#[test]
fn module_parameters() {
    let ok = Params::default();
    assert_eq!(check_params(&ok, 2), Ok(()));
    let all = Params { num_request_queues: 2, queue_depth: MAX_QUEUE_DEPTH, sg_prealloc: 1, seg_max: MAX_SG_ELEMS - 2, poll_queues: 2 };
    assert_eq!(check_params(&all, 2), Ok(()));
    let bad = |p: Params| check_params(&p, 2).unwrap_err();
    // num_request_queues takes any value, as C virtio_blk's
    assert_eq!(check_params(&Params { num_request_queues: u32::MAX, ..ok }, 2), Ok(()));
    let e = bad(Params { queue_depth: MAX_QUEUE_DEPTH + 1, ..ok });
    assert_eq!((e.name, e.max), ("queue_depth", 10240));
    assert_eq!(bad(Params { sg_prealloc: 2, ..ok }).name, "sg_prealloc");
    let e = bad(Params { poll_queues: 3, ..ok });
    assert_eq!((e.name, e.value, e.min, e.max), ("poll_queues", 3, 0, 2));
    assert_eq!(bad(Params { sg_prealloc: u32::MAX, ..ok }).name, "sg_prealloc");
    let e = bad(Params { seg_max: MAX_SG_ELEMS - 1, ..ok });
    assert_eq!((e.name, e.max), ("seg_max", 32766));
    // the first bad one is named
    assert_eq!(bad(Params { queue_depth: MAX_QUEUE_DEPTH + 1, sg_prealloc: 5, ..ok }).name, "queue_depth");
}

#[test]
fn seg_max_parameter_caps_segments() {
    let dev = read_limits(&DevConfig {
        seg_max: Some(126),
        discard: Some((0, 0, 0)),
        max_dma_size: u64::MAX,
        ..Default::default()
    });
    assert_eq!(cap_segments(dev, 0), dev);
    for n in [1, 2, 3] {
        let l = cap_segments(dev, n);
        assert_eq!(l.max_segments, n);
        // discard ranges are one buffer: not capped
        assert_eq!(l.max_discard_segments, dev.max_discard_segments);
        assert_eq!(Limits { max_segments: dev.max_segments, ..l }, dev);
    }
    // never more than the device allows
    assert_eq!(cap_segments(dev, 1000).max_segments, 126);
    // the inline/chained boundary at the capped values
    assert_eq!(first_chunk_entries(false, cap_segments(dev, 3).max_segments), 2);
    assert_eq!(first_chunk_entries(true, cap_segments(dev, 3).max_segments), 3);
}
