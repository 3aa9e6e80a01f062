//! rvirtio_blk's interface, described: module parameters, the devices'
//! binding, QEMU's hot-plug and resize (over the host's QMP relay), the
//! write-cache attribute, PCI function resets, and the shared block
//! operations on the fuzzed disks (the data checker's disk only gets the
//! operations that leave data alone).

use crate::blk::{self, Disk};
use crate::ctx::{Ctx, Op};
use crate::sys;

const PARAMS: &[(&str, &[&str])] = &[
    (
        "num_request_queues",
        &["0", "1", "2", "64", "4294967295", "-1", "x"],
    ),
    ("queue_depth", &["0", "1", "2", "16", "1024", "100000"]),
    ("sg_prealloc", &["0", "1", "2"]),
    ("seg_max", &["0", "1", "2", "3", "128", "65536"]),
    ("poll_queues", &["0", "1", "2", "100"]),
];

const DRIVER: &str = "/sys/bus/virtio/drivers/rvirtio_blk";

/// The virtio device (virtioN) on PCI function `pci`, if it is there.
fn virtio_name(pci: &str) -> Option<String> {
    let d = std::fs::read_dir(format!("/sys/bus/pci/devices/{pci}")).ok()?;
    d.filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|n| n.starts_with("virtio"))
}

/// The disk of PCI function `pci`, "" if it has none now.
pub fn disk_of(pci: &str) -> String {
    virtio_name(pci)
        .and_then(|v| std::fs::read_dir(format!("/sys/bus/pci/devices/{pci}/{v}/block")).ok())
        .and_then(|mut d| d.next())
        .and_then(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// A fuzzed device's index (draws the same whatever the pool holds).
fn pick(c: &mut Ctx) -> usize {
    (c.rng.next() % c.env.vpool.len().max(1) as u64) as usize
}

fn disk(c: &mut Ctx) -> Disk {
    let i = pick(c);
    Disk::Pci(
        c.env
            .vpool
            .get(i)
            .map(|v| v.pci.clone())
            .unwrap_or_default(),
    )
}

/// A disk of the pool, or the data disk (for what keeps data).
fn any_disk(c: &mut Ctx) -> Disk {
    Disk::Pci(any_pci(c))
}

/// A PCI function of the pool, or the data disk's (binding, cache and
/// resets keep data).
fn any_pci(c: &mut Ctx) -> String {
    let data = c.rng.pct(25);
    let i = pick(c);
    match (&c.env.vdata, data) {
        (Some(v), true) => v.pci.clone(),
        _ => c
            .env
            .vpool
            .get(i)
            .map(|v| v.pci.clone())
            .unwrap_or_default(),
    }
}

fn load(c: &mut Ctx) {
    let params = blk::module_params(c, 3, PARAMS, &[]);
    let ko = c.env.virtio_ko.clone().unwrap();
    c.res(format!("insmod rvirtio_blk {params}"), |_| {
        sys::finit_module(&ko, &params)
    });
}

fn unload(c: &mut Ctx) {
    c.res("rmmod rvirtio_blk".into(), |_| {
        sys::delete_module("rvirtio_blk")
    });
}

fn bind(c: &mut Ctx) {
    let pci = any_pci(c);
    let unbind = c.rng.pct(50);
    let f = if unbind { "unbind" } else { "bind" };
    c.step(format!("virtio {f} {pci}"), |_| match virtio_name(&pci) {
        Some(v) => sys::show(&sys::write_file(&format!("{DRIVER}/{f}"), v.as_bytes())),
        None => "no virtio device".into(),
    });
}

fn cache(c: &mut Ctx) {
    let d = any_disk(c);
    let v = *c.rng.pick(&[
        "write back",
        "write through",
        "write back\n",
        "writeback",
        "",
    ]);
    c.res(format!("{}/cache_type = {v:?}", d.label()), |_| {
        sys::write_file(&format!("/sys/block/{}/cache_type", d.name()), v.as_bytes())
    });
}

fn pci_reset(c: &mut Ctx) {
    let pci = any_pci(c);
    c.res(format!("pci reset {pci}"), |_| {
        sys::write_file(&format!("/sys/bus/pci/devices/{pci}/reset"), b"1")
    });
}

fn unplug(c: &mut Ctx) {
    let i = pick(c);
    let Some(v) = c.env.vpool.get(i) else { return };
    let cmd = format!(
        r#"{{"execute": "device_del", "arguments": {{"id": "{}"}}}}"#,
        v.qdev
    );
    c.step(format!("qmp device_del {}", v.qdev), |c| {
        crate::qmp::request(c, &cmd)
    });
}

fn plug(c: &mut Ctx) {
    let i = pick(c);
    let Some(v) = c.env.vpool.get(i) else { return };
    let cmd = format!(r#"{{"execute": "device_add", "arguments": {}}}"#, v.props);
    c.step(format!("qmp device_add {}", v.qdev), |c| {
        crate::qmp::request(c, &cmd)
    });
}

fn resize(c: &mut Ctx) {
    let i = pick(c);
    let mib = *c.rng.pick(&[8u64, 16, 32, 64, 96]);
    let Some(v) = c.env.vpool.get(i) else { return };
    let cmd = format!(
        r#"{{"execute": "block_resize", "arguments": {{"node-name": "{}", "size": {}}}}}"#,
        v.node,
        mib << 20
    );
    c.step(format!("qmp block_resize {} {mib} MiB", v.node), |c| {
        crate::qmp::request(c, &cmd)
    });
}

/// The block operations, after `OPS` in the fuzzer's table.
pub const BLK_OPS: [Op; 6] = blk::block_ops!(disk, any_disk, 4, 4, 8, 5, 3, 16);

pub const OPS: &[Op] = &[
    Op {
        name: "insmod",
        weight: 2,
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
        name: "bind",
        weight: 6,
        run: bind,
        exclusive: false,
    },
    Op {
        name: "cache_type",
        weight: 4,
        run: cache,
        exclusive: false,
    },
    Op {
        name: "pci_reset",
        weight: 1,
        run: pci_reset,
        exclusive: false,
    },
    Op {
        name: "device_del",
        weight: 1,
        run: unplug,
        exclusive: false,
    },
    Op {
        name: "device_add",
        weight: 1,
        run: plug,
        exclusive: false,
    },
    Op {
        name: "block_resize",
        weight: 2,
        run: resize,
        exclusive: false,
    },
];
