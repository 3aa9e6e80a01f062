// SPDX-License-Identifier: GPL-2.0

//! rvirtio_blk: a virtio-blk frontend in Rust.
//!
//! It binds to virtio block devices (`VIRTIO_ID_BLOCK`) and serves them as
//! `/dev/rvdX` disks (C virtio_blk uses `vdX`, so both drivers can serve
//! different disks in one boot, or be swapped with sysfs unbind/bind).
//!
//! 1. **Probe** ([`device`]): read the config space (SEG_MAX, SIZE_MAX,
//!    BLK_SIZE, TOPOLOGY, DISCARD, WRITE_ZEROES, MQ, CONFIG_WCE/FLUSH, RO),
//!    compute the queue limits exactly as C `virtblk_read_limits`, create one
//!    blk-mq hardware queue per virtqueue, allocate the disk (the serial is
//!    asked of the device on each read of `serial`, as C).
//! 2. **I/O** ([`request`]): every request becomes out header + data SGs +
//!    status byte in one `virtqueue_add_sgs`; a full ring stops the hardware
//!    queue until a completion; the last request of a batch (or
//!    `commit_rqs`, or `queue_rqs` for a plugged list) kicks; the virtqueue
//!    interrupt completes. Remove ends the requests of a broken device.
//! 3. **SG memory**: two scatterlist entries live inline in each request;
//!    `sg_alloc_table_chained` takes a table from the SG pool only for more
//!    than two segments and frees it at completion. `sg_prealloc=1` switches
//!    to the pre-2021 design (seg_max entries per request) for A/B runs.
//!    Counters are in debugfs ([`stats`]).
//! 4. **Poll queues** (`poll_queues=N`, as C virtio_blk): the last N
//!    virtqueues have no interrupt; blk-mq polls them for `REQ_POLLED` I/O
//!    (io_uring with `IORING_SETUP_IOPOLL`, fio `--hipri`), counted in
//!    debugfs `polled`.
//! 5. **Knobs**: parameters `num_request_queues` (any value: the CPUs
//!    truncate it, as C's), `queue_depth`, `sg_prealloc`, `seg_max`,
//!    `poll_queues` (checked at load: a bad value fails `insmod` with
//!    `EINVAL`); all read at probe; disk attributes `serial`, `cache_type`
//!    ([`sysfs`]).
//!
//! The device is driven through `kernel::virtio` (the driver, its ID table
//! and module alias `virtio:d00000002v*`, config space, virtqueues behind
//! their locks) and the request scatterlists through
//! `kernel::scatterlist::ChainedSgTable`, and the block layer through
//! `kernel::block::mq` (the [`request::VirtioMq`] operations, the tag set
//! mapped by the device's interrupt affinity, the disk with the limits of
//! `virtblk_read_limits` and its attributes); the pure logic lives in
//! `common/sg_plan.rs`, unit-tested on the host.

use kernel::{driver, prelude::*, uapi, virtio};

// Shared with the host tests, which use every item.
#[allow(unreachable_pub, dead_code)]
#[path = "../common/sg_plan.rs"]
mod sg_plan;

mod device;
mod request;
mod stats;
mod sysfs;

module! {
    type: RVirtioBlk,
    name: "rvirtio_blk",
    authors: ["rnull-split project"],
    description: "Virtio block driver in Rust",
    license: "GPL",
    params: {
        num_request_queues: u32 {
            default: 0,
            description: "Limit the number of request queues to use for blk device. 0 for no limit. Values > nr_cpu_ids truncated to nr_cpu_ids.",
            permissions: 0o444,
        },
        queue_depth: u32 {
            default: 0,
            description: "Tags per hardware queue (0: fill the virtqueue)",
            permissions: 0o444,
        },
        sg_prealloc: u32 {
            default: 0,
            description: "1: preallocate seg_max scatterlist entries per request (pre-2021 design); 0: two inline, chain beyond",
            permissions: 0o444,
        },
        seg_max: u32 {
            default: 0,
            description: "Cap on data segments per request (0: the device's seg_max); tests small seg_max on any device",
            permissions: 0o444,
        },
        poll_queues: u32 {
            default: 0,
            description: "The number of dedicated virtqueues for polling I/O",
            permissions: 0o444,
        },
    },
}

