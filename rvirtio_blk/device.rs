// SPDX-License-Identifier: GPL-2.0

//! One virtio-blk device: probe (`init_vq`, `virtblk_read_limits`, tag set,
//! disk), config changes (capacity), GET_ID, freeze and restore (suspend,
//! function reset), remove.
//!
//! Ownership: probe builds the shared state [`VirtioBlk`] completely, then
//! hands it to the disk as its queue data (tag set, queue, disk), after
//! making the device ready. The bus keeps the
//! [`Probed`] data until the device is unbound. `remove` takes the disk out
//! of the config work's reach and deletes it (`del_gendisk`, which drains
//! the requests in flight, ended first if the device is broken); dropping
//! [`Probed`] (after the bus's device reset) removes debugfs, then deletes
//! the virtqueues.

use crate::{
    request::{self, VirtioMq},
    sg_plan,
    stats::{self, Stats},
};
use core::sync::atomic::Ordering;
use kernel::{
    block::{
        major::Major,
        mq::{
            gen_disk::{Discard, Disk, GenDisk, GenDiskBuilder, Segments, Topology},
            HwQueues, TagSet, TagSetFlags,
        },
    },
    device, new_mutex, new_work,
    percpu::PerCpuCounter,
    prelude::*,
    static_lock_class,
    str::CString,
    sync::{Arc, Mutex},
    types::Owned,
    uapi, virtio,
    virtio::{Queue, QueueHandler, Virtqueues},
    virtio_config_field,
    workqueue::{self, Work, WorkItem},
};

/// Disk name prefix; differs from C virtio_blk's `vd` so both can coexist.
const DISK_PREFIX: &[u8] = b"rvd";

/// A field of `struct virtio_blk_config`.
macro_rules! cfg {
    ($field:ident) => {
        virtio_config_field!(uapi::virtio_blk_config, $field)
    };
    ($field:ident, $fbit:ident) => {
        virtio_config_field!(uapi::virtio_blk_config, $field, uapi::$fbit)
    };
}

/// The driver's side of one request virtqueue (C `struct virtio_blk_vq`,
/// whose lock and ring are in [`Queue`]).
pub(crate) struct VirtBlkVq {
    /// Requests submitted on this queue (per CPU: the queue's submitters
    /// need not share a cache line for it).
    pub(crate) submitted: PerCpuCounter,
}

impl VirtBlkVq {
    fn new() -> Result<Self> {
        Ok(Self {
            submitted: PerCpuCounter::new(GFP_KERNEL)?,
        })
    }

    /// Counts a submitted request.
    #[inline]
    pub(crate) fn count_submitted(&self) {
        self.submitted.inc();
    }
}

impl QueueHandler for VirtBlkVq {
    type Token = Owned<request::Request>;

    fn callback(queue: &Queue<Self>) {
        request::virtblk_done(queue);
    }
}

kernel::sync::global_lock! {
    // SAFETY: `init` is called once, first thing in the module's `init`,
    // before `MajorSlot::new` and the driver's registration, so before any
    // use.
    pub(crate) unsafe(uninit) static MAJOR: Mutex<Option<Arc<Major>>> = None;
}

/// The driver's own major, `rvirtblk` in `/proc/devices` (C virtio_blk's is
/// `virtblk`), with C's 16 minors per disk: disk `i` is `rvd<letters of
/// i>`, minors `16 * i` to `16 * i + 15`; 65536 disks at most, as C. Its
/// disks' indices are the lowest free, as C's IDA.
///
/// Held by the module from before the driver is registered until after it
/// is unregistered; each disk holds its number, and with it the major.
pub(crate) struct MajorSlot;

impl MajorSlot {
    /// Registers the major.
    pub(crate) fn new() -> Result<Self> {
        let major = Major::register(c"rvirtblk", 16)?;
        *MAJOR.lock() = Some(major);
        Ok(Self)
    }
}

impl Drop for MajorSlot {
    fn drop(&mut self) {
        MAJOR.lock().take();
    }
}

/// The state of one device shared with the block layer (C `struct
/// virtio_blk`): the disk's queue data.
///
/// Everything is set before probe hands it to the disk.
pub(crate) struct VirtioBlk {
    /// The device while it is bound, for sysfs, debugfs and the config work.
    binding: virtio::Binding,
    /// The device's byte order, for the request headers.
    pub(crate) byte_order: virtio::ByteOrder,
    /// Whether `VIRTIO_BLK_F_CONFIG_WCE` was negotiated (the cache mode is
    /// writable).
    pub(crate) config_wce: bool,
    /// Request virtqueues, one per hardware queue.
    pub(crate) vqs: KVec<Arc<Queue<VirtBlkVq>>>,
    /// Entries in the first chunk of each request's scatterlist table.
    pub(crate) first_chunk: u32,
    /// The device's `max_discard_seg` (1 if it takes one range only).
    pub(crate) max_discard_segments: u32,
    /// Counters.
    pub(crate) stats: Stats,
}

