// SPDX-License-Identifier: GPL-2.0

//! One virtio-blk device: probe (`init_vq`, `virtblk_read_limits`, tag set,
//! disk), config changes (capacity), GET_ID, remove.
//!
//! Ownership: probe builds the shared state [`VirtioBlk`] completely, then
//! publishes it (tag set, queue, disk), then makes the device ready, asks for
//! its serial and adds the disk. The bus keeps the [`Probed`] data until the
//! device is unbound; the disk holds a reference to [`VirtioBlk`] until its
//! `free_disk`, so that attributes and an open disk outlive the binding
//! safely. Dropping [`Probed`] (after `remove` and the bus's device reset)
//! removes debugfs, deletes the virtqueues, then puts the disk.

use crate::{
    blk::Request,
    request, sg_plan,
    stats::{DebugfsDir, Stats},
    sysfs,
};
use core::{
    ffi::c_int,
    mem::offset_of,
    ptr::{self, NonNull},
    sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, Ordering},
};
use kernel::{
    bindings, device,
    error::from_err_ptr,
    prelude::*,
    static_lock_class,
    str::CString,
    sync::{aref::ARef, Arc, SetOnce},
    types::Opaque,
    virtio::{self, Queue, QueueHandler, Virtqueues},
    virtio_config_field,
};

/// `VIRTIO_RING_F_INDIRECT_DESC` (uapi virtio_ring.h, not in the bindings).
const VIRTIO_RING_F_INDIRECT_DESC: u32 = 28;

/// Minor numbers per disk (C `PART_BITS`).
const PART_BITS: u32 = 4;

/// Disk name prefix; differs from C virtio_blk's `vd` so both can coexist.
const DISK_PREFIX: &[u8] = b"rvd";

/// A field of `struct virtio_blk_config`.
macro_rules! cfg {
    ($field:ident) => {
        virtio_config_field!(bindings::virtio_blk_config, $field)
    };
}

/// The driver's side of one request virtqueue (C `struct virtio_blk_vq`,
/// whose lock and ring are in [`Queue`]).
///
/// # Invariants
///
/// `rq_queue` is null or the request queue of the device's disk, which is
/// put only after the virtqueues are deleted (see [`Probed`]).
pub(crate) struct VirtBlkVq {
    /// Requests submitted on this queue.
    pub(crate) submitted: AtomicU64,
    rq_queue: AtomicPtr<bindings::request_queue>,
}

impl VirtBlkVq {
    fn new() -> Self {
        Self {
            submitted: AtomicU64::new(0),
            rq_queue: AtomicPtr::new(ptr::null_mut()),
        }
    }

    /// Counts a submitted request.
    pub(crate) fn count_submitted(&self) {
        self.submitted.fetch_add(1, Ordering::Relaxed);
    }

    /// Restarts the hardware queues a full ring stopped.
    pub(crate) fn start_stopped_hw_queues(&self) {
        let q = self.rq_queue.load(Ordering::Acquire);
        if !q.is_null() {
            // SAFETY: `q` is live while the virtqueues exist (type
            // invariant), and this runs from one of them.
            unsafe { crate::blk::start_stopped_hw_queues(q) };
        }
    }
}

impl QueueHandler for VirtBlkVq {
    type Token = Request;

    fn callback(queue: &Queue<Self>) {
        request::virtblk_done(queue);
    }
}

/// An index for a disk name and its minors, given back on drop.
struct Index(u32);

/// Indices in use (one bit each, 64 disks).
static INDICES: AtomicU64 = AtomicU64::new(0);

/// The block major, from `register_blkdev`.
pub(crate) static MAJOR: AtomicU32 = AtomicU32::new(0);

impl Index {
    fn alloc() -> Result<Self> {
        let mut cur = INDICES.load(Ordering::Relaxed);
        loop {
            let free = (!cur).trailing_zeros();
            if free >= 64 {
                return Err(ENOSPC);
            }
            match INDICES.compare_exchange(
                cur,
                cur | (1 << free),
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Ok(Self(free)),
                Err(v) => cur = v,
            }
        }
    }
}