/// The module parameters, checked: a bad value fails `insmod` with `EINVAL`
/// and a message naming it (nothing is clamped).
fn check_params() -> Result {
    let p = sg_plan::Params {
        num_request_queues: module_parameters::num_request_queues.value(),
        queue_depth: module_parameters::queue_depth.value(),
        sg_prealloc: module_parameters::sg_prealloc.value(),
        seg_max: module_parameters::seg_max.value(),
        poll_queues: module_parameters::poll_queues.value(),
    };
    let ncpu = kernel::cpu::nr_cpu_ids();
    sg_plan::check_params(&p, ncpu).map_err(|e| {
        pr_err!(
            "invalid {}={}: must be {}..={}\n",
            e.name,
            e.value,
            e.min,
            e.max
        );
        EINVAL
    })
}

/// Features we understand (C `features[]` minus GEOMETRY, SECURE_ERASE, ZONED).
const FEATURES: [u32; 10] = [
    uapi::VIRTIO_BLK_F_SEG_MAX,
    uapi::VIRTIO_BLK_F_SIZE_MAX,
    uapi::VIRTIO_BLK_F_RO,
    uapi::VIRTIO_BLK_F_BLK_SIZE,
    uapi::VIRTIO_BLK_F_FLUSH,
    uapi::VIRTIO_BLK_F_TOPOLOGY,
    uapi::VIRTIO_BLK_F_CONFIG_WCE,
    uapi::VIRTIO_BLK_F_MQ,
    uapi::VIRTIO_BLK_F_DISCARD,
    uapi::VIRTIO_BLK_F_WRITE_ZEROES,
];

// The devices we drive, and the module alias `virtio:d00000002v*` that lets
// udev load us for them. (In the crate root, so that the table names the
// module.)
kernel::virtio_device_table!(
    VIRTIO_BLK_TABLE,
    [virtio::DeviceId::new(uapi::VIRTIO_ID_BLOCK)]
);

/// The virtio driver (C `virtio_blk`).
struct VirtioBlkDriver;

#[vtable]
impl virtio::Driver for VirtioBlkDriver {
    type Data<'bound> = device::Probed<'bound>;

    const ID_TABLE: virtio::IdTable = &VIRTIO_BLK_TABLE;
    const FEATURES: &'static [u32] = &FEATURES;

    fn probe<'bound>(
        dev: &'bound virtio::Device<kernel::device::Core<'_>>,
    ) -> impl PinInit<Self::Data<'bound>, Error> + 'bound {
        device::probe(dev)
    }

    fn remove<'bound>(
        dev: &'bound virtio::Device<kernel::device::Core<'_>>,
        this: Pin<&Self::Data<'bound>>,
    ) {
        device::remove(dev, this);
    }

    fn config_changed(_dev: &virtio::Device, this: Pin<&Self::Data<'_>>) {
        device::config_changed(this);
    }

    fn freeze<'bound>(
        dev: &'bound virtio::Device<kernel::device::Core<'_>>,
        this: Pin<&Self::Data<'bound>>,
    ) -> Result {
        device::freeze(dev, this)
    }

    fn restore<'bound>(
        dev: &'bound virtio::Device<kernel::device::Core<'_>>,
        this: Pin<&Self::Data<'bound>>,
    ) -> Result {
        device::restore(dev, this)
    }

    fn reset_prepare<'bound>(
        dev: &'bound virtio::Device<kernel::device::Core<'_>>,
        this: Pin<&Self::Data<'bound>>,
    ) -> Result {
        device::freeze(dev, this)
    }

    fn reset_done<'bound>(
        dev: &'bound virtio::Device<kernel::device::Core<'_>>,
        this: Pin<&Self::Data<'bound>>,
    ) -> Result {
        device::restore(dev, this)
    }
}

/// The module: the driver registration (dropped first: it removes every
/// device), the major and the debugfs root.
#[pin_data]
struct RVirtioBlk {
    #[pin]
    _driver: driver::Registration<virtio::Adapter<VirtioBlkDriver>>,
    _major: device::MajorSlot,
    _debugfs: stats::Root,
}

impl kernel::InPlaceModule for RVirtioBlk {
    fn init(module: &'static ThisModule) -> impl PinInit<Self, Error> {
        // SAFETY: a module's `init` runs once per load, and this is before
        // any use of `MAJOR` (the driver is registered below).
        unsafe { device::MAJOR.init() };
        let params = check_params();
        try_pin_init!(Self {
            _debugfs: params.map(|()| stats::Root::new())?,
            _major: device::MajorSlot::new()?,
            _driver <- driver::Registration::new(c"rvirtio_blk", module),
        }? Error)
    }
}
