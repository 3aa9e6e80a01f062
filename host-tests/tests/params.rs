use rnull_host_tests::params::*;
use rnull_host_tests::fault::FaultConfig;

fn raw() -> RawParams<'static> {
    RawParams::default()
}

#[test]
fn defaults_match_null_blk() {
    let (c, n) = raw().validate(2).unwrap();
    assert_eq!(n, 1);
    assert_eq!(c.capacity_sectors, 250 * 1024 * 1024 * 2);
    assert_eq!(c.block_size, 512);
    assert_eq!(c.submit_queues, 1);
    assert_eq!(c.poll_queues, 1);
    assert_eq!(c.hw_queue_depth, 64);
    assert_eq!(c.max_sectors, 0);
    assert_eq!(c.queue_mode, QueueMode::Mq);
    assert_eq!(c.irqmode, IrqMode::Softirq);
    assert_eq!(c.completion_nsec, 10_000);
    assert_eq!(c.split_clone, SplitClone::Fast);
    assert!(!c.rotational);
}

#[test]
fn rotational_is_taken_as_given() {
    // C null_blk's `rotational`: a bool, default false, no rule against
    // other parameters (any queue mode, zoned or not, memory-backed or not)
    for (queue_mode, zoned, memory_backed) in [(2, false, false), (0, false, true), (2, true, true)] {
        let p = RawParams { rotational: true, queue_mode, zoned, memory_backed, gb: 1, ..raw() };
        let (c, _) = p.validate(2).unwrap();
        assert!(c.rotational);
        assert_eq!(c.validate(2), Ok(()));
        assert!(!RawParams { rotational: false, ..p }.validate(2).unwrap().0.rotational);
    }
    assert_eq!(configfs_name("rotational"), "rotational");
}

#[test]
fn sector_helpers() {
    assert_eq!(gb_to_sectors(1), 2_097_152);
    assert_eq!(mb_to_sectors(1), 2048);
    assert_eq!(mb_to_sectors(0), 0);
    assert_eq!(gb_to_sectors(MAX_GB as u64), (MAX_GB as u64) << 21);
}

#[test]
fn block_size() {
    for bs in [512, 1024, 2048, 4096] {
        assert_eq!(validate_bs(bs).unwrap(), bs as u32);
    }
    for bs in [-512, 0, 256, 511, 513, 1000, 3072, 8192, i32::MAX as i64] {
        let e = validate_bs(bs).unwrap_err();
        assert_eq!(e.name, "bs");
        assert_eq!(e.value, Value::Int(bs));
    }
}

#[test]
fn max_sectors() {
    assert_eq!(validate_max_sectors(0, 512).unwrap(), 0);
    assert_eq!(validate_max_sectors(8, 512).unwrap(), 8);
    assert_eq!(validate_max_sectors(32, 4096).unwrap(), 32);
    assert_eq!(validate_max_sectors(2560, 512).unwrap(), 2560);
    assert_eq!(validate_max_sectors(9, 512).unwrap(), 9);
    // below a page, above the cap, not a multiple of the block size, negative
    // No upper bound, as C: 4 MiB and more are the queue's max_hw_sectors.
    assert_eq!(validate_max_sectors(8192, 512).unwrap(), 8192);
    assert_eq!(validate_max_sectors(1 << 20, 4096).unwrap(), 1 << 20);
    assert_eq!(validate_max_sectors(u32::MAX as i64, 512).unwrap(), u32::MAX);
    for (v, bs) in [(7, 512), (1, 512), (1 << 32, 512), (12, 4096), (-8, 512)] {
        assert_eq!(validate_max_sectors(v, bs).unwrap_err().name, "max_sectors", "{v} {bs}");
    }
}

#[test]
fn gb_range() {
    assert_eq!(validate_gb(1).unwrap(), 2_097_152);
    assert!(validate_gb(0).is_err());
    assert!(validate_gb(-1).is_err());
    assert!(validate_gb(MAX_GB as i64 + 1).is_err());
}

#[test]
fn queues() {
    assert_eq!(validate_submit_queues(2, 2).unwrap(), 2);
    assert!(validate_submit_queues(0, 2).is_err());
    assert!(validate_submit_queues(3, 2).is_err());
    assert!(validate_submit_queues(-1, 2).is_err());
    assert_eq!(validate_hw_queue_depth(1).unwrap(), 1);
    assert_eq!(validate_hw_queue_depth(10240).unwrap(), 10240);
    assert!(validate_hw_queue_depth(0).is_err());
    assert!(validate_hw_queue_depth(10241).is_err());
}

