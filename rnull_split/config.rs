// SPDX-License-Identifier: GPL-2.0

//! Module parameters, named and defaulted as C null_blk's, and their
//! validation into a [`DeviceConfig`].

use crate::params::{self, DeviceConfig, RawParams};
use kernel::{c_str, prelude::*};

kernel::module_params! {
    module: "rnull_split",
    gb: i32 = 250, "Size in GB";
    bs: i32 = 512, "Block size (in bytes)";
    nr_devices: u32 = 1, "Number of devices to register";
    submit_queues: i32 = 1, "Number of submission queues";
    hw_queue_depth: i32 = 64, "Queue depth for each hardware queue. Default: 64";
    max_sectors: i32 = 0, "Maximum size of a command (in 512B sectors)";
    queue_mode: i32 = 2, "Block interface to use (0=bio,2=multiqueue)";
    irqmode: i32 = 1, "IRQ completion handler. 0-none, 1-softirq, 2-timer";
    completion_nsec: u64 = 10_000, "Time in ns to complete a request in hardware. Default: 10,000ns";
    memory_backed: bool = false, "Create a memory-backed block device. Default: false";
    discard: bool = false, "Support discard operations (requires memory-backed device). Default: false";
    split_clone: charp = c_str!("fast"), "How bio mode makes split pieces: fast (bio_split) or deep (pre-2015 clone). Default: fast";
}

/// Read and validate the module parameters.
///
/// Returns the configuration of every load-time device and their number, or
/// `EINVAL` after logging which parameter is wrong and what it accepts.
pub(crate) fn from_module_params() -> Result<(DeviceConfig, u32)> {
    let raw = RawParams {
        gb: gb.get(),
        bs: bs.get(),
        nr_devices: nr_devices.get(),
        submit_queues: submit_queues.get(),
        hw_queue_depth: hw_queue_depth.get(),
        max_sectors: max_sectors.get(),
        queue_mode: queue_mode.get(),
        irqmode: irqmode.get(),
        completion_nsec: completion_nsec.get(),
        memory_backed: memory_backed.get(),
        discard: discard.get(),
        split_clone: split_clone.get_str().as_bytes(),
    };
    let (config, n) = raw.validate(crate::device::nr_cpu_ids()).map_err(|e| {
        pr_err!("{}\n", e);
        EINVAL
    })?;
    not_yet(&config)?;
    Ok((config, n))
}

/// Refuse, with a message, modes this build does not implement yet (also
/// at configfs `power=1`).
pub(crate) fn not_yet(config: &DeviceConfig) -> Result {
    let what = if config.irqmode == params::IrqMode::Timer
        && config.queue_mode == params::QueueMode::Bio
    {
        "irqmode=2 with queue_mode=0"
    } else {
        return Ok(());
    };
    pr_err!("{} is not supported yet\n", what);
    Err(EINVAL)
}
