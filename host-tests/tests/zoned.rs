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

/// C null_blk's `null_zone_valid_read_len()` and the adjustment its
/// `null_transfer()` makes for a segment that starts inside a sector.
fn c_valid_read_len(zone: &Zone, pos: u64, len: u64) -> u64 {
    let sector = pos >> 9;
    let nr_sectors = len.div_ceil(512);
    let valid = if zone.kind == ZoneType::Conventional || sector + nr_sectors <= zone.wp {
        len
    } else if sector > zone.wp {
        0
    } else {
        (zone.wp - sector) << 9
    };
    if valid != 0 && valid != len {
        valid - (pos & 511)
    } else {
        valid
    }
}

fn seq_zone(start: u64, wp: u64) -> Zone {
    Zone {
        start,
        len: 4 * MB,
        capacity: 4 * MB,
        wp,
        kind: ZoneType::SeqWriteRequired,
        cond: Cond::ImpOpen,
    }
}

#[test]
fn valid_read_len_stops_at_the_write_pointer() {
    let s = 4 * MB;
    let z = seq_zone(s, s + 8); // 4 KiB written
    let at = |sector: u64| sector * 512;
    assert_eq!(z.valid_read_len(at(s), 8192), 4096); // 4 KiB data, 4 KiB past the wp
    assert_eq!(z.valid_read_len(at(s), 4096), 4096);
    assert_eq!(z.valid_read_len(at(s), 512), 512);
    assert_eq!(z.valid_read_len(at(s + 4), 1024), 1024);
    assert_eq!(z.valid_read_len(at(s + 4), 4096), 2048);
    assert_eq!(z.valid_read_len(at(s + 8), 4096), 0); // at the wp
    assert_eq!(z.valid_read_len(at(s + 100), 4096), 0); // past it
    assert_eq!(z.valid_read_len(at(s), 0), 0);
    // inside a sector: the bytes before the wp, to the byte
    assert_eq!(z.valid_read_len(at(s + 7) + 256, 512), 256);
    assert_eq!(z.valid_read_len(at(s + 7) + 2, 100), 100);
    assert_eq!(z.valid_read_len(at(s + 8) + 2, 100), 0);
    // an empty zone reads no data, a finished one all of it
    assert_eq!(seq_zone(s, s).valid_read_len(at(s), 8192), 0);
    assert_eq!(seq_zone(s, s + 4 * MB).valid_read_len(at(s + 4 * MB - 8), 4096), 4096);
    // a full zone of a smaller capacity: nothing past the capacity
    let small = Zone { capacity: 2 * MB, wp: s + 2 * MB, cond: Cond::Full, ..z };
    assert_eq!(small.valid_read_len(at(s + 2 * MB - 4), 4096), 2048);
    assert_eq!(small.valid_read_len(at(s + 2 * MB), 4096), 0);
    // read-only (no write pointer) and conventional zones: all of it
    let ro = Zone { wp: INVALID_WP, cond: Cond::ReadOnly, ..z };
    assert_eq!(ro.valid_read_len(at(s), 8192), 8192);
    assert_eq!(ro.valid_read_len(at(s + 4 * MB - 8), 4096), 4096);
    let conv = Zone { start: 0, wp: 0, kind: ZoneType::Conventional, cond: Cond::NotWp, ..z };
    assert_eq!(conv.valid_read_len(0, 8192), 8192);
    assert_eq!(conv.valid_read_len(at(100) + 3, 999), 999);
}

#[test]
fn valid_read_len_is_c_null_blks_for_whole_sectors() {
    // C counts whole sectors from the one a segment starts in: the same for
    // every segment that starts on a sector boundary, and never less for one
    // that starts inside a sector (there it takes the bytes of the sector
    // that crosses the wp as data: at most the offset in the sector)
    let s = 4 * MB;
    let mut n = 0;
    for wp in [s, s + 1, s + 8, s + 9, s + 4 * MB - 1, s + 4 * MB, INVALID_WP] {
        let z = seq_zone(s, wp);
        for sector in (s..s + 24).chain(s + 4 * MB - 16..s + 4 * MB) {
            for len in (1..=4096u64).step_by(97).chain([512, 1024, 4096, 8192]) {
                for off in [0u64, 1, 2, 256, 510, 511] {
                    let pos = sector * 512 + off;
                    let ours = z.valid_read_len(pos, len);
                    let c = c_valid_read_len(&z, pos, len);
                    assert!(ours <= len);
                    // the bytes before the wp, exactly
                    let want = (wp.saturating_mul(512)).saturating_sub(pos).min(len);
                    assert_eq!(ours, want, "wp {wp} pos {pos} len {len}");
                    if off == 0 {
                        assert_eq!(ours, c, "wp {wp} pos {pos} len {len}");
                    } else {
                        assert!(c >= ours && c - ours <= off, "wp {wp} pos {pos} len {len}: {c} vs {ours}");
                    }
                    n += 1;
                }
            }
        }
    }
    assert!(n > 10_000);
}

#[test]
fn read_len_of_zones() {
    let mut z = zones(ZonedConfig { nr_conv: 1, ..cfg(4) }, 16);
    let s = 4 * MB;
    let at = |sector: u64| sector * 512;
    // conventional zone: all of it, written or not
    assert_eq!(z.read_len(0, 8192), Ok(8192));
    // empty sequential zone: nothing
    assert_eq!(z.read_len(at(s), 8192), Ok(0));
    // 4 KiB written at its start: those, then 0xFF
    z.write(s, 8, false).unwrap();
    assert_eq!(z.read_len(at(s), 8192), Ok(4096));
    assert_eq!(z.read(s, 16), Ok(8));
    // finished: all of it; reset: nothing again
    z.mgmt(Mgmt::Finish, s, |_, _| ()).unwrap();
    assert_eq!(z.read_len(at(s + 4 * MB - 16), 8192), Ok(8192));
    z.mgmt(Mgmt::Reset, s, |_, _| ()).unwrap();
    assert_eq!(z.read_len(at(s), 8192), Ok(0));
    // the zone of the read's first byte counts
    z.write(2 * s, 8, false).unwrap();
    assert_eq!(z.read_len(at(2 * s) + 511, 1), Ok(1));
    assert_eq!(z.read_len(at(2 * s + 8), 1), Ok(0));
    // read-only: all; offline: refused
    z.set_cond(2 * s, Cond::ReadOnly, |_, _| ()).unwrap();
    assert_eq!(z.read_len(at(2 * s), 8192), Ok(8192));
    z.set_cond(3 * s, Cond::Offline, |_, _| ()).unwrap();
    assert_eq!(z.read_len(at(3 * s), 8192), Err(ZoneError::Io));
    // past the device
    assert_eq!(z.read_len(at(16 * MB), 512), Err(ZoneError::Io));
}
