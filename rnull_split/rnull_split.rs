// SPDX-License-Identifier: GPL-2.0

//! rnull_split: a Rust null block device with C null_blk's parameters.
//!
//! `insmod rnull_split.ko` creates `nr_devices` disks `/dev/rnullb0`, ... that
//! complete every request without moving data. The knobs are C null_blk's,
//! with the same names, defaults and meaning:
//!
//! - `gb`, `bs`: size in GiB and block size (a power of two, 512..4096);
//! - `submit_queues`, `hw_queue_depth`: blk-mq hardware queues and tags;
//! - `max_sectors`: the queue's `max_hw_sectors`; `queue/max_sectors_kb` can
//!   lower it at run time and the block layer then splits bios with fast
//!   clones (`bio_split()`) before they reach the driver;
//! - `irqmode`: 0 completes in `queue_rq`, 1 through the block layer's
//!   softirq completion;
//! - `queue_mode`: 2 (blk-mq) is the mode implemented here.
//!
//! A bad value makes `insmod` fail with `EINVAL` and a message naming the
//! parameter and what it accepts; no device is left behind.
//!
//! Layout: `config.rs` turns parameters into a validated [`DeviceConfig`]
//! (the checks themselves are the pure `common/params.rs`, unit-tested on the
//! host); `device.rs` is the disk and its queue.

use kernel::prelude::*;

// Shared with the host unit tests, hence `pub` items this crate does not
// export and helpers only some users need.
#[allow(unreachable_pub, dead_code)]
#[path = "../common/params.rs"]
mod params;

#[allow(unreachable_pub, dead_code)]
#[path = "../common/split.rs"]
mod split;

mod bio_queue;
mod config;
mod configfs;
mod debugfs;
mod device;
mod stats;
mod store;
mod timer;

module! {
    type: RnullSplit,
    name: "rnull_split",
    author: "rnull-split project",
    description: "Rust null block driver with fast-clone bio splitting",
    license: "GPL v2",
}

/// Fields drop in order: configfs (its devices are gone: each pins the
/// module), the devices, then the debugfs directory that holds theirs.
struct RnullSplit {
    _configfs: configfs::Subsystem,
    _devices: KVec<device::NullDevice>,
    _debugfs: debugfs::Root,
}

impl kernel::Module for RnullSplit {
    fn init(module: &'static ThisModule) -> Result<Self> {
        let (config, nr_devices) = config::from_module_params()?;
        let debugfs = debugfs::Root::new(kernel::c_str!("rnull_split"));
        let mut devices = KVec::with_capacity(nr_devices as usize, GFP_KERNEL)?;
        for index in 0..nr_devices {
            // On error, `devices` drops and removes the disks made so far.
            let dev = device::NullDevice::new(format_args!("rnullb{}", index), &config)?;
            devices.push(dev, GFP_KERNEL)?;
        }
        pr_info!(
            "{} device(s) of {} sectors\n",
            nr_devices,
            config.capacity_sectors
        );
        let configfs = configfs::Subsystem::register(module, &config, nr_devices)?;
        Ok(Self {
            _configfs: configfs,
            _devices: devices,
            _debugfs: debugfs,
        })
    }
}