#[test]
fn modes() {
    assert_eq!(validate_queue_mode(0).unwrap(), QueueMode::Bio);
    assert_eq!(validate_queue_mode(2).unwrap(), QueueMode::Mq);
    assert!(validate_queue_mode(1).is_err());
    assert!(validate_queue_mode(3).is_err());
    assert_eq!(validate_irqmode(2).unwrap(), IrqMode::Timer);
    assert!(validate_irqmode(-1).is_err());
    assert!(validate_irqmode(3).is_err());
    assert_eq!(validate_split_clone(b"deep\n").unwrap(), SplitClone::Deep);
    assert_eq!(validate_split_clone(b"fast").unwrap(), SplitClone::Fast);
    for s in [&b""[..], b"Fast", b"deep\n\n", b"slow", b"\xff"] {
        assert_eq!(validate_split_clone(s).unwrap_err().value, Value::Text);
    }
    assert!(validate_completion_nsec(10_000_000_000).is_ok());
    assert!(validate_completion_nsec(10_000_000_001).is_err());
    assert!(validate_discard(true, false).is_err());
    assert!(validate_discard(true, true).unwrap());
}

#[test]
fn first_bad_parameter_is_named() {
    let mut r = raw();
    r.bs = 1000;
    r.hw_queue_depth = 0;
    let e = r.validate(2).unwrap_err();
    assert_eq!(e.to_string(), "invalid bs=1000: must be a power of two from 512 to 4096");
    let mut r = raw();
    r.nr_devices = 5000;
    assert_eq!(r.validate(2).unwrap_err().name, "nr_devices");
    let mut r = raw();
    r.split_clone = b"x";
    assert_eq!(r.validate(2).unwrap_err().to_string(), "invalid split_clone: must be fast or deep");
}

#[test]
fn huge_unsigned_values_are_shown_as_given() {
    let e = validate_completion_nsec(u64::MAX).unwrap_err();
    assert_eq!(e.value, Value::UInt(u64::MAX));
    assert!(e.to_string().starts_with("invalid completion_nsec=18446744073709551615:"));
}

#[test]
fn poll_queues() {
    assert_eq!(validate_poll_queues(0, 2).unwrap(), 0);
    assert_eq!(validate_poll_queues(2, 2).unwrap(), 2);
    for q in [-1, 3, i32::MAX as i64] {
        let e = validate_poll_queues(q, 2).unwrap_err();
        assert_eq!(e.name, "poll_queues");
        assert_eq!(e.value, Value::Int(q));
    }
    let e = RawParams { poll_queues: 5, ..raw() }.validate(4).unwrap_err();
    assert_eq!(e.to_string(), "invalid poll_queues=5: must be from 0 to the number of possible CPUs");
    let (c, _) = RawParams { poll_queues: 0, ..raw() }.validate(4).unwrap();
    assert_eq!(c.poll_queues, 0);
}

#[test]
fn fault_parameters() {
    let (c, _) = raw().validate(2).unwrap();
    assert!(!c.timeout_inject.enabled());
    assert!(!c.requeue_inject.enabled());
    let (c, _) = RawParams { timeout: b"1,50,0,-1", requeue: b"1,10,0,-1", ..raw() }
        .validate(2)
        .unwrap();
    assert_eq!(c.timeout_inject.probability, 50);
    assert_eq!(c.requeue_inject.probability, 10);
    let e = RawParams { timeout: b"1,50", ..raw() }.validate(2).unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid timeout: must be <interval>,<probability>,<space>,<times>"
    );
    assert_eq!(RawParams { requeue: b"x", ..raw() }.validate(2).unwrap_err().name, "requeue");
    // init_hctx, as blktests' block/030 loads C null_blk with it
    assert!(!c.init_hctx_inject.enabled());
    let (c, _) = RawParams { init_hctx: b"2,100,3,-1", ..raw() }.validate(2).unwrap();
    assert_eq!(
        c.init_hctx_inject,
        FaultConfig { interval: 2, probability: 100, space: 3, times: -1 }
    );
    assert_eq!(RawParams { init_hctx: b"2,100", ..raw() }.validate(2).unwrap_err().name, "init_hctx");
}

