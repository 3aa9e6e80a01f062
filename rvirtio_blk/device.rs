// SPDX-License-Identifier: GPL-2.0

//! One virtio-blk device: probe (`init_vq`, `virtblk_read_limits`, tag set,
//! disk), config changes (capacity), GET_ID, remove.

use crate::{
    blk::Request,
    request,
    request::VirtblkReq,
    sg_plan,
    stats::{DebugfsDir, Stats},
    sysfs,
    virtio::{IrqSpinLock, VirtioDevice, Virtqueue},
};
use core::{
    ffi::c_int,
    mem::offset_of,
    ptr,
    sync::atomic::{AtomicU32, AtomicU64, Ordering},
};
use kernel::{bindings, error::from_err_ptr, prelude::*, static_lock_class, types::Opaque};

/// `VIRTIO_RING_F_INDIRECT_DESC` (uapi virtio_ring.h, not in the bindings).
const VIRTIO_RING_F_INDIRECT_DESC: u32 = 28;

/// Minor numbers per disk (C `PART_BITS`).
const PART_BITS: u32 = 4;

/// Disk name prefix; differs from C virtio_blk's `vd` so both can coexist.
const DISK_PREFIX: &[u8] = b"rvd";

/// Offset of a field of `struct virtio_blk_config`.
macro_rules! cfg_off {
    ($field:ident) => {
        offset_of!(bindings::virtio_blk_config, $field)
    };
}

/// One request virtqueue and its lock (C `struct virtio_blk_vq`).
#[repr(align(64))]
pub(crate) struct VirtBlkVq {
    /// The virtqueue.
    pub(crate) vq: Virtqueue,
    /// Serialises ring updates between `queue_rq` and the interrupt.
    pub(crate) lock: IrqSpinLock,
    /// Requests submitted on this queue.
    pub(crate) submitted: AtomicU64,
}

impl VirtBlkVq {
    /// Counts a submitted request.
    pub(crate) fn count_submitted(&self) {
        self.submitted.fetch_add(1, Ordering::Relaxed);
    }
}

/// The driver state of one device (C `struct virtio_blk`).
///
/// Allocated in probe and reachable from `vdev->priv`, the tag set's
/// `driver_data`, the queue's `queuedata` and the disk's `private_data`;
/// freed by the disk's `free_disk` (or by probe on failure).
pub(crate) struct VirtioBlk {
    /// The device.
    pub(crate) vdev: VirtioDevice,
    /// The disk (null until allocated).
    pub(crate) disk: *mut bindings::gendisk,
    tag_set: Opaque<bindings::blk_mq_tag_set>,
    config_work: Opaque<bindings::work_struct>,
    /// Index for the name and minors.
    index: u32,
    /// Request virtqueues, one per hardware queue.
    pub(crate) vqs: KVec<VirtBlkVq>,
    vq_names: KVec<[u8; 16]>,
    /// Inline scatterlist entries per request.
    pub(crate) first_chunk: u32,
    /// Counters.
    pub(crate) stats: Stats,
    /// GET_ID answer, NUL-terminated.
    pub(crate) serial: [u8; sg_plan::VIRTIO_BLK_ID_BYTES + 1],
    debugfs: DebugfsDir,
}

impl VirtioBlk {
    /// The disk's request queue.
    pub(crate) fn queue(&self) -> *mut bindings::request_queue {
        // SAFETY: the disk exists whenever the queues run.
        unsafe { (*self.disk).queue }
    }

    /// The `VirtioBlk` of a disk.
    ///
    /// # Safety
    ///
    /// `disk` is a disk of this driver, not yet freed.
    pub(crate) unsafe fn from_disk<'a>(disk: *mut bindings::gendisk) -> &'a VirtioBlk {
        // SAFETY: per the caller, `private_data` is our state.
        unsafe { &*((*disk).private_data as *const VirtioBlk) }
    }
}

/// Indices in use (one bit each, 64 disks).
static INDICES: AtomicU64 = AtomicU64::new(0);

/// The block major, from `register_blkdev`.
pub(crate) static MAJOR: AtomicU32 = AtomicU32::new(0);

