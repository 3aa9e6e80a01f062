// SPDX-License-Identifier: GPL-2.0

//! rnull_split: a Rust null block device with C null_blk's parameters.
//!
//! `insmod rnull_split.ko` creates `nr_devices` disks `/dev/rnullb0`, ...
//! that complete every request, without moving data unless
//! `memory_backed=1`. The knobs are C null_blk's, with the same names,
//! defaults and meaning:
//!
//! - `gb`, `bs`: size in GiB and block size (a power of two, 512..4096);
//! - `submit_queues`, `hw_queue_depth`: blk-mq hardware queues and tags;
//! - `poll_queues`: hardware queues for polled I/O (io_uring `IOPOLL`,
//!   `RWF_HIPRI`) besides those, completed when polled: 1, as C, gives C
//!   null_blk's default layout (two hardware queues, so no I/O scheduler);
//! - `max_sectors`: the queue's `max_hw_sectors`; `queue/max_sectors_kb` can
//!   lower it at run time and the block layer then splits bios with fast
//!   clones (`bio_split()`) before they reach the driver;
//! - `irqmode`: 0 completes in `queue_rq`, 1 through the block layer's
//!   softirq completion, 2 from an hrtimer `completion_nsec` later (one per
//!   request, in its driver data);
//! - `queue_mode`: 2 (blk-mq) or 0 (bio-based: the driver splits bios
//!   itself, with fast or deep clones, `split_clone`; `bio_queue.rs`);
//! - `memory_backed`, `discard`: keep written data (`store.rs`);
//! - `rotational`: the disk says it is rotational (`queue/rotational`).
//!
//! Disks can also be made at run time through configfs (`configfs.rs`,
//! C null_blk's attribute names); counters are in debugfs (`debugfs.rs`).
//!
//! A bad value makes `insmod` fail with `EINVAL` and a message naming the
//! parameter and what it accepts; no device is left behind.
//!
//! Layout: `config.rs` turns parameters into a validated [`DeviceConfig`]
//! (the checks themselves are the pure `common/params.rs`, unit-tested on the
//! host); `device.rs` is the disk and its queue, `timer.rs` the `irqmode=2`
//! timers.

use kernel::prelude::*;

// Shared with the host unit tests, hence `pub` items this crate does not
// export and helpers only some users need.
#[allow(unreachable_pub, dead_code)]
#[path = "../common/params.rs"]
mod params;

#[allow(unreachable_pub, dead_code)]
#[path = "../common/split.rs"]
mod split;

#[allow(unreachable_pub, dead_code)]
#[path = "../common/fault.rs"]
mod fault;

#[allow(unreachable_pub, dead_code)]
#[path = "../common/zoned.rs"]
mod zoned;

#[allow(unreachable_pub, dead_code)]
#[path = "../common/throttle.rs"]
mod throttle;

#[allow(unreachable_pub, dead_code)]
#[path = "../common/badblocks.rs"]
mod badblocks;

#[allow(unreachable_pub, dead_code)]
#[path = "../common/tags.rs"]
mod tags;

#[allow(unreachable_pub, dead_code)]
#[path = "../common/page_table.rs"]
mod page_table;

mod bad_sectors;
mod bio_queue;
mod config;
mod configfs;
mod debugfs;
mod device;
mod stats;
mod store;
mod timer;
mod zones;

use config::{FaultArg, SplitCloneArg};

/// The names a build registers. `rnull_split.ko` has its own; the same
/// sources built as `null_blk.ko` (`--cfg null_blk`, see the Kbuild file)
/// take C null_blk's, so that tools written for C null_blk, blktests above
/// all, find it: module `null_blk`, disks `nullb0`..., configfs `nullb`.
mod names {
    use kernel::str::CStr;

