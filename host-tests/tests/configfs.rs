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

// --- parsing the text written to an attribute, as C null_blk's stores do -----

use KstrtoxError::{Invalid, Range};

#[test]
fn kstrtobool_like_c() {
    // lib/kstrtox.c: the first character, or `o` and the second
    for t in [
        &b"1"[..], b"1\n", b"y", b"Y", b"yes", b"t", b"T", b"true", b"e", b"E", b"enable",
        b"on", b"On", b"oN", b"ON\n", b"10", b"1x", b"y\xff", b"onion",
    ] {
        assert_eq!(kstrtobool(t), Some(true), "{t:?}");
    }
    for f in [
        &b"0"[..], b"0\n", b"n", b"N", b"no", b"f", b"F", b"false", b"d", b"D", b"disable",
        b"of", b"off", b"Off", b"oF", b"OFF\n", b"01", b"0x1",
    ] {
        assert_eq!(kstrtobool(f), Some(false), "{f:?}");
    }
    for bad in [
        &b""[..], b"\n", b"2", b"-1", b"+1", b" 1", b"\t0", b"o", b"o\n", b"ox", b"abc", b"x",
        b"\x00", b"o\x00n", b"\xff", b"99999999999999999999",
    ] {
        assert_eq!(kstrtobool(bad), None, "{bad:?}");
    }
}

#[test]
fn kstrtoul_bases_like_c() {
    for (s, v) in [
        (&b"0"[..], 0),
        (b"0\n", 0),
        (b"00", 0),
        (b"16", 16),
        (b"16\n", 16),
        (b"+16", 16),
        (b"0x10", 16),
        (b"0X10\n", 16),
        (b"0xfF", 255),
        (b"+0x10", 16),
        (b"010", 8),
        (b"010\n", 8),
        (b"0777", 511),
        (b"18446744073709551615", u64::MAX),
        (b"0xffffffffffffffff", u64::MAX),
        (b"01777777777777777777777", u64::MAX),
        (b"0x00000000000000000001", 1),
        // C reads up to the first NUL, which configfs puts after the bytes
        (b"5\x00junk", 5),
    ] {
        assert_eq!(kstrtoul(s), Ok(v), "{s:?}");
    }
    for bad in [
        &b""[..], b"\n", b"+", b"-", b"-1", b"-0", b"++1", b"+-1", b" 1", b"1 ", b"1\n\n", b"\n1",
        b"1x", b"abc", b"0x", b"0x\n", b"0xg", b"0x1g", b"08", b"09", b"0b1", b"1.5", b"1e3",
        b"\x00", b"\xff", b"0x+1",
    ] {
        assert_eq!(kstrtoul(bad), Err(Invalid), "{bad:?}");
    }
    // an overflow is ERANGE, even with junk after the digits
    for big in [
        &b"18446744073709551616"[..], b"99999999999999999999", b"0x10000000000000000",
        b"02000000000000000000000", b"99999999999999999999x", b"+99999999999999999999\n",
    ] {
        assert_eq!(kstrtoul(big), Err(Range), "{big:?}");
    }
    // the Option form that `badblocks` uses
    assert_eq!(kstrtoull("0x10"), Some(16));
    assert_eq!(kstrtoull("0x"), None);
    assert_eq!(kstrtoull("18446744073709551616"), None);
}

#[test]
fn kstrtouint_like_c() {
    assert_eq!(kstrtouint(b"4294967295\n"), Ok(u32::MAX));
    assert_eq!(kstrtouint(b"0xffffffff"), Ok(u32::MAX));
    assert_eq!(kstrtouint(b"0x1000"), Ok(4096));
    assert_eq!(kstrtouint(b"010"), Ok(8));
    assert_eq!(kstrtouint(b"4294967296"), Err(Range));
    assert_eq!(kstrtouint(b"0x100000000"), Err(Range));
    assert_eq!(kstrtouint(b"-1"), Err(Invalid));
    assert_eq!(kstrtouint(b"4096x"), Err(Invalid));
}

#[test]
fn kstrtoint_and_kstrtoll_like_c() {
    for (s, v) in [
        (&b"-1"[..], -1),
        (b"-1\n", -1),
        (b"+7", 7),
        (b"-0", 0),
        (b"-0x10", -16),
        (b"-010", -8),
        (b"2147483647", i32::MAX),
        (b"-2147483648", i32::MIN),
        (b"0x7fffffff", i32::MAX),
        (b"-0x80000000", i32::MIN),
    ] {
        assert_eq!(kstrtoint(s), Ok(v), "{s:?}");
        assert_eq!(kstrtoll(s), Ok(v.into()), "{s:?}");
    }
    for (s, e) in [
        (&b"2147483648"[..], Range),
        (b"-2147483649", Range),
        (b"0x80000000", Range),
        (b"--1", Invalid),
        (b"-+1", Invalid),
        (b"+-1", Invalid),
        (b"- 1", Invalid),
        (b"-", Invalid),
        (b"-x", Invalid),
        (b"-1x", Invalid),
    ] {
        assert_eq!(kstrtoint(s), Err(e), "{s:?}");
    }
    assert_eq!(kstrtoll(b"9223372036854775807"), Ok(i64::MAX));
    assert_eq!(kstrtoll(b"-9223372036854775808"), Ok(i64::MIN));
    assert_eq!(kstrtoll(b"9223372036854775808"), Err(Range));
    assert_eq!(kstrtoll(b"-9223372036854775809"), Err(Range));
    assert_eq!(kstrtoll(b"-18446744073709551615"), Err(Range));
    assert_eq!(kstrtoll(b"-18446744073709551616"), Err(Range));
}

#[test]
fn kstrtox_by_type() {
    // what configfs.rs's `parse` picks from the attribute's type: C's
    // `uint` attributes are `u32`, its `ulong` ones `u64`
    assert_eq!(<u32 as Kstrtox>::kstrtox(b"0x10\n"), Ok(16));
    assert_eq!(<u32 as Kstrtox>::kstrtox(b"4294967296"), Err(Range));
    assert_eq!(<u64 as Kstrtox>::kstrtox(b"4294967296"), Ok(1 << 32));
    assert_eq!(<i32 as Kstrtox>::kstrtox(b"-1"), Ok(-1));
    assert_eq!(<i64 as Kstrtox>::kstrtox(b"-0x10"), Ok(-16));
    assert_eq!(
        [<u32 as Kstrtox>::C_TYPE, <u64 as Kstrtox>::C_TYPE, <i32 as Kstrtox>::C_TYPE],
        ["unsigned int", "unsigned long", "int"]
    );
}