fn alloc_index() -> Result<u32> {
    let mut cur = INDICES.load(Ordering::Relaxed);
    loop {
        let free = (!cur).trailing_zeros();
        if free >= 64 {
            return Err(ENOSPC);
        }
        match INDICES.compare_exchange(cur, cur | (1 << free), Ordering::AcqRel, Ordering::Relaxed)
        {
            Ok(_) => return Ok(free),
            Err(v) => cur = v,
        }
    }
}

fn free_index(i: u32) {
    INDICES.fetch_and(!(1u64 << i), Ordering::AcqRel);
}

/// C `virtblk_get_cache_mode`: 1 for write back.
pub(crate) fn virtblk_get_cache_mode(vdev: VirtioDevice) -> u8 {
    vdev.cread_feature(bindings::VIRTIO_BLK_F_CONFIG_WCE, |v| {
        v.cread8(cfg_off!(wce))
    })
    .unwrap_or_else(|| vdev.has_feature(bindings::VIRTIO_BLK_F_FLUSH) as u8)
    .min(1)
}

/// C `virtblk_read_limits`: reads the config space into the pure logic.
fn virtblk_read_limits(vdev: VirtioDevice) -> sg_plan::Limits {
    use bindings::*;
    let cfg = sg_plan::DevConfig {
        seg_max: vdev.cread_feature(VIRTIO_BLK_F_SEG_MAX, |v| v.cread32(cfg_off!(seg_max))),
        size_max: vdev.cread_feature(VIRTIO_BLK_F_SIZE_MAX, |v| v.cread32(cfg_off!(size_max))),
        blk_size: vdev.cread_feature(VIRTIO_BLK_F_BLK_SIZE, |v| v.cread32(cfg_off!(blk_size))),
        topology: vdev.cread_feature(VIRTIO_BLK_F_TOPOLOGY, |v| {
            (
                v.cread8(cfg_off!(physical_block_exp)),
                v.cread8(cfg_off!(alignment_offset)),
                v.cread16(cfg_off!(min_io_size)),
                v.cread32(cfg_off!(opt_io_size)),
            )
        }),
        discard: vdev.cread_feature(VIRTIO_BLK_F_DISCARD, |v| {
            (
                v.cread32(cfg_off!(discard_sector_alignment)),
                v.cread32(cfg_off!(max_discard_sectors)),
                v.cread32(cfg_off!(max_discard_seg)),
            )
        }),
        write_zeroes: vdev.cread_feature(VIRTIO_BLK_F_WRITE_ZEROES, |v| {
            v.cread32(cfg_off!(max_write_zeroes_sectors))
        }),
        max_dma_size: vdev.max_dma_size(),
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
fn init_vq(vblk: &mut VirtioBlk) -> Result {
    let vdev = vblk.vdev;
    let dev_nq = vdev.cread_feature(bindings::VIRTIO_BLK_F_MQ, |v| {
        v.cread16(cfg_off!(num_queues))
    });
    let ncpu = kernel::cpu::nr_cpu_ids();
    let n = sg_plan::num_vqs(dev_nq, crate::module_parameters::num_queues.value(), ncpu).map_err(
        |_| {
            pr_err!("MQ advertised but zero queues reported\n");
            EINVAL
        },
    )?;
    pr_info!("{}/0/0 default/read/poll queues\n", n);
    for i in 0..n {
        let mut name = [0u8; 16];
        let mut w = Writer(&mut name, 0);
        let _ = core::fmt::write(&mut w, format_args!("req.{}", i));
        vblk.vq_names.push(name, GFP_KERNEL)?;
    }
    let mut vqs = KVec::new();
    vdev.find_vqs(&vblk.vq_names, request::virtblk_done, &mut vqs)?;
    for vq in vqs.iter() {
        vblk.vqs
            .push(
                VirtBlkVq {
                    vq: *vq,
                    lock: IrqSpinLock::new(),
                    submitted: AtomicU64::new(0),
                },
                GFP_KERNEL,
            )
            .inspect_err(|_| vdev.del_vqs())?;
    }
    for q in vblk.vqs.iter() {
        // SAFETY: the vector does not grow anymore: the locks stay in place.
        unsafe { q.lock.init() };
    }
    Ok(())
}

/// Formats into a fixed NUL-terminated buffer, truncating.
struct Writer<'a>(&'a mut [u8], usize);

impl core::fmt::Write for Writer<'_> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        for &b in s.as_bytes() {
            if self.1 + 1 < self.0.len() {
                self.0[self.1] = b;
                self.1 += 1;
            }
        }
        Ok(())
    }
}

