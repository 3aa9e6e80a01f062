//! rnull_split's interface, described: module parameters, configfs
//! attributes and the operations on them, with their weights. The values
//! of each knob are (valid, boundary and invalid) strings; valid values are
//! kept small enough that no operation legitimately takes minutes on the
//! debug kernel (a 10 s completion_nsec or a 1 MiB/s mbps would look like a
//! hang to the watchdog).

use crate::blk::{self, Disk};
use crate::ctx::{Ctx, Op, CFS};
use crate::rng::Rng;
use crate::sys;
use std::sync::atomic::Ordering;

const BOOL: &[&str] = &["0", "1", "0", "1", "y", "n", "2", "-1"];
/// Fault injection as a parameter: `<interval>,<probability>,<space>,<times>`.
/// Never every request forever: with `requeue=1,100,0,-1` the partition
/// scan of the first disk requeues for ever and insmod never returns, as it
/// would with C null_blk (a hang of the configuration, not of the driver).
const FAULT: &[&str] = &[
    "1,10,0,5",
    "1,100,0,1",
    "3,50,2,10",
    "100,10,0,-1",
    "0,0,0,0",
    "1,2",
    "x",
];
const INVALID: &[&str] = &[
    "",
    "x",
    "-1",
    "0x",
    "18446744073709551616",
    " 1",
    "1 2",
    "+",
    "0777777777777",
];

/// Module parameters (name, values).
pub const PARAMS: &[(&str, &[&str])] = &[
    ("gb", &["1", "2", "4", "0", "1048576", "1048577"]),
    (
        "bs",
        &["512", "1024", "2048", "4096", "256", "8192", "513", "0"],
    ),
    ("nr_devices", &["0", "1", "2", "3"]),
    ("submit_queues", &["1", "2", "0", "3", "1024"]),
    ("poll_queues", &["0", "1", "2", "3"]),
    (
        "hw_queue_depth",
        &["1", "2", "32", "64", "1024", "0", "10240", "10241"],
    ),
    (
        "max_sectors",
        &[
            "0",
            "8",
            "16",
            "255",
            "256",
            "2560",
            "8192",
            "7",
            "9",
            "2147483647",
        ],
    ),
    ("queue_mode", &["0", "2", "1", "3", "-1"]),
    ("irqmode", &["0", "1", "2", "3"]),
    (
        "completion_nsec",
        &["0", "1000", "10000", "50000", "10000000001"],
    ),
    ("memory_backed", BOOL),
    ("discard", BOOL),
    ("blocking", BOOL),
    ("shared_tags", BOOL),
    ("shared_tag_bitmap", BOOL),
    ("no_sched", BOOL),
    ("rotational", BOOL),
    ("timeout", FAULT),
    ("requeue", FAULT),
    ("init_hctx", FAULT),
    ("cache_size", &["0", "1", "16", "1073741825"]),
    ("fua", BOOL),
    ("mbps", &["0", "100", "40960", "40961"]),
    ("zoned", BOOL),
    ("zone_size", &["1", "4", "16", "256", "0", "3"]),
    ("zone_capacity", &["0", "1", "2", "4", "300"]),
    ("zone_nr_conv", &["0", "1", "4", "100000"]),
    ("zone_max_open", &["0", "1", "2", "8"]),
    ("zone_max_active", &["0", "1", "2", "8"]),
    ("zone_append_max_sectors", &["0", "8", "4294967295"]),
    ("zone_full", BOOL),
    ("split_clone", &["fast", "deep", "x"]),
];

