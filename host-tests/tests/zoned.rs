use rnull_host_tests::zoned::*;

const MB: u64 = 2048; // sectors

fn zones(cfg: ZonedConfig, mb: u64) -> Zones<Vec<Zone>> {
    let layout = cfg.layout(mb * MB, 512).unwrap();
    let blank = Zone { start: 0, len: 0, capacity: 0, wp: 0, kind: ZoneType::Conventional, cond: Cond::NotWp };
    Zones::new(layout, vec![blank; layout.nr_zones as usize])
}

fn cfg(zone_size_mb: u64) -> ZonedConfig {
    ZonedConfig { zone_size_mb, ..ZonedConfig::default() }
}

#[test]
fn layout_as_null_blk() {
    let l = ZonedConfig { zone_size_mb: 4, nr_conv: 2, ..ZonedConfig::default() }.layout(1024 * MB, 4096).unwrap();
    assert_eq!(l.zone_sectors, 4 * MB);
    assert_eq!(l.nr_zones, 256);
    assert_eq!(l.capacity_sectors, 4 * MB);
    assert_eq!(l.append_max_sectors, 4 * MB as u32); // capped at the capacity
    // a smaller last zone
    let z = zones(cfg(4), 10);
    assert_eq!(z.layout().nr_zones, 3);
    assert_eq!(z.report(0, 10)[2].len, 2 * MB);
    assert_eq!(z.report(9 * MB, 10).len(), 1);
    assert_eq!(z.report(100 * MB, 10).len(), 0);
    // limits at or above the sequential zones are no limits
    let l = ZonedConfig { zone_size_mb: 4, max_open: 8, max_active: 8, ..ZonedConfig::default() }
        .layout(32 * MB, 512)
        .unwrap();
    assert_eq!((l.max_open, l.max_active), (0, 0));
}

#[test]
fn layout_refusals() {
    let e = |c: ZonedConfig, mb: u64| c.layout(mb * MB, 512).unwrap_err();
    assert_eq!(e(cfg(0), 64), LayoutError::ZoneSize);
    assert_eq!(e(cfg(3), 64), LayoutError::ZoneSize);
    assert_eq!(e(cfg(128), 64), LayoutError::ZoneSizeOverCapacity);
    assert_eq!(e(ZonedConfig { zone_capacity_mb: 8, ..cfg(4) }, 64), LayoutError::ZoneCapacity);
    assert_eq!(e(ZonedConfig { zone_capacity_mb: 2, ..cfg(4) }, 10), LayoutError::SmallLastZone);
    assert_eq!(e(ZonedConfig { nr_conv: 16, ..cfg(4) }, 64), LayoutError::NrConv);
    assert_eq!(e(ZonedConfig { max_open: 3, max_active: 2, ..cfg(4) }, 64), LayoutError::MaxOpen);
    assert_eq!(LayoutError::ZoneSize.explain().0, "zone_size");
}

#[test]
fn sequential_writes_and_appends() {
    let mut z = zones(ZonedConfig { nr_conv: 1, ..cfg(4) }, 16);
    // conventional: anywhere, no append
    assert_eq!(z.write(100, 8, false), Ok(100));
    assert_eq!(z.write(100, 8, true), Err(ZoneError::Io));
    let s = 4 * MB;
    assert_eq!(z.write(s + 8, 8, false), Err(ZoneError::Io)); // not at the wp
    assert_eq!(z.write(s, 8, false), Ok(s));
    assert_eq!(z.report(s, 1)[0].cond, Cond::ImpOpen);
    assert_eq!(z.write(s + 100, 8, true), Ok(s + 8)); // append goes to the wp
    assert_eq!(z.report(s, 1)[0].wp, s + 16);
    // reads: data below the wp only
    assert_eq!(z.read(s, 32), Ok(16));
    assert_eq!(z.read(s + 20, 8), Ok(0));
    assert_eq!(z.read(0, 32), Ok(32));
    // fill the zone: full, then no more writes
    assert_eq!(z.write(s + 16, 4 * MB - 16, false), Ok(s + 16));
    assert_eq!(z.report(s, 1)[0].cond, Cond::Full);
    assert_eq!(z.write(s + 4 * MB, 8, false), Ok(s + 4 * MB)); // the next zone
    assert_eq!(z.write(s, 8, true), Err(ZoneError::Io));
    // past the zone's end
    assert_eq!(z.write(2 * s, 4 * MB + 8, false), Err(ZoneError::Io));
}

#[test]
fn zone_capacity_below_size() {
    let mut z = zones(ZonedConfig { zone_capacity_mb: 2, ..cfg(4) }, 16);
    assert_eq!(z.report(0, 1)[0].capacity, 2 * MB);
    assert_eq!(z.write(0, 2 * MB + 8, false), Err(ZoneError::Io));
    assert_eq!(z.write(0, 2 * MB, false), Ok(0));
    assert_eq!(z.report(0, 1)[0].cond, Cond::Full);
}