/// C `virtblk_update_capacity`.
fn virtblk_update_capacity(vblk: &VirtioBlk, resize: bool) {
    let capacity = vblk.vdev.cread64(cfg_off!(capacity));
    // SAFETY: the disk and its queue exist.
    let lbs = unsafe { (*vblk.queue()).limits.logical_block_size };
    let nblocks = sg_plan::nblocks(capacity, lbs);
    let name = disk_name(vblk.disk);
    pr_info!(
        "[{}] {}{} {}-byte logical blocks ({} bytes)\n",
        name,
        if resize { "new size: " } else { "" },
        nblocks,
        lbs,
        sg_plan::sectors_to_bytes(capacity)
    );
    // SAFETY: the disk exists.
    unsafe { bindings::set_capacity_and_notify(vblk.disk, capacity) };
}

/// The disk name as a `&str`.
fn disk_name<'a>(disk: *mut bindings::gendisk) -> &'a str {
    // SAFETY: the disk exists; its name is NUL-terminated.
    // (`kernel::ffi::c_char` is `u8`.)
    let bytes: &[u8] = unsafe { &(*disk).disk_name };
    let len = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    core::str::from_utf8(&bytes[..len]).unwrap_or("?")
}

/// The config-change work (C `virtblk_config_changed_work`).
///
/// # Safety
///
/// `work` is the `config_work` of a live `VirtioBlk`.
unsafe extern "C" fn virtblk_config_changed_work(work: *mut bindings::work_struct) {
    // SAFETY: `work` is embedded in a `VirtioBlk`, flushed before it is freed.
    let vblk = unsafe {
        &*(work.cast::<u8>().sub(offset_of!(VirtioBlk, config_work)) as *const VirtioBlk)
    };
    virtblk_update_capacity(vblk, true);
}

/// `virtio_driver.config_changed`, in interrupt context.
///
/// # Safety
///
/// Called by the virtio core for a device we drive.
pub(crate) unsafe extern "C" fn virtblk_config_changed(vdev: *mut bindings::virtio_device) {
    // SAFETY: per the function's contract.
    let vdev = unsafe { VirtioDevice::from_raw(vdev) };
    let vblk = vdev.drvdata() as *const VirtioBlk;
    if vblk.is_null() {
        return;
    }
    // SAFETY: `vblk` lives until remove, which flushes this work first;
    // `system_percpu_wq` (6.12's `system_wq`) exists from boot on.
    unsafe {
        bindings::queue_work_on(
            bindings::wq_misc_consts_WORK_CPU_UNBOUND as c_int,
            bindings::system_percpu_wq,
            (*vblk).config_work.get(),
        );
    }
}