#[test]
fn zoned_parameters() {
    use rnull_host_tests::zoned::ZonedConfig;
    let zoned = |zone: ZonedConfig| RawParams { zoned: true, gb: 1, zone, ..raw() };
    assert!(zoned(ZonedConfig::default()).validate(2).is_ok());
    let e = zoned(ZonedConfig { zone_size_mb: 3, ..ZonedConfig::default() }).validate(2).unwrap_err();
    assert_eq!(e.to_string(), "invalid zone_size=3: must be a non-zero power of two (MiB)");
    let e = zoned(ZonedConfig { zone_size_mb: 2048, ..ZonedConfig::default() }).validate(2).unwrap_err();
    assert_eq!(e.to_string(), "invalid zone_size=2048: must be at most the device size");
    let e = zoned(ZonedConfig { nr_conv: 4, ..ZonedConfig::default() }).validate(2).unwrap_err();
    assert_eq!(e.name, "zone_nr_conv");
    let e = RawParams { queue_mode: 0, ..zoned(ZonedConfig::default()) }.validate(2).unwrap_err();
    assert_eq!(e.to_string(), "invalid zoned=1: must be 0 unless queue_mode=2");
    // not zoned: the zone parameters are not looked at
    assert!(RawParams { zone: ZonedConfig { zone_size_mb: 3, ..ZonedConfig::default() }, ..raw() }
        .validate(2)
        .is_ok());
}

#[test]
fn adjust_like_c() {
    let adjust = |mut r: RawParams<'static>, nr_cpus| {
        let mut done = vec![];
        r.adjust_like_c(nr_cpus, |a| done.push(a));
        (r, done)
    };
    let (r, done) = adjust(RawParams { submit_queues: 16, ..raw() }, 4);
    assert_eq!(done, [Adjusted { name: "submit_queues", from: 16, to: 4 }]);
    assert!(r.validate(4).is_ok());
    let (r, _) = adjust(RawParams { submit_queues: 0, ..raw() }, 4);
    assert_eq!(r.submit_queues, 1);
    let (_, done) = adjust(RawParams { submit_queues: 3, ..raw() }, 4);
    assert!(done.is_empty());
    let (r, done) = adjust(RawParams { zoned: true, gb: 1, queue_mode: 0, ..raw() }, 4);
    assert_eq!(done, [Adjusted { name: "queue_mode", from: 0, to: 2 }]);
    assert!(r.validate(4).is_ok());
    // without the adjustment, refused
    assert!(RawParams { submit_queues: 16, ..raw() }.validate(4).is_err());
    // a configfs device
    let mut c = RawParams { zoned: true, gb: 1, ..raw() }.validate(4).unwrap().0;
    c.queue_mode = QueueMode::Bio;
    c.submit_queues = 9;
    c.poll_queues = 3;
    let mut done = vec![];
    c.adjust_like_c(4, 1, |a| done.push(a.name));
    assert_eq!(done, ["submit_queues", "queue_mode", "poll_queues"]);
    assert_eq!(c.poll_queues, 1);
    assert_eq!(c.validate(4), Ok(()));
    // poll_queues at or below the module's stays
    c.poll_queues = 1;
    c.adjust_like_c(4, 2, |a| panic!("{a:?}"));
    assert_eq!(c.poll_queues, 1);
}

#[test]
fn in_force() {
    let (mut c, _) = RawParams { memory_backed: true, ..raw() }.validate(2).unwrap();
    assert!(!c.blocking);
    c.in_force();
    assert!(c.blocking);
    let (mut c, _) = raw().validate(2).unwrap();
    c.in_force();
    assert!(!c.blocking);
}

#[test]
fn mbps() {
    let (c, _) = RawParams { mbps: 100, ..raw() }.validate(2).unwrap();
    assert_eq!(c.mbps, 100);
    let e = RawParams { mbps: 40961, ..raw() }.validate(2).unwrap_err();
    assert_eq!(e.to_string(), "invalid mbps=40961: must be from 0 (no limit) to 40960 (MiB/s)");
    let e = RawParams { mbps: 10, queue_mode: 0, ..raw() }.validate(2).unwrap_err();
    assert_eq!(e.name, "mbps");
    let (mut c, _) = raw().validate(2).unwrap();
    c.mbps = 10;
    c.queue_mode = QueueMode::Bio;
    assert_eq!(c.validate(2).unwrap_err().name, "mbps");
}
