use rnull_host_tests::fault::*;

fn cfg(s: &str) -> FaultConfig {
    FaultConfig::parse(s.as_bytes()).unwrap()
}

#[test]
fn parse_the_four_fields() {
    assert_eq!(
        cfg("1,50,0,-1"),
        FaultConfig { interval: 1, probability: 50, space: 0, times: -1 }
    );
    assert_eq!(
        cfg("10,100,3,7\n"),
        FaultConfig { interval: 10, probability: 100, space: 3, times: 7 }
    );
    assert_eq!(cfg(""), FaultConfig::default());
    assert!(!cfg("").enabled());
    assert!(cfg("1,1,0,1").enabled());
    assert!(!cfg("1,0,0,-1").enabled());
    assert!(!cfg("1,50,0,0").enabled());
}

#[test]
fn parse_refuses_what_sscanf_would_not_read() {
    for bad in ["1,50,0", "1,50", "x", "1,50,0,-1,", "1,-50,0,-1", "-1,50,0,-1", "1,50,0,-1x",
        "1,50,0,99999999999", "1;50;0;-1", ",,,", "\n"]
    {
        assert_eq!(FaultConfig::parse(bad.as_bytes()), None, "{bad:?}");
    }
    assert_eq!(FaultConfig::parse(b"\xff"), None);
}

#[test]
fn never_and_always() {
    let never = Fault::new(cfg("1,0,0,-1"), 1);
    assert!((0..1000).all(|_| !never.should_fail()));
    let always = Fault::new(cfg("1,100,0,-1"), 1);
    assert!((0..1000).all(|_| always.should_fail()));
    let off = Fault::new(FaultConfig::default(), 1);
    assert!((0..1000).all(|_| !off.should_fail()));
}

#[test]
fn times_limits_the_failures() {
    let f = Fault::new(cfg("1,100,0,3"), 7);
    let n = (0..100).filter(|_| f.should_fail()).count();
    assert_eq!(n, 3);
}

#[test]
fn space_passes_the_first_calls() {
    let f = Fault::new(cfg("1,100,5,-1"), 7);
    let fails: Vec<bool> = (0..8).map(|_| f.should_fail()).collect();
    assert_eq!(fails, [false, false, false, false, true, true, true, true]);
}

#[test]
fn interval_makes_every_nth_call_eligible() {
    let f = Fault::new(cfg("4,100,0,-1"), 7);
    let fails: Vec<bool> = (0..8).map(|_| f.should_fail()).collect();
    assert_eq!(fails, [false, false, false, true, false, false, false, true]);
}

#[test]
fn probability_is_about_right() {
    for p in [10u64, 50, 90] {
        let f = Fault::new(cfg(&format!("1,{p},0,-1")), 0x1234_5678);
        let n = (0..100_000).filter(|_| f.should_fail()).count() as u64;
        assert!((n as i64 - (p * 1000) as i64).abs() < 1500, "p={p}: {n}");
    }
}

#[test]
fn settings_change_at_runtime() {
    let f = Fault::new(FaultConfig::default(), 1);
    assert!(!f.should_fail());
    f.set_probability(100);
    f.set_times(2);
    assert!(f.should_fail());
    assert!(f.should_fail());
    assert!(!f.should_fail()); // times used up
    assert_eq!(f.times(), 0);
    f.set_times(-1);
    f.set_interval(3);
    let fails: Vec<bool> = (0..6).map(|_| f.should_fail()).collect();
    assert_eq!(fails, [false, false, true, false, false, true]);
    f.set_space(3);
    assert!(!f.should_fail() && !f.should_fail());
    assert_eq!((f.probability(), f.interval(), f.space()), (100, 3, 1));
    f.set_verbose(2);
    assert_eq!(f.verbose(), 2);
}