/// C `virtblk_get_id`: asks the device for its serial.
fn virtblk_get_id(vblk: &VirtioBlk, out: &mut [u8; sg_plan::VIRTIO_BLK_ID_BYTES + 1]) -> Result {
    let q = vblk.queue();
    // SAFETY: the queue is live.
    let rq = from_err_ptr(unsafe {
        bindings::blk_mq_alloc_request(q, bindings::req_op_REQ_OP_DRV_IN, 0)
    })?;
    // SAFETY: freshly allocated, ours until freed below.
    let req = unsafe { Request::from_raw(rq) };
    let vbr = req.pdu::<VirtblkReq>();
    // SAFETY: our PDU.
    unsafe {
        (*vbr).out_hdr.type_ = vblk.vdev.cpu_to_virtio32(sg_plan::VIRTIO_BLK_T_GET_ID);
        (*vbr).out_hdr.ioprio = 0;
        (*vbr).out_hdr.sector = 0;
        (*vbr).data_out = false;
    }
    let mut buf = KBox::new([0u8; sg_plan::VIRTIO_BLK_ID_BYTES], GFP_KERNEL)?;
    // SAFETY: `buf` is kmalloc'ed (DMA-able) and outlives the request.
    let mut ret = kernel::error::to_result(unsafe {
        bindings::blk_rq_map_kern(
            rq,
            buf.as_mut_ptr().cast(),
            sg_plan::VIRTIO_BLK_ID_BYTES as u32,
            bindings::GFP_KERNEL,
        )
    });
    if ret.is_ok() {
        // SAFETY: `rq` is ours and mapped.
        unsafe { bindings::blk_execute_rq(rq, false) };
        // SAFETY: the device finished with the request.
        let status = unsafe { ptr::read_volatile(&raw const (*vbr).status) };
        ret = match sg_plan::result(status) {
            sg_plan::Status::Ok => Ok(()),
            sg_plan::Status::NotSupported => Err(EOPNOTSUPP),
            sg_plan::Status::IoErr => Err(EIO),
        };
    }
    // SAFETY: allocated above, not used anymore.
    unsafe { bindings::blk_mq_free_request(rq) };
    ret?;
    let len = sg_plan::serial_len(&buf[..]);
    out[..len].copy_from_slice(&buf[..len]);
    out[len] = 0;
    Ok(())
}