/// configfs attributes (name, values); `power` has an operation of its own.
pub const ATTRS: &[(&str, &[&str])] = &[
    ("size", &["16", "64", "256", "1024", "0", "1073741825"]),
    ("blocksize", &["512", "1024", "2048", "4096", "8192", "513"]),
    (
        "max_sectors",
        &["0", "8", "16", "255", "2560", "8192", "7", "4294967295"],
    ),
    ("queue_mode", &["0", "2", "1"]),
    ("irqmode", &["0", "1", "2", "3"]),
    ("completion_nsec", &["0", "1000", "10000", "10000000001"]),
    ("memory_backed", BOOL),
    ("discard", BOOL),
    ("submit_queues", &["1", "2", "0", "3"]),
    ("poll_queues", &["0", "1", "2", "3"]),
    ("hw_queue_depth", &["1", "2", "64", "0", "10241"]),
    ("blocking", BOOL),
    ("shared_tags", BOOL),
    ("shared_tag_bitmap", BOOL),
    ("no_sched", BOOL),
    ("rotational", BOOL),
    ("index", &["0", "1", "7", "4294967295", "x"]),
    ("zoned", BOOL),
    ("zone_size", &["1", "4", "16", "0", "3"]),
    ("zone_capacity", &["0", "1", "2", "4", "300"]),
    ("zone_nr_conv", &["0", "1", "4", "100000"]),
    ("zone_max_open", &["0", "1", "2", "8"]),
    ("zone_max_active", &["0", "1", "2", "8"]),
    ("zone_append_max_sectors", &["0", "8", "4294967295"]),
    ("zone_full", BOOL),
    ("split_clone", &["fast", "deep", "x"]),
    ("mbps", &["0", "100", "40961"]),
    ("cache_size", &["0", "1", "16", "1073741825"]),
    ("fua", BOOL),
    (
        "badblocks",
        &[
            "+0-7",
            "+0-1023",
            "+2048-4095",
            "-0-1023",
            "+8-8",
            "-0-18446744073709551615",
            "+5-1",
            "+x",
            "0-7",
        ],
    ),
    ("badblocks_once", BOOL),
    ("badblocks_partial_io", BOOL),
    (
        "zone_readonly",
        &["0", "2048", "8192", "32768", "1", "18446744073709551615"],
    ),
    ("zone_offline", &["0", "2048", "8192", "32768", "1"]),
];

const FAULT_GROUPS: &[&str] = &["timeout_inject", "requeue_inject", "init_hctx_fault_inject"];
const FAULT_ATTRS: &[(&str, &[&str])] = &[
    ("probability", &["0", "10", "50", "100", "101"]),
    ("interval", &["0", "1", "3", "100"]),
    // (not -1: with probability 100 every request would fail for ever)
    ("times", &["0", "1", "3", "10"]),
    ("space", &["0", "1", "10"]),
    ("verbose", &["0", "1", "2"]),
];

/// The configfs devices the operations make and remove (the data checker's
/// `fzdata` is not among them).
const DIRS: &[&str] = &["fz0", "fz1", "fz2", "fz3"];
/// The disks the block operations target: configfs ones and the module
/// parameters' (rnullb0.. exist after a load with nr_devices > 0).
const DISKS: &[&str] = &["fz0", "fz1", "fz2", "fz3", "rnullb0", "rnullb1", "rnullb2"];

/// A value for a knob: most often one of its list, sometimes an invalid
/// string, sometimes with a newline (as `echo` writes it).
fn value(r: &mut Rng, vals: &[&str]) -> String {
    let v = if r.pct(85) {
        r.pick(vals).to_string()
    } else {
        r.pick(INVALID).to_string()
    };
    if r.pct(50) {
        v + "\n"
    } else {
        v
    }
}

fn disk(c: &mut Ctx) -> Disk {
    Disk::Named(c.rng.pick(DISKS).to_string())
}

/// A disk for the operations that leave data alone: the data checker's too.
fn any_disk(c: &mut Ctx) -> Disk {
    if c.rng.pct(25) {
        Disk::Named("fzdata".into())
    } else {
        disk(c)
    }
}

fn load(c: &mut Ctx) {
    let params = blk::module_params(c, 6, PARAMS, INVALID);
    let ko = c.env.rnull_ko.clone().unwrap();
    c.res(format!("insmod rnull_split {params}"), |_| {
        sys::finit_module(&ko, &params)
    });
}

fn unload(c: &mut Ctx) {
    c.res("rmmod rnull_split".into(), |_| {
        sys::delete_module("rnull_split")
    });
}