impl Drop for Index {
    fn drop(&mut self) {
        INDICES.fetch_and(!(1u64 << self.0), Ordering::AcqRel);
    }
}

/// The state of one device shared with the block layer (C `struct
/// virtio_blk`): the tag set's `driver_data`, the queue's `queuedata` and
/// the disk's `private_data` (which holds a reference, given back by
/// `free_disk`).
///
/// Everything is set before probe publishes it, except `disk` (set once,
/// after the disk is allocated and before anything that reads it can run)
/// and `serial` (set once, before the disk is added).
#[pin_data]
pub(crate) struct VirtioBlk {
    vdev: ARef<virtio::Device>,
    /// The disk (null until allocated).
    disk: AtomicPtr<bindings::gendisk>,
    #[pin]
    tag_set: Opaque<bindings::blk_mq_tag_set>,
    #[pin]
    config_work: Opaque<bindings::work_struct>,
    index: Index,
    /// Request virtqueues, one per hardware queue.
    pub(crate) vqs: KVec<Arc<Queue<VirtBlkVq>>>,
    /// Hardware queues per type: default, read, poll (C `io_queues`).
    pub(crate) io_queues: [u32; 3],
    /// Entries in the first chunk of each request's scatterlist table.
    pub(crate) first_chunk: u32,
    /// Counters.
    pub(crate) stats: Stats,
    /// GET_ID answer, NUL-terminated.
    serial: SetOnce<[u8; sg_plan::VIRTIO_BLK_ID_BYTES + 1]>,
}

// SAFETY: the raw C parts (tag set, work, disk pointer) are used through
// C APIs that synchronise themselves.
unsafe impl Send for VirtioBlk {}
// SAFETY: as above.
unsafe impl Sync for VirtioBlk {}

impl VirtioBlk {
    /// The device (any context; see [`VirtioBlk::bound_vdev`]).
    pub(crate) fn vdev(&self) -> &virtio::Device {
        &self.vdev
    }

    /// The device, bound.
    ///
    /// # Safety
    ///
    /// The caller runs while the device is bound to this driver: in a sysfs
    /// attribute of the disk (removed by `del_gendisk` in remove), in the
    /// config work (flushed in remove) or in a bus callback.
    pub(crate) unsafe fn bound_vdev(&self) -> &virtio::Device<device::Bound> {
        // SAFETY: per the caller.
        unsafe { self.vdev.as_bound() }
    }

    /// `&vdev->dev`, the parent of the disk.
    pub(crate) fn parent_device(&self) -> *mut bindings::device {
        // SAFETY: the device is live (`ARef`); only the address is taken.
        unsafe { &raw mut (*self.vdev.as_raw()).dev }
    }

    /// The disk (set before anything calling this can run).
    fn disk(&self) -> *mut bindings::gendisk {
        self.disk.load(Ordering::Acquire)
    }

    /// The disk's request queue (null before the disk exists).
    pub(crate) fn queue(&self) -> *mut bindings::request_queue {
        let disk = self.disk();
        if disk.is_null() {
            return ptr::null_mut();
        }
        // SAFETY: the disk is set once allocated and lives as long as the
        // state (it holds a reference to it).
        unsafe { (*disk).queue }
    }

    /// The serial (GET_ID), NUL-terminated; empty if the device has none.
    pub(crate) fn serial(&self) -> &[u8] {
        self.serial.as_ref().map_or(&[0u8][..], |s| &s[..])
    }

    /// The `VirtioBlk` of a disk.
    ///
    /// # Safety
    ///
    /// `disk` is a disk of this driver, not yet freed.
    pub(crate) unsafe fn from_disk<'a>(disk: *mut bindings::gendisk) -> &'a VirtioBlk {
        // SAFETY: per the caller, `private_data` holds a reference to our state.
        unsafe { &*((*disk).private_data as *const VirtioBlk) }
    }
}