impl VirtioBlk {
    /// Runs `f` with the bound device (config space access, which may
    /// sleep); `ENODEV` once the driver is unbound. The disk's sysfs
    /// attributes, the config work and the debugfs files all go before the
    /// unbind, so they always find it.
    pub(crate) fn with_bound<R>(
        &self,
        f: impl FnOnce(&virtio::Device<device::Bound>) -> R,
    ) -> Result<R> {
        self.binding.with_bound(f).ok_or(ENODEV)
    }
}

/// The disk of a device and the config-change work that resizes it.
#[pin_data]
pub(crate) struct DiskState {
    /// The disk; taken by remove, after which the work does nothing.
    #[pin]
    disk: Mutex<Option<GenDisk<VirtioMq>>>,
    /// C `config_work`.
    #[pin]
    config_work: Work<DiskState>,
}

kernel::impl_has_work! {
    impl HasWork<Self> for DiskState { self.config_work }
}

impl WorkItem for DiskState {
    type Pointer = Arc<DiskState>;

    /// C `virtblk_config_changed_work`.
    fn run(this: Arc<DiskState>) {
        let disk = this.disk.lock();
        if let Some(disk) = disk.as_ref() {
            // (Remove takes the disk under this lock before the unbind, so
            // the device is still bound.)
            if let Ok(capacity) = disk.queue_data().with_bound(|v| v.read(cfg!(capacity))) {
                virtblk_update_capacity(disk, capacity, true);
            }
        }
    }
}

/// The driver data of a bound device. Fields drop in this order (see the
/// module documentation).
pub(crate) struct Probed<'bound> {
    debugfs: stats::DiskDir<VirtioBlk>,
    vqs: Virtqueues<'bound, VirtBlkVq>,
    disk: Arc<DiskState>,
    vblk: Arc<VirtioBlk>,
}

/// C `virtblk_get_cache_mode`: 1 for write back.
pub(crate) fn virtblk_get_cache_mode(vdev: &virtio::Device<device::Bound>) -> u8 {
    vdev.read_feature(cfg!(wce, VIRTIO_BLK_F_CONFIG_WCE))
        .unwrap_or_else(|| vdev.has_feature(uapi::VIRTIO_BLK_F_FLUSH) as u8)
        .min(1)
}

/// Writes the write-cache mode (`wce`); `EOPNOTSUPP` without
/// `VIRTIO_BLK_F_CONFIG_WCE`.
pub(crate) fn virtblk_set_cache_mode(vdev: &virtio::Device<device::Bound>, wb: u8) -> Result {
    vdev.write_feature(cfg!(wce, VIRTIO_BLK_F_CONFIG_WCE), wb)
}

/// C `virtblk_read_limits`: reads the config space into the pure logic.
fn virtblk_read_limits(vdev: &virtio::Device<device::Bound>) -> sg_plan::Limits {
    let cfg = sg_plan::DevConfig {
        seg_max: vdev.read_feature(cfg!(seg_max, VIRTIO_BLK_F_SEG_MAX)),
        size_max: vdev.read_feature(cfg!(size_max, VIRTIO_BLK_F_SIZE_MAX)),
        blk_size: vdev.read_feature(cfg!(blk_size, VIRTIO_BLK_F_BLK_SIZE)),
        topology: vdev.read_consistent(|v| {
            Some((
                v.read_feature(cfg!(physical_block_exp, VIRTIO_BLK_F_TOPOLOGY))?,
                v.read_feature(cfg!(alignment_offset, VIRTIO_BLK_F_TOPOLOGY))?,
                v.read_feature(cfg!(min_io_size, VIRTIO_BLK_F_TOPOLOGY))?,
                v.read_feature(cfg!(opt_io_size, VIRTIO_BLK_F_TOPOLOGY))?,
            ))
        }),
        discard: vdev.read_consistent(|v| {
            Some((
                v.read_feature(cfg!(discard_sector_alignment, VIRTIO_BLK_F_DISCARD))?,
                v.read_feature(cfg!(max_discard_sectors, VIRTIO_BLK_F_DISCARD))?,
                v.read_feature(cfg!(max_discard_seg, VIRTIO_BLK_F_DISCARD))?,
            ))
        }),
        write_zeroes: vdev.read_feature(cfg!(max_write_zeroes_sectors, VIRTIO_BLK_F_WRITE_ZEROES)),
        max_dma_size: vdev.max_dma_size() as u64,
    };
    sg_plan::cap_segments(
        sg_plan::read_limits(&cfg),
        crate::module_parameters::seg_max.value(),
    )
}