    /// The load-time disks are `<DISK>0`, `<DISK>1`, ...
    pub(crate) const DISK: &str = if cfg!(null_blk) { "nullb" } else { "rnullb" };
    /// The block major, in `/proc/devices`.
    pub(crate) const MAJOR: &CStr = if cfg!(null_blk) { c"nullb" } else { c"rnullb" };
    /// The configfs subsystem, `/sys/kernel/config/<CONFIGFS>`.
    pub(crate) const CONFIGFS: &CStr = if cfg!(null_blk) {
        c"nullb"
    } else {
        c"rnull_split"
    };
    /// The debugfs directory, `/sys/kernel/debug/<DEBUGFS>`.
    pub(crate) const DEBUGFS: &CStr = if cfg!(null_blk) {
        c"null_blk"
    } else {
        c"rnull_split"
    };
}

/// `module!` for this crate, named `$name`: its parameters are C null_blk's.
macro_rules! null_module {
    ($name:tt, $description:tt) => {
        module! {
            type: RnullSplit,
            name: $name,
            authors: ["rnull-split project"],
            description: $description,
            license: "GPL v2",
            params: {
                gb: i32 {
                    default: 250,
                    description: "Size in GB",
                    permissions: 0o444,
                },
                bs: i32 {
                    default: 512,
                    description: "Block size (in bytes)",
                    permissions: 0o444,
                },
                nr_devices: u32 {
                    default: 1,
                    description: "Number of devices to register",
                    permissions: 0o444,
                },
                submit_queues: i32 {
                    default: 1,
                    description: "Number of submission queues",
                    permissions: 0o444,
                },
                poll_queues: i32 {
                    default: 1,
                    description: "Number of IOPOLL submission queues",
                    permissions: 0o444,
                },
                hw_queue_depth: i32 {
                    default: 64,
                    description: "Queue depth for each hardware queue. Default: 64",
                    permissions: 0o444,
                },
                max_sectors: i32 {
                    default: 0,
                    description: "Maximum size of a command (in 512B sectors)",
                    permissions: 0o444,
                },
                queue_mode: i32 {
                    default: 2,
                    description: "Block interface to use (0=bio,2=multiqueue)",
                    permissions: 0o444,
                },
                irqmode: i32 {
                    default: 1,
                    description: "IRQ completion handler. 0-none, 1-softirq, 2-timer",
                    permissions: 0o444,
                },
                completion_nsec: u64 {
                    default: 10_000,
                    description: "Time in ns to complete a request in hardware. Default: 10,000ns",
                    permissions: 0o444,
                },
                memory_backed: bool {
                    default: false,
                    description: "Create a memory-backed block device. Default: false",
                    permissions: 0o444,
                },
                discard: bool {
                    default: false,
                    description: "Support discard operations (requires memory-backed device). Default: false",
                    permissions: 0o444,
                },
                blocking: bool {
                    default: false,
                    description: "Register as a blocking blk-mq driver device",
                    permissions: 0o444,
                },
                shared_tags: bool {
                    default: false,
                    description: "Share tag set between devices for blk-mq",
                    permissions: 0o444,
                },
                shared_tag_bitmap: bool {
                    default: false,
                    description: "Use shared tag bitmap for all submission queues for blk-mq",
                    permissions: 0o444,
                },
                no_sched: bool {
                    default: false,
                    description: "No io scheduler",
                    permissions: 0o444,
                },
                timeout: FaultArg {
                    default: FaultArg::EMPTY,
                    description: "Fault injection. timeout=<interval>,<probability>,<space>,<times>",
                    permissions: 0o444,
                },
                requeue: FaultArg {
                    default: FaultArg::EMPTY,
                    description: "Fault injection. requeue=<interval>,<probability>,<space>,<times>",
                    permissions: 0o444,
                },
                cache_size: u64 {
                    default: 0,
                    description: "Cache size in MiB for memory-backed device. Default: 0 (none)",
                    permissions: 0o444,
                },
                fua: bool {
                    default: true,
                    description: "Enable/disable FUA support when cache_size is used. Default: true",
                    permissions: 0o444,
                },
                mbps: u32 {
                    default: 0,
                    description: "Limit maximum bandwidth (in MiB/s). Default: 0 (no limit)",
                    permissions: 0o444,
                },
                init_hctx: FaultArg {
                    default: FaultArg::EMPTY,
                    description: "Fault injection to fail hctx init. init_hctx=<interval>,<probability>,<space>,<times>",
                    permissions: 0o444,
                },
                zoned: bool {
                    default: false,
                    description: "Make device as a host-managed zoned block device. Default: false",
                    permissions: 0o444,
                },
                zone_size: u64 {
                    default: 256,
                    description: "Zone size in MB when block device is zoned. Must be power-of-two: Default: 256",
                    permissions: 0o444,
                },
                zone_capacity: u64 {
                    default: 0,
                    description: "Zone capacity in MB when block device is zoned. Can be less than or equal to zone size. Default: Zone size",
                    permissions: 0o444,
                },
                zone_nr_conv: u32 {
                    default: 0,
                    description: "Number of conventional zones when block device is zoned. Default: 0",
                    permissions: 0o444,
                },
                zone_max_open: u32 {
                    default: 0,
                    description: "Maximum number of open zones when block device is zoned. Default: 0 (no limit)",
                    permissions: 0o444,
                },
                zone_max_active: u32 {
                    default: 0,
                    description: "Maximum number of active zones when block device is zoned. Default: 0 (no limit)",
                    permissions: 0o444,
                },
                zone_append_max_sectors: u32 {
                    default: u32::MAX,
                    description: "Maximum size of a zone append command (in 512B sectors). Specify 0 for zone append emulation",
                    permissions: 0o444,
                },
                zone_full: bool {
                    default: false,
                    description: "Initialize the sequential write required zones of a zoned device to be full. Default: false",
                    permissions: 0o444,
                },
                rotational: bool {
                    default: false,
                    description: "Set the rotational feature for the device. Default: false",
                    permissions: 0o444,
                },
                split_clone: SplitCloneArg {
                    default: SplitCloneArg::FAST,
                    description: "How bio mode makes split pieces: fast (bio_split) or deep (pre-2015 clone). Default: fast",
                    permissions: 0o444,
                },
            },
        }
    };
}