#[test]
fn management() {
    let mut z = zones(cfg(4), 16);
    let mut discarded = vec![];
    assert_eq!(z.mgmt(Mgmt::Open, 0, |_, _| ()), Ok(()));
    assert_eq!(z.report(0, 1)[0].cond, Cond::ExpOpen);
    assert_eq!(z.mgmt(Mgmt::Open, 0, |_, _| ()), Ok(())); // again: fine
    assert_eq!(z.mgmt(Mgmt::Close, 0, |_, _| ()), Ok(()));
    assert_eq!(z.report(0, 1)[0].cond, Cond::Empty); // nothing written
    z.write(0, 8, false).unwrap();
    assert_eq!(z.mgmt(Mgmt::Close, 0, |_, _| ()), Ok(()));
    assert_eq!(z.report(0, 1)[0].cond, Cond::Closed);
    assert_eq!(z.mgmt(Mgmt::Finish, 0, |_, _| ()), Ok(()));
    assert_eq!(z.report(0, 1)[0], Zone { start: 0, len: 4 * MB, capacity: 4 * MB, wp: 4 * MB, kind: ZoneType::SeqWriteRequired, cond: Cond::Full });
    assert_eq!(z.mgmt(Mgmt::Close, 0, |_, _| ()), Err(ZoneError::Io));
    assert_eq!(z.mgmt(Mgmt::Open, 0, |_, _| ()), Err(ZoneError::Io));
    assert_eq!(z.mgmt(Mgmt::Reset, 0, |s, n| discarded.push((s, n))), Ok(()));
    assert_eq!(discarded, [(0, 4 * MB)]);
    assert_eq!(z.report(0, 1)[0].cond, Cond::Empty);
    z.write(4 * MB, 8, false).unwrap();
    z.write(8 * MB, 8, false).unwrap();
    discarded.clear();
    assert_eq!(z.mgmt(Mgmt::ResetAll, 0, |s, n| discarded.push((s, n))), Ok(()));
    assert_eq!(discarded, [(4 * MB, 4 * MB), (8 * MB, 4 * MB)]);
    assert!(z.report(0, 4).iter().all(|z| z.cond == Cond::Empty && z.wp == z.start));
}

#[test]
fn open_and_active_limits() {
    // 8 sequential zones, at most 2 open and 3 active
    let mut z = zones(ZonedConfig { max_open: 2, max_active: 3, ..cfg(1) }, 8);
    let zs = MB;
    z.write(0, 8, false).unwrap();
    z.write(zs, 8, false).unwrap();
    assert_eq!(z.counts(), (2, 0, 0));
    // a third implicit open closes the first one
    z.write(2 * zs, 8, false).unwrap();
    assert_eq!(z.counts(), (2, 0, 1));
    assert_eq!(z.report(0, 1)[0].cond, Cond::Closed);
    // three active now: a fourth zone is refused
    assert_eq!(z.write(3 * zs, 8, false), Err(ZoneError::ActiveResource));
    // explicit opens count against the open limit
    let mut z = zones(ZonedConfig { max_open: 2, ..cfg(1) }, 8);
    z.mgmt(Mgmt::Open, 0, |_, _| ()).unwrap();
    z.mgmt(Mgmt::Open, zs, |_, _| ()).unwrap();
    assert_eq!(z.mgmt(Mgmt::Open, 2 * zs, |_, _| ()), Err(ZoneError::OpenResource));
    assert_eq!(z.write(2 * zs, 8, false), Err(ZoneError::OpenResource));
    // a zone written full frees its open slot
    z.write(0, zs, false).unwrap();
    assert_eq!(z.counts(), (0, 1, 0));
    z.write(2 * zs, 8, false).unwrap();
    assert_eq!(z.counts(), (1, 1, 0));
}

#[test]
fn read_only_and_offline() {
    let mut z = zones(ZonedConfig { max_open: 2, ..cfg(1) }, 8);
    z.write(0, 8, false).unwrap();
    assert_eq!(z.set_cond(0, Cond::ReadOnly, |_, _| ()), Ok(()));
    assert_eq!(z.counts(), (0, 0, 0)); // its open slot freed
    assert_eq!(z.report(0, 1)[0].wp, INVALID_WP);
    assert_eq!(z.write(0, 8, false), Err(ZoneError::Io));
    assert_eq!(z.write(0, 8, true), Err(ZoneError::Io));
    assert_eq!(z.read(0, 8), Ok(8));
    assert_eq!(z.mgmt(Mgmt::Reset, 0, |_, _| ()), Err(ZoneError::Io));
    // again: back to empty
    assert_eq!(z.set_cond(0, Cond::ReadOnly, |_, _| ()), Ok(()));
    assert_eq!(z.report(0, 1)[0].cond, Cond::Empty);
    assert_eq!(z.set_cond(MB, Cond::Offline, |_, _| ()), Ok(()));
    assert_eq!(z.read(MB, 8), Err(ZoneError::Io));
    assert_eq!(z.set_cond(MB, Cond::Full, |_, _| ()), Err(ZoneError::Io));
}

#[test]
fn zone_full_starts_full() {
    let z = zones(ZonedConfig { full: true, nr_conv: 1, ..cfg(4) }, 16);
    assert_eq!(z.report(0, 1)[0].cond, Cond::NotWp);
    assert!(z.report(4 * MB, 3).iter().all(|z| z.cond == Cond::Full && z.wp == z.start + z.capacity));
}

#[test]
fn a_failed_data_move_leaves_the_write_pointer() {
    let mut z = zones(cfg(4), 16);
    assert_eq!(z.start_write(0, 8, false), Ok(0));
    // the data did not move: no finish_write
    assert_eq!(z.zone(0).unwrap().wp, 0);
    assert_eq!(z.zone(0).unwrap().cond, Cond::ImpOpen);
    assert_eq!(z.start_write(0, 8, true), Ok(0));
    z.finish_write(0, 8);
    assert_eq!(z.zone(0).unwrap().wp, 8);
    assert_eq!(z.zone(99), None);
}

#[test]
fn zone_numbers_are_a_shift() {
    for size in [1, 4, 64, 256] {
        let z = zones(cfg(size), 1024);
        let zs = size * MB;
        for sector in [0, 1, zs - 1, zs, zs + 1, 3 * zs - 1, 1024 * MB - 1, 1024 * MB, u64::MAX] {
            assert_eq!(z.zone_no(sector), (sector / zs) as usize, "zone_size {size} MB, sector {sector}");
        }
    }
}