/// The disk [`sg_plan::Limits`] describe.
fn disk_builder(l: &sg_plan::Limits) -> Result<GenDiskBuilder> {
    let physical = if l.physical_block_size != 0 {
        l.physical_block_size
    } else {
        l.logical_block_size
    };
    let mut b = GenDiskBuilder::new()
        .rotational(true)
        .logical_block_size(l.logical_block_size)?
        .physical_block_size(physical)?
        .segments(Segments {
            max_segments: l.max_segments as u16,
            max_segment_size: l.max_segment_size,
        })
        // No real sector limit, as C.
        .max_sectors(u32::MAX)
        .topology(Topology {
            alignment_offset: l.alignment_offset,
            io_min: l.io_min,
            io_opt: l.io_opt,
        })
        .max_write_zeroes_sectors(l.max_write_zeroes_sectors);
    if l.max_hw_discard_sectors != 0 {
        b = b.discard(Discard {
            max_sectors: l.max_hw_discard_sectors,
            max_segments: l.max_discard_segments as u16,
            granularity: l.discard_granularity,
        });
    }
    Ok(b)
}

/// C `init_vq`: one request virtqueue per hardware queue.
fn init_vq<'b>(
    vdev: &'b virtio::Device<device::Core<'_>>,
) -> Result<(Virtqueues<'b, VirtBlkVq>, u32)> {
    let dev_nq = vdev.read_feature(cfg!(num_queues, VIRTIO_BLK_F_MQ));
    let n = sg_plan::num_vqs(dev_nq, crate::module_parameters::num_request_queues.value())
        .map_err(|_| {
            pr_err!("MQ advertised but zero queues reported\n");
            EINVAL
        })?;
    // At most one per possible CPU that takes managed interrupts, as C.
    let n = HwQueues::num_possible_queues(n);
    let npoll = sg_plan::poll_vqs(n, crate::module_parameters::poll_queues.value());
    pr_info!("{}/0/{} default/read/poll queues\n", n - npoll, npoll);
    let mut queues = KVec::with_capacity(n as usize, GFP_KERNEL)?;
    for i in 0..n {
        let polled = i >= n - npoll;
        let name = if polled {
            CString::try_from_fmt(fmt!("req_poll.{}", i))?
        } else {
            CString::try_from_fmt(fmt!("req.{}", i))?
        };
        queues.push(
            virtio::QueueInfo {
                name,
                data: VirtBlkVq::new()?,
                callback: !polled,
            },
            GFP_KERNEL,
        )?;
    }
    Ok((
        vdev.find_vqs(queues, c"VirtBlkVq::lock", static_lock_class!())?,
        npoll,
    ))
}

/// Prints the size of a disk named `name`, as C `virtblk_update_capacity`.
fn print_capacity(name: &str, capacity: u64, lbs: u32, resize: bool) {
    pr_info!(
        "[{}] {}{} {}-byte logical blocks ({} bytes)\n",
        name,
        if resize { "new size: " } else { "" },
        sg_plan::nblocks(capacity, lbs),
        lbs,
        sg_plan::sectors_to_bytes(capacity)
    );
}

/// C `virtblk_update_capacity`.
fn virtblk_update_capacity(disk: &Disk<VirtioMq>, capacity: u64, resize: bool) {
    let name = disk.name().to_str().unwrap_or("?");
    print_capacity(name, capacity, disk.logical_block_size(), resize);
    disk.set_capacity_and_notify(capacity);
}

/// `virtio_driver.config_changed`, in interrupt context.
pub(crate) fn config_changed(this: Pin<&Probed<'_>>) {
    // (Already queued: it reads the new size anyway.)
    let _ = workqueue::system().enqueue(this.disk.clone());
}

/// C `virtblk_get_id`: asks the device for its serial (the `serial`
/// attribute, on each read, as C). May sleep; waits for the device.
pub(crate) fn virtblk_get_id(
    vblk: &VirtioBlk,
    disk: &Disk<VirtioMq>,
) -> Result<[u8; sg_plan::VIRTIO_BLK_ID_BYTES + 1]> {
    let mut buf = [0u8; sg_plan::VIRTIO_BLK_ID_BYTES];
    disk.execute_driver_in(&mut buf, |data| {
        // SAFETY: The request is allocated and not yet issued: nothing else
        // references its data.
        unsafe { data.setup_get_id(vblk) }
    })?;
    let mut out = [0u8; sg_plan::VIRTIO_BLK_ID_BYTES + 1];
    let len = sg_plan::serial_len(&buf[..]);
    out[..len].copy_from_slice(&buf[..len]);
    Ok(out)
}

