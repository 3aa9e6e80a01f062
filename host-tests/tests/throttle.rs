use rnull_host_tests::throttle::*;

const MIB: u64 = 1 << 20;

#[test]
fn budget_per_tick_as_c() {
    // 50 MiB/s, 50 ticks/s: C rounds (1 << 20) / 50 down first
    assert_eq!(bytes_per_tick(50), (MIB / 50 * 50) as i64);
    assert_eq!(TICK_NS, 20_000_000);
}

#[test]
fn admits_a_ticks_worth_then_waits() {
    let t = Throttle::new(50); // 1 MiB per tick
    for i in 0..16 {
        assert!(t.admit(64 << 10, 1000 + i), "request {i}");
    }
    assert!(!t.admit(4096, 2000)); // spent
    assert!(!t.admit(4096, TICK_NS - 1));
    assert!(t.admit(4096, TICK_NS)); // the next tick
}

#[test]
fn the_rate_holds_over_time() {
    // 10 MiB/s, 128 KiB requests, offered as fast as possible for 2 s of
    // simulated time in 1 ms steps: about 20 MiB go through.
    let t = Throttle::new(10);
    let mut bytes = 0u64;
    for ms in 0..2000u64 {
        while t.admit(128 << 10, ms * 1_000_000) {
            bytes += 128 << 10;
        }
    }
    let mib = bytes as f64 / MIB as f64;
    assert!((19.0..=21.0).contains(&mib), "{mib} MiB in 2 s");
}

#[test]
fn requests_larger_than_a_tick_still_go_at_the_rate() {
    // 10 MiB/s is 204.8 KiB per tick; 1 MiB requests go one per 5 ticks.
    let t = Throttle::new(10);
    let mut n = 0;
    for ms in 0..1000u64 {
        if t.admit(MIB, ms * 1_000_000) {
            n += 1;
        }
    }
    assert!((9..=11).contains(&n), "{n} MiB in 1 s");
}