/// Everything of this thread's let go (its held disks closed, every
/// fuzzed configfs disk powered off and removed), then rmmod: otherwise
/// the module would rarely be free to unload, and insmod would rarely
/// load it with new parameters.
fn unload_all(c: &mut Ctx) {
    c.step("close all, remove fz0-fz3, rmmod rnull_split".into(), |c| {
        c.slots = Default::default();
        for d in DIRS {
            let _ = sys::write_file(&format!("{CFS}/{d}/power"), b"0");
            let _ = sys::rmdir(&format!("{CFS}/{d}"));
        }
        sys::show(&sys::delete_module("rnull_split"))
    });
}

/// The module unloaded and loaded again with random parameters, which needs
/// every disk let go: this runs alone (the other workers wait, their held
/// disks closed first), the data checker gives its disk back, every fuzzed
/// configfs disk is removed, then rmmod and insmod.
fn module_cycle(c: &mut Ctx) {
    let params = blk::module_params(c, 6, PARAMS, INVALID);
    let env = c.env;
    for d in &env.drop_slots {
        d.store(true, Ordering::SeqCst);
    }
    env.data_released.store(false, Ordering::SeqCst);
    env.rnull_cycle.store(true, Ordering::SeqCst);
    let gate = env.gate.write().unwrap();
    c.step(
        format!("module cycle: rmmod rnull_split, insmod rnull_split {params}"),
        |c| {
            c.slots = Default::default();
            let t = std::time::Instant::now();
            while !env.data_released.load(Ordering::SeqCst)
                && t.elapsed().as_secs() < 30
                && !env.stopped()
            {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            for d in DIRS {
                let _ = sys::write_file(&format!("{CFS}/{d}/power"), b"0");
                let _ = sys::rmdir(&format!("{CFS}/{d}"));
            }
            let mut r = sys::delete_module("rnull_split");
            while r == Err(libc::EAGAIN) && t.elapsed().as_secs() < 35 {
                std::thread::sleep(std::time::Duration::from_millis(100));
                r = sys::delete_module("rnull_split");
            }
            let ko = env.rnull_ko.clone().unwrap();
            format!(
                "rmmod {} insmod {}",
                sys::show(&r),
                sys::show(&sys::finit_module(&ko, &params))
            )
        },
    );
    env.rnull_cycle.store(false, Ordering::SeqCst);
    drop(gate);
}

fn mkdir(c: &mut Ctx) {
    let d = *c.rng.pick(DIRS);
    c.res(format!("mkdir {d}"), |_| sys::mkdir(&format!("{CFS}/{d}")));
}

fn rmdir(c: &mut Ctx) {
    let d = *c.rng.pick(DIRS);
    c.res(format!("rmdir {d}"), |_| sys::rmdir(&format!("{CFS}/{d}")));
}

fn power(c: &mut Ctx) {
    let d = *c.rng.pick(DIRS);
    let v = if c.rng.pct(55) { "1" } else { "0" };
    c.res(format!("{d}/power = {v}"), |_| {
        sys::write_file(&format!("{CFS}/{d}/power"), v.as_bytes())
    });
}

fn attr(c: &mut Ctx) {
    let d = *c.rng.pick(DIRS);
    let (a, vals) = *c.rng.pick(ATTRS);
    let v = value(&mut c.rng, vals);
    c.res(format!("{d}/{a} = {v:?}"), |_| {
        sys::write_file(&format!("{CFS}/{d}/{a}"), v.as_bytes())
    });
}

fn read(c: &mut Ctx) {
    let d = *c.rng.pick(DIRS);
    let (a, _) = *c.rng.pick(ATTRS);
    let a = if c.rng.pct(10) { "power" } else { a };
    c.step(format!("read {d}/{a}"), |_| {
        match sys::read_file(&format!("{CFS}/{d}/{a}")) {
            Ok(s) => format!("ok {:?}", s.chars().take(60).collect::<String>()),
            Err(e) => sys::errname(e),
        }
    });
}

fn fault(c: &mut Ctx) {
    let d = *c.rng.pick(DIRS);
    let g = *c.rng.pick(FAULT_GROUPS);
    let (a, vals) = *c.rng.pick(FAULT_ATTRS);
    let v = value(&mut c.rng, vals);
    c.res(format!("{d}/{g}/{a} = {v:?}"), |_| {
        sys::write_file(&format!("{CFS}/{d}/{g}/{a}"), v.as_bytes())
    });
}

/// A powered configfs device, made in one operation: mkdir, a few random
/// attributes, power=1 (so that disks exist often enough for the block
/// operations to meet them).
fn make_disk(c: &mut Ctx) {
    let d = *c.rng.pick(DIRS);
    let n = c.rng.below(4);
    let mut sets = Vec::new();
    for _ in 0..n {
        let (a, vals) = *c.rng.pick(&ATTRS[..28]);
        sets.push((a, c.rng.pick(vals).to_string()));
    }
    let what = sets
        .iter()
        .map(|(a, v)| format!("{a}={v}"))
        .collect::<Vec<_>>()
        .join(" ");
    c.step(format!("make {d} {what} power=1"), |_| {
        let dir = format!("{CFS}/{d}");
        let mut out = sys::show(&sys::mkdir(&dir));
        for (a, v) in &sets {
            out += &format!(
                " {a}:{}",
                sys::show(&sys::write_file(&format!("{dir}/{a}"), v.as_bytes()))
            );
        }
        out + &format!(
            " power:{}",
            sys::show(&sys::write_file(&format!("{dir}/power"), b"1"))
        )
    });
}

/// The block operations, after `OPS` in the fuzzer's table.
pub const BLK_OPS: [Op; 6] = blk::block_ops!(disk, any_disk, 5, 5, 10, 6, 3, 20);

pub const OPS: &[Op] = &[
    Op {
        name: "insmod",
        weight: 3,
        run: load,
        exclusive: false,
    },
    Op {
        name: "rmmod",
        weight: 2,
        run: unload,
        exclusive: false,
    },
    Op {
        name: "rmmod_all",
        weight: 2,
        run: unload_all,
        exclusive: false,
    },
    Op {
        name: "module_cycle",
        weight: 2,
        run: module_cycle,
        exclusive: true,
    },
    Op {
        name: "mkdir",
        weight: 5,
        run: mkdir,
        exclusive: false,
    },
    Op {
        name: "rmdir",
        weight: 4,
        run: rmdir,
        exclusive: false,
    },
    Op {
        name: "make_disk",
        weight: 6,
        run: make_disk,
        exclusive: false,
    },
    Op {
        name: "power",
        weight: 8,
        run: power,
        exclusive: false,
    },
    Op {
        name: "attr",
        weight: 12,
        run: attr,
        exclusive: false,
    },
    Op {
        name: "read_attr",
        weight: 4,
        run: read,
        exclusive: false,
    },
    Op {
        name: "fault",
        weight: 3,
        run: fault,
        exclusive: false,
    },
];

#[cfg(test)]
mod tests {
    //! The tables cover the driver: every module parameter of
    //! rnull_split.rs and every configfs attribute of configfs.rs (so a new
    //! one is fuzzed from the day it is added).

    fn source(path: &str) -> String {
        std::fs::read_to_string(format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"))).unwrap()
    }

    #[test]
    fn every_module_parameter_is_described() {
        let src = source("rnull_split/rnull_split.rs");
        let params = &src[src.find("params: {").unwrap()..];
        let names: Vec<&str> = params
            .lines()
            .take_while(|l| *l != "            },")
            .filter_map(|l| {
                l.strip_prefix("                ")?
                    .split_once(": ")
                    .map(|x| x.0)
            })
            .filter(|n| n.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
            .collect();
        assert!(names.len() >= 30, "found only {names:?}");
        for n in names {
            assert!(
                super::PARAMS.iter().any(|(p, _)| *p == n),
                "parameter {n} is not in PARAMS"
            );
        }
    }

    #[test]
    fn every_configfs_attribute_is_described() {
        let src = source("rnull_split/configfs.rs");
        let attrs = &src[src.find("device_attributes! {").unwrap()..];
        let names: Vec<&str> = attrs
            .lines()
            .skip(1)
            .take_while(|l| !l.starts_with('}'))
            .filter_map(|l| l.split_whitespace().nth(1))
            .collect();
        assert!(names.len() >= 30, "found only {names:?}");
        for n in names {
            assert!(
                n == "power" || super::ATTRS.iter().any(|(a, _)| *a == n),
                "attribute {n} is not in ATTRS"
            );
        }
    }
}