/// `virtio_driver.probe` (C `virtblk_probe`).
pub(crate) fn probe<'b>(vdev: &'b virtio::Device<device::Core<'_>>) -> Result<Probed<'b>> {
    if !vdev.has_config_access() {
        pr_err!("probe failure: config access disabled\n");
        return Err(EINVAL);
    }
    let (vqs, npoll) = init_vq(vdev)?;

    let limits = virtblk_read_limits(vdev);
    let prealloc = crate::module_parameters::sg_prealloc.value() != 0;
    let first_chunk = sg_plan::first_chunk_entries(prealloc, limits.max_segments);
    let depth = sg_plan::queue_depth(
        crate::module_parameters::queue_depth.value(),
        vqs.queues()[0].lock().num_free(),
        vdev.has_feature(uapi::VIRTIO_RING_F_INDIRECT_DESC),
    );
    let nr_hw = vqs.queues().len() as u32;
    let pdu = request::VirtblkReq::pdu_bytes(first_chunk);

    let mut queues = KVec::with_capacity(vqs.queues().len(), GFP_KERNEL)?;
    for q in vqs.queues() {
        queues.push(q.clone(), GFP_KERNEL)?;
    }
    let bound: &virtio::Device<device::Bound> = vdev;
    let vblk = Arc::new(
        VirtioBlk {
            binding: bound.binding()?,
            byte_order: vdev.byte_order(),
            config_wce: vdev.has_feature(uapi::VIRTIO_BLK_F_CONFIG_WCE),
            vqs: queues,
            first_chunk,
            max_discard_segments: limits.max_discard_segments.into(),
            stats: Stats::new()?,
        },
        GFP_KERNEL,
    )?;

    let s = &vblk.stats;
    s.pdu_bytes.store(pdu as u64, Ordering::Relaxed);
    s.inline_sg.store(first_chunk as u64, Ordering::Relaxed);
    s.queue_depth.store(depth as u64, Ordering::Relaxed);
    s.nr_hw_queues.store(nr_hw as u64, Ordering::Relaxed);
    s.tagset_sg_bytes.store(
        sg_plan::tagset_sg_bytes(nr_hw, depth, crate::stats::sg_size(), first_chunk),
        Ordering::Relaxed,
    );

    // (No `BLK_MQ_F_SHOULD_MERGE`: 7.3 merges by default.)
    let dev: &device::Device<device::Bound> = bound.as_ref();
    let tag_set = Arc::pin_init(
        TagSet::new_for_device(
            dev,
            HwQueues {
                default: nr_hw - npoll,
                poll: npoll,
            },
            depth,
            TagSetFlags::empty(),
            first_chunk,
        ),
        GFP_KERNEL,
    )?;

    // The lowest free index; the disk holds it, and gives it back after
    // `del_gendisk`.
    let number = MAJOR.lock().as_ref().ok_or(ENODEV)?.index(None)?;
    let mut name = [0u8; 32];
    let len = sg_plan::name_format(DISK_PREFIX, number.index(), &mut name).ok_or(EINVAL)?;
    let name = core::str::from_utf8(&name[..len]).map_err(|_| EINVAL)?;

    let capacity = vdev.read(cfg!(capacity));
    print_capacity(name, capacity, limits.logical_block_size, false);
    let builder = disk_builder(&limits)?
        .write_cache(virtblk_get_cache_mode(vdev) != 0)
        .read_only(vdev.has_feature(uapi::VIRTIO_BLK_F_RO))
        .capacity_sectors(capacity)
        .parent(dev)
        .number(number)
        .owner(kernel::module::this_module::<crate::LocalModule>());
    // The disk's first I/O (the partition scan) needs the device.
    vdev.device_ready();
    let disk = builder.build(fmt!("{}", name), tag_set, vblk.clone())?;

    let state = Arc::pin_init(
        pin_init!(DiskState {
            disk <- new_mutex!(Some(disk)),
            config_work <- new_work!("DiskState::config_work"),
        }),
        GFP_KERNEL,
    )?;
    // (Nothing below may fail.)
    let debugfs = stats::DiskDir::new(name, vblk.clone());
    Ok(Probed {
        debugfs,
        vqs,
        disk: state,
        vblk,
    })
}