/// `virtio_driver.probe` (C `virtblk_probe`).
///
/// # Safety
///
/// Called by the virtio core with a device that matched our id table.
pub(crate) unsafe extern "C" fn virtblk_probe(vdev: *mut bindings::virtio_device) -> c_int {
    // SAFETY: per the function's contract.
    let vdev = unsafe { VirtioDevice::from_raw(vdev) };
    match probe(vdev) {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

fn probe(vdev: VirtioDevice) -> Result {
    if !vdev.has_config_access() {
        pr_err!("probe failure: config access disabled\n");
        return Err(EINVAL);
    }
    let index = alloc_index()?;
    let vblk = KBox::new(
        VirtioBlk {
            vdev,
            disk: ptr::null_mut(),
            // SAFETY: an all-zero tag set is the documented starting point.
            tag_set: Opaque::new(unsafe { core::mem::zeroed() }),
            config_work: Opaque::uninit(),
            index,
            vqs: KVec::new(),
            vq_names: KVec::new(),
            first_chunk: sg_plan::INLINE_SG_CNT,
            stats: Stats::default(),
            serial: [0; sg_plan::VIRTIO_BLK_ID_BYTES + 1],
            debugfs: DebugfsDir::none(),
        },
        GFP_KERNEL,
    )
    .inspect_err(|_| free_index(index))?;
    let vblk = KBox::into_raw(vblk);
    // SAFETY: just allocated; we own it until published.
    match unsafe { probe_setup(vdev, &mut *vblk) } {
        Ok(()) => Ok(()),
        Err(e) => {
            vdev.set_drvdata(ptr::null_mut());
            // SAFETY: from `KBox::into_raw`, no other user left.
            drop(unsafe { KBox::from_raw(vblk) });
            free_index(index);
            Err(e)
        }
    }
}

/// Probe after the state is allocated; undoes its own steps on failure.
fn probe_setup(vdev: VirtioDevice, vblk: &mut VirtioBlk) -> Result {
    let vblk_ptr: *mut VirtioBlk = vblk;
    // `INIT_WORK()`, with one lockdep class for every device's work, as its
    // single call site in C `virtblk_probe` gives.
    // SAFETY: `config_work` is in place for the life of `vblk` and not queued
    // yet; the name and the class key are static.
    unsafe {
        bindings::init_work_with_key(
            vblk.config_work.get(),
            Some(virtblk_config_changed_work),
            false,
            c"(work_completion)&vblk->config_work".as_char_ptr(),
            static_lock_class!().as_ptr(),
        )
    };
    vdev.set_drvdata(vblk_ptr.cast());
    init_vq(vblk)?;

    let limits = virtblk_read_limits(vdev);
    let prealloc = crate::module_parameters::sg_prealloc.value() != 0;
    vblk.first_chunk = sg_plan::first_chunk_entries(prealloc, limits.max_segments);
    let depth = sg_plan::queue_depth(
        crate::module_parameters::queue_depth.value(),
        vblk.vqs[0].vq.num_free(),
        vdev.has_feature(VIRTIO_RING_F_INDIRECT_DESC),
    );
    let nr_hw = vblk.vqs.len() as u32;
    let pdu = VirtblkReq::pdu_size(vblk.first_chunk);

    let set = vblk.tag_set.get();
    // SAFETY: `set` is our zeroed tag set, not yet allocated.
    let err = unsafe {
        (*set).ops = &crate::VIRTIO_MQ_OPS;
        (*set).queue_depth = depth;
        (*set).numa_node = bindings::NUMA_NO_NODE;
        // (No `BLK_MQ_F_SHOULD_MERGE`: 7.3 merges by default.)
        (*set).flags = 0;
        (*set).cmd_size = pdu as u32;
        (*set).driver_data = vblk_ptr.cast();
        (*set).nr_hw_queues = nr_hw;
        (*set).nr_maps = 1;
        bindings::blk_mq_alloc_tag_set(set)
    };
    if let Err(e) = kernel::error::to_result(err) {
        vdev.del_vqs();
        return Err(e);
    }

    let s = &vblk.stats;
    s.pdu_bytes.store(pdu as u64, Ordering::Relaxed);
    s.inline_sg
        .store(vblk.first_chunk as u64, Ordering::Relaxed);
    s.queue_depth.store(depth as u64, Ordering::Relaxed);
    s.nr_hw_queues.store(nr_hw as u64, Ordering::Relaxed);
    s.tagset_sg_bytes.store(
        sg_plan::tagset_sg_bytes(nr_hw, depth, crate::stats::sg_size(), vblk.first_chunk),
        Ordering::Relaxed,
    );

    // SAFETY: all-zero limits are "use the block layer defaults".
    let mut lim: bindings::queue_limits = unsafe { core::mem::zeroed() };
    lim.features = bindings::BLK_FEAT_ROTATIONAL;
    apply_limits(&limits, &mut lim);
    if virtblk_get_cache_mode(vdev) != 0 {
        lim.features |= bindings::BLK_FEAT_WRITE_CACHE;
    }
    // `blk_mq_alloc_disk()`: the queue's lockdep class is static, as the
    // C macro's.
    // SAFETY: the tag set is allocated; `vblk` outlives the disk's queue;
    // the class key is static.
    let disk = from_err_ptr(unsafe {
        bindings::__blk_mq_alloc_disk(
            set,
            &mut lim,
            vblk_ptr.cast(),
            static_lock_class!().as_ptr(),
        )
    });
    let disk = match disk {
        Ok(d) => d,
        Err(e) => {
            // SAFETY: allocated above, unused.
            unsafe { bindings::blk_mq_free_tag_set(set) };
            vdev.del_vqs();
            return Err(e);
        }
    };
    vblk.disk = disk;
    // SAFETY: the disk is fresh and ours.
    unsafe {
        let name = &mut *(&raw mut (*disk).disk_name as *mut [u8; 32]);
        sg_plan::name_format(DISK_PREFIX, vblk.index, name);
        (*disk).major = MAJOR.load(Ordering::Relaxed) as i32;
        (*disk).first_minor = (vblk.index << PART_BITS) as i32;
        (*disk).minors = 1 << PART_BITS;
        (*disk).private_data = vblk_ptr.cast();
        (*disk).fops = crate::VIRTBLK_FOPS.as_ptr();
    }
    if vdev.has_feature(bindings::VIRTIO_BLK_F_RO) {
        // SAFETY: the disk exists.
        unsafe { bindings::set_disk_ro(disk, true) };
    }
    virtblk_update_capacity(vblk, false);
    vdev.device_ready();

    let mut serial = [0u8; sg_plan::VIRTIO_BLK_ID_BYTES + 1];
    if virtblk_get_id(vblk, &mut serial).is_ok() {
        vblk.serial = serial;
    }

    // SAFETY: the disk is fully set up; the groups are static.
    let err = unsafe { bindings::device_add_disk(vdev.device(), disk, sysfs::GROUPS.as_groups()) };
    if let Err(e) = kernel::error::to_result(err) {
        // Stop the device before its queues and requests go away.
        vdev.reset();
        // SAFETY: never added: `put_disk` does not call `free_disk`.
        unsafe { bindings::put_disk(disk) };
        // SAFETY: the disk that used it is gone.
        unsafe { bindings::blk_mq_free_tag_set(set) };
        vdev.del_vqs();
        return Err(e);
    }

    vblk.debugfs = DebugfsDir::create(
        // SAFETY: the name is NUL-terminated.
        unsafe { (*disk).disk_name.as_ptr() },
        Some(crate::debugfs_root()),
    );
    // SAFETY: `vblk` outlives its debugfs directory (removed in remove).
    unsafe { vblk.debugfs.add_stats(&vblk.stats) };
    // SAFETY: as above.
    unsafe {
        vblk.debugfs
            .trigger_file(c"break_device".as_char_ptr(), vblk_ptr.cast(), &BREAK_FOPS)
    };
    for (i, q) in vblk.vqs.iter().enumerate() {
        let mut name = [0u8; 24];
        let mut w = Writer(&mut name, 0);
        let _ = core::fmt::write(&mut w, format_args!("vq{}_requests", i));
        // SAFETY: as above; debugfs copies the name.
        unsafe { vblk.debugfs.u64_file(name.as_ptr().cast(), &q.submitted) };
    }
    Ok(())
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
    // SAFETY: `simple_open` put the `VirtioBlk` in `private_data`; the file
    // is removed (and its writers drained) before the state is freed.
    let vblk = unsafe { &*((*file).private_data as *const VirtioBlk) };
    pr_warn!("{}: breaking the device on request\n", disk_name(vblk.disk));
    // SAFETY: the device is bound to us.
    unsafe { bindings::virtio_break_device(vblk.vdev.as_ptr()) };
    count as isize
}

static BREAK_FOPS: crate::stats::TriggerFops = crate::stats::TriggerFops::new(virtblk_break_write);

/// `virtio_driver.remove` (C `virtblk_remove`): also the unbind and rmmod
/// path. `del_gendisk` drains in-flight requests (the device still answers)
/// and fails new ones, so nothing hangs.
///
/// # Safety
///
/// Called by the virtio core for a device we probed successfully.
pub(crate) unsafe extern "C" fn virtblk_remove(vdev: *mut bindings::virtio_device) {
    // SAFETY: per the function's contract.
    let vdev = unsafe { VirtioDevice::from_raw(vdev) };
    let vblk = vdev.drvdata() as *mut VirtioBlk;
    // SAFETY: set by a successful probe; freed only by `free_disk` below.
    unsafe {
        // Make sure no work handler is accessing the device.
        bindings::flush_work((*vblk).config_work.get());
        (*vblk).debugfs = DebugfsDir::none();
        let disk = (*vblk).disk;
        // Surprise removal: the device is gone and will never return the
        // requests in flight, so `del_gendisk` would wait forever. End them.
        if (*vblk).vqs.iter().any(|q| q.vq.is_broken()) {
            pr_warn!("device broken: ending the requests in flight\n");
            crate::blk::cancel_all_requests(
                (*disk).queue,
                (*vblk).tag_set.get(),
                || vdev.synchronize_cbs(),
                request::virtblk_cancel_request,
            );
        }
        bindings::del_gendisk(disk);
        bindings::blk_mq_free_tag_set((*vblk).tag_set.get());
        // Stop all the virtqueues.
        vdev.reset();
        vdev.del_vqs();
        vdev.set_drvdata(ptr::null_mut());
        bindings::put_disk(disk);
    }
}

/// `block_device_operations.free_disk`: the last reference is gone.
///
/// # Safety
///
/// Called once by the block layer for a disk added by probe.
pub(crate) unsafe extern "C" fn virtblk_free_disk(disk: *mut bindings::gendisk) {
    // SAFETY: `private_data` is the `KBox` published by probe.
    let vblk = unsafe { KBox::from_raw((*disk).private_data as *mut VirtioBlk) };
    free_index(vblk.index);
    drop(vblk);
}