/// The driver data of a bound device. Fields drop in this order (see the
/// module documentation).
pub(crate) struct Probed<'bound> {
    _debugfs: DebugfsDir,
    _vqs: Virtqueues<'bound, VirtBlkVq>,
    disk: DiskRef,
    vblk: Arc<VirtioBlk>,
}

/// A reference to an allocated disk, put on drop (`put_disk`).
struct DiskRef(NonNull<bindings::gendisk>);

// SAFETY: `put_disk` may be called from any thread.
unsafe impl Send for DiskRef {}

impl Drop for DiskRef {
    fn drop(&mut self) {
        // SAFETY: our reference from `blk_mq_alloc_disk`, put once.
        unsafe { bindings::put_disk(self.0.as_ptr()) };
    }
}

/// C `virtblk_get_cache_mode`: 1 for write back.
pub(crate) fn virtblk_get_cache_mode(vdev: &virtio::Device<device::Bound>) -> u8 {
    vdev.read_feature(bindings::VIRTIO_BLK_F_CONFIG_WCE, cfg!(wce))
        .unwrap_or_else(|| vdev.has_feature(bindings::VIRTIO_BLK_F_FLUSH) as u8)
        .min(1)
}

/// Writes the write-cache mode (`wce`).
pub(crate) fn virtblk_set_cache_mode(vdev: &virtio::Device<device::Bound>, wb: u8) {
    vdev.write(cfg!(wce), wb);
}

/// C `virtblk_read_limits`: reads the config space into the pure logic.
fn virtblk_read_limits(vdev: &virtio::Device<device::Bound>) -> sg_plan::Limits {
    use bindings::*;
    let cfg = sg_plan::DevConfig {
        seg_max: vdev.read_feature(VIRTIO_BLK_F_SEG_MAX, cfg!(seg_max)),
        size_max: vdev.read_feature(VIRTIO_BLK_F_SIZE_MAX, cfg!(size_max)),
        blk_size: vdev.read_feature(VIRTIO_BLK_F_BLK_SIZE, cfg!(blk_size)),
        topology: vdev.has_feature(VIRTIO_BLK_F_TOPOLOGY).then(|| {
            vdev.read_consistent(|v| {
                (
                    v.read(cfg!(physical_block_exp)),
                    v.read(cfg!(alignment_offset)),
                    v.read(cfg!(min_io_size)),
                    v.read(cfg!(opt_io_size)),
                )
            })
        }),
        discard: vdev.has_feature(VIRTIO_BLK_F_DISCARD).then(|| {
            vdev.read_consistent(|v| {
                (
                    v.read(cfg!(discard_sector_alignment)),
                    v.read(cfg!(max_discard_sectors)),
                    v.read(cfg!(max_discard_seg)),
                )
            })
        }),
        write_zeroes: vdev.read_feature(VIRTIO_BLK_F_WRITE_ZEROES, cfg!(max_write_zeroes_sectors)),
        max_dma_size: vdev.max_dma_size() as u64,
    };
    sg_plan::cap_segments(
        sg_plan::read_limits(&cfg),
        crate::module_parameters::seg_max.value(),
    )
}

/// Copies [`sg_plan::Limits`] into a C `struct queue_limits`.
fn apply_limits(l: &sg_plan::Limits, lim: &mut bindings::queue_limits) {
    lim.max_segments = l.max_segments as u16;
    lim.max_hw_sectors = u32::MAX;
    lim.max_segment_size = l.max_segment_size;
    lim.logical_block_size = l.logical_block_size;
    if l.physical_block_size != 0 {
        lim.physical_block_size = l.physical_block_size;
    }
    lim.alignment_offset = l.alignment_offset;
    lim.io_min = l.io_min;
    lim.io_opt = l.io_opt;
    if l.max_hw_discard_sectors != 0 {
        lim.max_hw_discard_sectors = l.max_hw_discard_sectors;
        lim.max_discard_segments = l.max_discard_segments;
        lim.discard_granularity = l.discard_granularity;
    }
    lim.max_write_zeroes_sectors = l.max_write_zeroes_sectors;
}