/// What the disk's debugfs directory shows.
impl stats::Shown for VirtioBlk {
    fn stats(&self) -> &Stats {
        &self.stats
    }

    fn vq_requests(&self) -> impl Iterator<Item = &PerCpuCounter> {
        self.vqs.iter().map(|q| &q.data().submitted)
    }

    /// `virtio_break_device()`, as a surprise removal does.
    fn break_device(&self, _write: &stats::BreakWrite) {
        pr_warn!("breaking the device on request\n");
        // The debugfs directory goes (its writers drained) when the driver
        // data (`Probed`) drops, before the unbind ends (breaking a reset
        // device is harmless).
        if self.with_bound(|v| v.break_device()).is_err() {
            pr_warn!("the device is no longer bound\n");
        }
    }
}

/// C `virtblk_freeze_priv`, for `freeze` (suspend) and `reset_prepare` (a
/// function reset): waits for the requests in flight, holds back new ones
/// (the disk quiesced), resets the device and deletes the virtqueues, which
/// [`restore`] creates again.
pub(crate) fn freeze(vdev: &virtio::Device<device::Core<'_>>, this: Pin<&Probed<'_>>) -> Result {
    {
        let mut guard = this.disk.disk.lock();
        // (Remove takes the disk only while the device is locked, as here.)
        let disk: &mut Option<_> = &mut guard;
        disk.as_mut().ok_or(ENODEV)?.quiesce();
    }
    // The queue is drained: a buffer left would be a request the device
    // never answered, which fails.
    let r = this
        .vqs
        .delete(vdev, |_q, rq| request::virtblk_cancel_request(rq));
    if let Err(e) = r {
        pr_err!("cannot delete the virtqueues: {:?}\n", e);
        unquiesce(this);
        return Err(e);
    }
    // Make sure no work handler is accessing the device.
    this.disk.config_work.flush();
    Ok(())
}

/// C `virtblk_restore_priv`, for `restore` and `reset_done`: creates the
/// virtqueues again, makes the device ready and lets the requests that
/// waited go. If the virtqueues cannot be made, they fail instead of waiting
/// for ever (C leaves them waiting).
pub(crate) fn restore(vdev: &virtio::Device<device::Core<'_>>, this: Pin<&Probed<'_>>) -> Result {
    let r = this.vqs.recreate(vdev);
    match r {
        Ok(()) => vdev.device_ready(),
        Err(e) => pr_err!("cannot create the virtqueues again: {:?}\n", e),
    }
    unquiesce(this);
    r
}

/// Lets the requests held back by [`freeze`] go.
fn unquiesce(this: Pin<&Probed<'_>>) {
    let mut guard = this.disk.disk.lock();
    let disk: &mut Option<_> = &mut guard;
    if let Some(disk) = disk.as_mut() {
        disk.unquiesce();
    }
}

/// `virtio_driver.remove` (C `virtblk_remove`): also the unbind and rmmod
/// path. `del_gendisk` drains in-flight requests (the device still answers)
/// and fails new ones, so nothing hangs. The bus resets the device after
/// this; dropping the driver data then deletes the virtqueues.
pub(crate) fn remove(vdev: &virtio::Device<device::Core<'_>>, this: Pin<&Probed<'_>>) {
    let disk = this.disk.disk.lock().take();
    // Make sure no work handler is accessing the device (it finds no disk
    // now), and none runs the module's code after it is gone.
    this.disk.config_work.flush();
    let Some(mut disk) = disk else {
        return;
    };
    // Unbound between `reset_prepare` and `reset_done` (which holds the
    // transport's lock, not ours): the queues are deleted and the disk
    // quiesced. The requests that wait go to the revoked queues, which fail
    // them (below, as for a broken device).
    disk.unquiesce();
    // Surprise removal, or a device broken by a bad ring or by the debugfs
    // `break_device`: it will never return the requests in flight, so
    // `del_gendisk` would wait forever. Reset it (a broken device that is
    // still there might otherwise write into a request's pages after it
    // ended), then end them.
    if this.vqs.queues().iter().any(|q| q.is_broken()) {
        pr_warn!("device broken: ending the requests in flight\n");
        // `queue_rq` fails new requests (adding to a broken virtqueue fails).
        disk.end_requests_of_dead_device(|| {
            let r = this.vqs.reset_and_detach_unused(vdev, |_q, rq| {
                request::virtblk_cancel_request(rq);
            });
            if let Err(e) = r {
                pr_err!("cannot reset the device to end its requests: {:?}\n", e);
            }
        });
    }
    // `del_gendisk`, then the disk's reference to the state goes.
    drop(disk);
    let _ = &this.vblk;
    let _ = &this.debugfs;
}