#[cfg(not(null_blk))]
null_module!(
    "rnull_split",
    "Rust null block driver with fast-clone bio splitting"
);
#[cfg(null_blk)]
null_module!(
    "null_blk",
    "rnull_split as null_blk: C null_blk's names, for blktests"
);

/// Fields drop in order: configfs (its devices are gone: each pins the
/// module), the devices, then what they shared (the debugfs directory that
/// holds theirs, the shared tag set if no disk holds it any more).
#[pin_data]
struct RnullSplit {
    #[pin]
    _configfs: kernel::configfs::Subsystem<configfs::Config>,
    _devices: KVec<device::NullDevice>,
    _shared: device::Shared,
}

impl kernel::InPlaceModule for RnullSplit {
    fn init(_module: &'static ThisModule) -> impl PinInit<Self, Error> {
        pin_init::pin_init_scope(|| {
            let (config, nr_devices) = config::from_module_params()?;
            let shared = device::Shared::new(debugfs::Root::new(names::DEBUGFS), &config)?;
            let mut devices = KVec::with_capacity(nr_devices as usize, GFP_KERNEL)?;
            for index in 0..nr_devices {
                // On error, `devices` drops and removes the disks made so far.
                let dev = device::NullDevice::new(
                    format_args!("{}{}", names::DISK, index),
                    &config,
                    &shared,
                    None,
                )?;
                devices.push(dev, GFP_KERNEL)?;
            }
            pr_info!(
                "{} device(s) of {} sectors\n",
                nr_devices,
                config.capacity_sectors
            );
            Ok(try_pin_init!(Self {
                _configfs <- configfs::subsystem(config, nr_devices, shared.clone()),
                _devices: devices,
                _shared: shared,
            }))
        })
    }
}
