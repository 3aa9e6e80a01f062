//! The validators behind rnull_split's configfs attributes (`size` in MiB,
//! whole-configuration check at `power=1`, attribute names in messages).

use rnull_host_tests::params::*;

fn config() -> DeviceConfig {
    RawParams::default().validate(2).unwrap().0
}

#[test]
fn size_mb() {
    assert_eq!(validate_size_mb(1).unwrap(), 2048);
    assert_eq!(validate_size_mb(1024).unwrap(), gb_to_sectors(1));
    assert_eq!(validate_size_mb(MAX_SIZE_MB).unwrap(), gb_to_sectors(MAX_GB as u64));
    for mb in [0, MAX_SIZE_MB + 1, u64::MAX] {
        let e = validate_size_mb(mb).unwrap_err();
        assert_eq!(e.name, "size");
        assert_eq!(e.value, Value::UInt(mb));
    }
    assert_eq!(
        validate_size_mb(0).unwrap_err().to_string(),
        "invalid size=0: must be from 1 to 1073741824 (MiB)"
    );
}

#[test]
fn attribute_names() {
    assert_eq!(configfs_name("gb"), "size");
    assert_eq!(configfs_name("bs"), "blocksize");
    for same in ["max_sectors", "queue_mode", "irqmode", "submit_queues", "poll_queues", "split_clone"] {
        assert_eq!(configfs_name(same), same);
    }
    let e = validate_bs(1000).unwrap_err().for_configfs();
    assert_eq!(
        e.to_string(),
        "invalid blocksize=1000: must be a power of two from 512 to 4096"
    );
    let e = validate_queue_mode(1).unwrap_err().for_configfs();
    assert_eq!(e.name, "queue_mode");
}

#[test]
fn whole_config_defaults_ok() {
    assert_eq!(config().validate(2), Ok(()));
    assert_eq!(config().validate(1), Ok(()));
}

#[test]
fn whole_config_rules_between_fields() {
    // max_sectors must be a multiple of the block size in sectors
    let c = DeviceConfig { block_size: 4096, max_sectors: 12, ..config() };
    assert_eq!(c.validate(2).unwrap_err().name, "max_sectors");
    let c = DeviceConfig { block_size: 4096, max_sectors: 16, ..config() };
    assert_eq!(c.validate(2), Ok(()));
    // discard needs memory_backed
    let c = DeviceConfig { discard: true, ..config() };
    assert_eq!(c.validate(2).unwrap_err().name, "discard");
    let c = DeviceConfig { discard: true, memory_backed: true, ..config() };
    assert_eq!(c.validate(2), Ok(()));
    // more queues than CPUs
    let c = DeviceConfig { submit_queues: 3, ..config() };
    assert_eq!(c.validate(2).unwrap_err().name, "submit_queues");
}

#[test]
fn whole_config_every_field_again() {
    let bad = [
        (DeviceConfig { block_size: 1000, ..config() }, "bs"),
        (DeviceConfig { block_size: 8192, ..config() }, "bs"),
        (DeviceConfig { capacity_sectors: 0, ..config() }, "size"),
        (
            DeviceConfig { capacity_sectors: gb_to_sectors(MAX_GB as u64) + 1, ..config() },
            "size",
        ),
        (DeviceConfig { max_sectors: 4, ..config() }, "max_sectors"),
        (DeviceConfig { max_sectors: 2561, ..config() }, "max_sectors"),
        (DeviceConfig { submit_queues: 0, ..config() }, "submit_queues"),
        (DeviceConfig { poll_queues: 3, ..config() }, "poll_queues"),
        (DeviceConfig { hw_queue_depth: 0, ..config() }, "hw_queue_depth"),
        (DeviceConfig { hw_queue_depth: 10241, ..config() }, "hw_queue_depth"),
        (
            DeviceConfig { completion_nsec: MAX_COMPLETION_NSEC + 1, ..config() },
            "completion_nsec",
        ),
    ];
    for (c, name) in bad {
        let e = c.validate(2).unwrap_err();
        assert_eq!(e.name, name, "{c:?}");
    }
    let e = DeviceConfig { block_size: 1000, ..config() }
        .validate(2)
        .unwrap_err()
        .for_configfs();
    assert_eq!(e.name, "blocksize");
}

#[test]
fn load_time_names() {
    assert!(is_load_time_name(b"rnullb0", "rnullb", 1));
    assert!(is_load_time_name(b"nullb0", "nullb", 1));
    assert!(!is_load_time_name(b"rnullb0", "nullb", 1));
    assert!(is_load_time_name(b"rnullb1", "rnullb", 2));
    assert!(is_load_time_name(b"rnullb1023", "rnullb", 1024));
    for (name, n) in [
        (&b"rnullb0"[..], 0),
        (b"rnullb1", 1),
        (b"rnullb01", 2),
        (b"rnullb", 1),
        (b"rnullb0x", 1),
        (b"rnullb-1", 1),
        (b"rnullb99999999999", 1024),
        (b"nullb0", 1),
        (b"disk0", 1),
        (b"Rnullb0", 1),
    ] {
        assert!(!is_load_time_name(name, "rnullb", n), "{:?} {n}", core::str::from_utf8(name));
    }
}