/// C `init_vq`: one request virtqueue per hardware queue.
fn init_vq<'b>(
    vdev: &'b virtio::Device<device::Core<'_>>,
) -> Result<(Virtqueues<'b, VirtBlkVq>, u32)> {
    let dev_nq = vdev.read_feature(bindings::VIRTIO_BLK_F_MQ, cfg!(num_queues));
    let ncpu = kernel::cpu::nr_cpu_ids();
    let n = sg_plan::num_vqs(dev_nq, crate::module_parameters::num_queues.value(), ncpu).map_err(
        |_| {
            pr_err!("MQ advertised but zero queues reported\n");
            EINVAL
        },
    )?;
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
                data: VirtBlkVq::new(),
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

/// C `virtblk_update_capacity`.
fn virtblk_update_capacity(vblk: &VirtioBlk, vdev: &virtio::Device<device::Bound>, resize: bool) {
    let capacity = vdev.read(cfg!(capacity));
    // SAFETY: the disk and its queue exist.
    let lbs = unsafe { (*vblk.queue()).limits.logical_block_size };
    let nblocks = sg_plan::nblocks(capacity, lbs);
    let name = vblk.disk_name();
    pr_info!(
        "[{}] {}{} {}-byte logical blocks ({} bytes)\n",
        name,
        if resize { "new size: " } else { "" },
        nblocks,
        lbs,
        sg_plan::sectors_to_bytes(capacity)
    );
    // SAFETY: the disk exists.
    unsafe { bindings::set_capacity_and_notify(vblk.disk(), capacity) };
}

impl VirtioBlk {
    /// The disk name (`?` before the disk exists).
    fn disk_name(&self) -> &str {
        let disk = self.disk();
        if disk.is_null() {
            return "?";
        }
        // The disk is set once allocated and its name no longer changes.
        // SAFETY: the disk lives as long as the state (which holds a
        // reference to it); `c_char` is `u8`, the name NUL-terminated.
        let bytes: &[u8] = unsafe { &(*disk).disk_name };
        let len = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        core::str::from_utf8(&bytes[..len]).unwrap_or("?")
    }
}

/// The config-change work (C `virtblk_config_changed_work`).
///
/// # Safety
///
/// `work` is the `config_work` of a live `VirtioBlk`.
unsafe extern "C" fn virtblk_config_changed_work(work: *mut bindings::work_struct) {
    // SAFETY: `work` is embedded in a `VirtioBlk`, flushed in remove, while
    // the state is referenced by the driver data.
    let vblk = unsafe {
        &*(work.cast::<u8>().sub(offset_of!(VirtioBlk, config_work)) as *const VirtioBlk)
    };
    // SAFETY: the work is queued by `config_changed` (bound device) and
    // flushed in remove.
    let vdev = unsafe { vblk.bound_vdev() };
    virtblk_update_capacity(vblk, vdev, true);
}

/// `virtio_driver.config_changed`, in interrupt context.
pub(crate) fn config_changed(this: Pin<&Probed<'_>>) {
    // SAFETY: `system_percpu_wq` (6.12's `system_wq`) exists from boot on;
    // the work is initialised and flushed in remove.
    unsafe {
        bindings::queue_work_on(
            bindings::wq_misc_consts_WORK_CPU_UNBOUND as c_int,
            bindings::system_percpu_wq,
            this.vblk.config_work.get(),
        );
    }
}

/// C `virtblk_get_id`: asks the device for its serial.
fn virtblk_get_id(vblk: &VirtioBlk) -> Result<[u8; sg_plan::VIRTIO_BLK_ID_BYTES + 1]> {
    let q = vblk.queue();
    // SAFETY: the queue is live.
    let rq = from_err_ptr(unsafe {
        bindings::blk_mq_alloc_request(q, bindings::req_op_REQ_OP_DRV_IN, 0)
    })?;
    // SAFETY: freshly allocated, ours until freed below.
    let req = unsafe { Request::from_raw(rq) };
    // SAFETY: we own the request; nothing else references its PDU.
    unsafe { request::setup_get_id(vblk, &req) };
    let mut buf = KBox::new([0u8; sg_plan::VIRTIO_BLK_ID_BYTES], GFP_KERNEL)?;
    // SAFETY: `buf` is kmalloc'ed (in the linear map) and outlives the request.
    let mut ret = kernel::error::to_result(unsafe {
        bindings::blk_rq_map_kern(
            rq,
            buf.as_mut_ptr().cast(),
            sg_plan::VIRTIO_BLK_ID_BYTES as u32,
            bindings::GFP_KERNEL,
        )
    });
    if ret.is_ok() {
        // SAFETY: `rq` is ours and mapped; this waits for its completion.
        unsafe { bindings::blk_execute_rq(rq, false) };
        // SAFETY: the request completed; we own it again.
        let status = unsafe { request::status_of(&req) };
        ret = match sg_plan::result(status) {
            sg_plan::Status::Ok => Ok(()),
            sg_plan::Status::NotSupported => Err(EOPNOTSUPP),
            sg_plan::Status::IoErr => Err(EIO),
        };
    }
    // SAFETY: allocated above, not used anymore.
    unsafe { bindings::blk_mq_free_request(req.as_ptr()) };
    ret?;
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
        vdev.has_feature(VIRTIO_RING_F_INDIRECT_DESC),
    );
    let nr_hw = vqs.queues().len() as u32;
    let pdu = request::VirtblkReq::pdu_bytes(first_chunk);

    let mut queues = KVec::with_capacity(vqs.queues().len(), GFP_KERNEL)?;
    for q in vqs.queues() {
        queues.push(q.clone(), GFP_KERNEL)?;
    }
    let vblk = Arc::pin_init(
        try_pin_init!(VirtioBlk {
            vdev: ARef::from(&**vdev),
            disk: AtomicPtr::new(ptr::null_mut()),
            // SAFETY: an all-zero tag set is the documented starting point.
            tag_set: Opaque::new(unsafe { core::mem::zeroed() }),
            // `INIT_WORK()`, with one lockdep class for every device's work,
            // as its single call site in C `virtblk_probe` gives.
            // SAFETY: `slot` is valid for writes and stays in place for the
            // life of the state; the name and the class key are static.
            config_work <- Opaque::ffi_init(|slot| unsafe {
                bindings::init_work_with_key(
                    slot,
                    Some(virtblk_config_changed_work),
                    false,
                    c"(work_completion)&vblk->config_work".as_char_ptr(),
                    static_lock_class!().as_ptr(),
                )
            }),
            index: Index::alloc()?,
            vqs: queues,
            io_queues: [nr_hw - npoll, 0, npoll],
            first_chunk,
            stats: Stats::default(),
            serial: SetOnce::new(),
        }? Error),
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

    let vblk_ptr: *const VirtioBlk = &*vblk;
    let set = vblk.tag_set.get();
    // SAFETY: `set` is our zeroed tag set, not yet allocated; `vblk`, its
    // `driver_data`, outlives it (freed in remove or below).
    let err = unsafe {
        (*set).ops = &crate::VIRTIO_MQ_OPS;
        (*set).queue_depth = depth;
        (*set).numa_node = bindings::NUMA_NO_NODE;
        // (No `BLK_MQ_F_SHOULD_MERGE`: 7.3 merges by default.)
        (*set).flags = 0;
        (*set).cmd_size = core::mem::size_of::<request::VirtblkReq>() as u32;
        (*set).driver_data = vblk_ptr.cast_mut().cast();
        (*set).nr_hw_queues = nr_hw;
        // Poll queues need the poll map (after the default and read ones).
        (*set).nr_maps = if npoll > 0 {
            bindings::hctx_type_HCTX_MAX_TYPES
        } else {
            1
        };
        bindings::blk_mq_alloc_tag_set(set)
    };
    kernel::error::to_result(err)?;
    let free_tag_set = kernel::types::ScopeGuard::new(|| {
        // SAFETY: allocated above; no disk uses it any more.
        unsafe { bindings::blk_mq_free_tag_set(set) }
    });

    // SAFETY: all-zero limits are "use the block layer defaults".
    let mut lim: bindings::queue_limits = unsafe { core::mem::zeroed() };
    lim.features = bindings::BLK_FEAT_ROTATIONAL;
    apply_limits(&limits, &mut lim);
    if virtblk_get_cache_mode(vdev) != 0 {
        lim.features |= bindings::BLK_FEAT_WRITE_CACHE;
    }
    // `blk_mq_alloc_disk()`: the queue's lockdep class is static, as the
    // C macro's.
    // SAFETY: the tag set is allocated; `vblk` (the queue data) outlives the
    // disk's queue (the disk holds a reference); the class key is static.
    let disk = from_err_ptr(unsafe {
        bindings::__blk_mq_alloc_disk(
            set,
            &mut lim,
            vblk_ptr.cast_mut().cast(),
            static_lock_class!().as_ptr(),
        )
    })?;
    // SAFETY: `__blk_mq_alloc_disk` returns a valid disk or an error.
    let disk_ref = DiskRef(unsafe { NonNull::new_unchecked(disk) });
    // SAFETY: the disk is fresh and ours.
    unsafe {
        let name = &mut *(&raw mut (*disk).disk_name as *mut [u8; 32]);
        sg_plan::name_format(DISK_PREFIX, vblk.index.0, name);
        (*disk).major = MAJOR.load(Ordering::Relaxed) as i32;
        (*disk).first_minor = (vblk.index.0 << PART_BITS) as i32;
        (*disk).minors = 1 << PART_BITS;
        (*disk).fops = crate::VIRTBLK_FOPS.as_ptr();
    }
    vblk.disk.store(disk, Ordering::Release);
    for q in vblk.vqs.iter() {
        // SAFETY: the disk is live.
        let rq_queue = unsafe { (*disk).queue };
        // INVARIANT: the disk is put after the virtqueues are deleted.
        q.data().rq_queue.store(rq_queue, Ordering::Release);
    }
    if vdev.has_feature(bindings::VIRTIO_BLK_F_RO) {
        // SAFETY: the disk exists.
        unsafe { bindings::set_disk_ro(disk, true) };
    }
    virtblk_update_capacity(&vblk, vdev, false);
    vdev.device_ready();

    if let Ok(serial) = virtblk_get_id(&vblk) {
        vblk.serial.populate(serial);
    }

    // The disk's reference to the state, given back by `free_disk`, or
    // below if the disk is never added.
    let private = Arc::into_raw(vblk.clone());
    // SAFETY: the disk is not added yet: nothing reads `private_data`.
    unsafe { (*disk).private_data = private.cast_mut().cast() };
    let groups = sysfs::GROUPS.as_groups();
    // SAFETY: the disk is fully set up; the parent is bound; `groups` are static.
    let err = unsafe { bindings::device_add_disk(vblk.parent_device(), disk, groups) };
    if let Err(e) = kernel::error::to_result(err) {
        // Stop the device and its queues before the disk goes away.
        drop(vqs);
        drop(disk_ref);
        // SAFETY: never added, so `free_disk` never runs: the reference is
        // ours again.
        drop(unsafe { Arc::from_raw(private) });
        drop(free_tag_set);
        return Err(e);
    }
    free_tag_set.dismiss();

    // (Nothing below may fail: the disk is added.)
    let debugfs = CString::try_from_fmt(fmt!("{}", vblk.disk_name()))
        .map_or_else(|_| DebugfsDir::none(), |n| DebugfsDir::create_in_root(&n));
    // SAFETY: `vblk` outlives its debugfs directory (removed first when
    // `Probed` drops).
    unsafe { debugfs.add_stats(&vblk.stats) };
    // SAFETY: as above.
    unsafe {
        debugfs.trigger_file(
            c"break_device".as_char_ptr(),
            vblk_ptr.cast_mut().cast(),
            &BREAK_FOPS,
        )
    };
    for (i, q) in vblk.vqs.iter().enumerate() {
        if let Ok(name) = CString::try_from_fmt(fmt!("vq{}_requests", i)) {
            // SAFETY: as above; debugfs copies the name.
            unsafe { debugfs.u64_file(name.as_char_ptr(), &q.data().submitted) };
        }
    }
    Ok(Probed {
        _debugfs: debugfs,
        _vqs: vqs,
        disk: disk_ref,
        vblk,
    })
}

/// `break_device` debugfs write: `virtio_break_device()`, as a surprise
/// removal does.
///
/// # Safety
///
/// `file` is a debugfs file created by probe with the `VirtioBlk` as data.
unsafe extern "C" fn virtblk_break_write(
    file: *mut bindings::file,
    _buf: *const kernel::ffi::c_char,
    count: usize,
    _pos: *mut bindings::loff_t,
) -> isize {
    // The file is removed (its writers drained) before the driver data's
    // reference to the state goes.
    // SAFETY: `simple_open` put the live `VirtioBlk` in `private_data`.
    let vblk = unsafe { &*((*file).private_data as *const VirtioBlk) };
    pr_warn!("{}: breaking the device on request\n", vblk.disk_name());
    // SAFETY: the file is removed when the driver data drops, while the
    // device is still being unbound (breaking a reset device is harmless).
    unsafe { vblk.bound_vdev() }.break_device();
    count as isize
}

static BREAK_FOPS: crate::stats::TriggerFops = crate::stats::TriggerFops::new(virtblk_break_write);

/// `virtio_driver.remove` (C `virtblk_remove`): also the unbind and rmmod
/// path. `del_gendisk` drains in-flight requests (the device still answers)
/// and fails new ones, so nothing hangs. The bus resets the device after
/// this; dropping the driver data then deletes the virtqueues and puts the
/// disk.
pub(crate) fn remove(vdev: &virtio::Device<device::Core<'_>>, this: Pin<&Probed<'_>>) {
    let vblk = &this.vblk;
    let disk = this.disk.0.as_ptr();
    // SAFETY: the work is initialised; make sure no work handler is
    // accessing the device.
    unsafe { bindings::flush_work(vblk.config_work.get()) };
    // Surprise removal: the device is gone and will never return the
    // requests in flight, so `del_gendisk` would wait forever. End them.
    if vblk.vqs.iter().any(|q| q.is_broken()) {
        pr_warn!("device broken: ending the requests in flight\n");
        // The device is broken: it touches no request any more, and
        // `queue_rq` fails new ones (adding to a broken virtqueue fails).
        // SAFETY: the queue and tag set are live; the requests are ours.
        unsafe {
            crate::blk::cancel_all_requests(
                (*disk).queue,
                vblk.tag_set.get(),
                || vdev.synchronize_cbs(),
                request::virtblk_cancel_request,
            )
        };
    }
    // SAFETY: the disk was added by probe.
    unsafe { bindings::del_gendisk(disk) };
    // SAFETY: the disk is deleted: no request of the tag set is left.
    unsafe { bindings::blk_mq_free_tag_set(vblk.tag_set.get()) };
}

/// `block_device_operations.free_disk`: the last reference is gone.
///
/// # Safety
///
/// Called once by the block layer for a disk added by probe.
pub(crate) unsafe extern "C" fn virtblk_free_disk(disk: *mut bindings::gendisk) {
    // SAFETY: `private_data` holds the reference probe gave the disk.
    drop(unsafe { Arc::from_raw((*disk).private_data as *const VirtioBlk) });
}
