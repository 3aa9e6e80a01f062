// SPDX-License-Identifier: GPL-2.0

//! One rnull_split disk on blk-mq: its tag set, its gendisk, and the queue
//! operations that complete every request without touching data.

use crate::params::{DeviceConfig, IrqMode};
use kernel::{
    block::mq::{
        self,
        gen_disk::{GenDisk, GenDiskBuilder},
        Operations, TagSet,
    },
    prelude::*,
    sync::Arc,
    types::ARef,
};

/// The number of possible CPUs (`nr_cpu_ids`), the most hardware queues
/// blk-mq will use.
pub(crate) fn nr_cpu_ids() -> u32 {
    // SAFETY: `nr_cpu_ids` is set during early boot and only read afterwards.
    unsafe { kernel::bindings::nr_cpu_ids }
}

/// A disk and what its queue needs.
pub(crate) struct NullDevice {
    _disk: GenDisk<NullQueue>,
}

/// Per-queue data shared by the queue operations.
pub(crate) struct QueueData {
    irqmode: IrqMode,
}

impl NullDevice {
    /// Create disk `name` (e.g. `rnullb0`, or a configfs directory's name)
    /// with `config` and add it to the system. Dropping the device removes
    /// the disk.
    pub(crate) fn new(name: core::fmt::Arguments<'_>, config: &DeviceConfig) -> Result<Self> {
        let tagset = Arc::pin_init(
            TagSet::new(config.submit_queues, config.hw_queue_depth, 1),
            GFP_KERNEL,
        )?;
        let queue_data = KBox::new(
            QueueData {
                irqmode: config.irqmode,
            },
            GFP_KERNEL,
        )?;
        let disk = GenDiskBuilder::new()
            .capacity_sectors(config.capacity_sectors)
            .logical_block_size(config.block_size)?
            .physical_block_size(config.block_size)?
            .max_sectors(config.max_sectors)
            .rotational(false)
            .build(name, tagset, queue_data)?;
        Ok(Self { _disk: disk })
    }
}

/// The blk-mq operations of a [`NullDevice`].
pub(crate) struct NullQueue;

#[vtable]
impl Operations for NullQueue {
    type QueueData = KBox<QueueData>;

    // Like C null_blk's `null_queue_rqs`: take a whole plug in one call.
    const QUEUE_RQS: bool = true;

    #[inline(always)]
    fn queue_rq(queue_data: &QueueData, rq: ARef<mq::Request<Self>>, _is_last: bool) -> Result {
        match queue_data.irqmode {
            IrqMode::Softirq => mq::Request::complete(rq),
            _ => end(rq),
        }
        Ok(())
    }

    fn commit_rqs(_queue_data: &QueueData) {}

    fn complete(rq: ARef<mq::Request<Self>>) {
        end(rq);
    }
}

/// End `rq` successfully.
#[inline(always)]
fn end(rq: ARef<mq::Request<NullQueue>>) {
    // The driver keeps no other reference to its requests, so `rq` is the
    // only `ARef` and `end_ok` cannot fail; if it ever did, the request would
    // stay owned by the `ARef` returned and time out rather than be freed.
    if mq::Request::end_ok(rq).is_err() {
        pr_warn!("request still referenced at completion\n");
    }
}
