// SPDX-License-Identifier: GPL-2.0

//! The I/O path: `queue_rq` → `virtblk_setup_cmd` → `virtblk_map_data` →
//! `virtblk_add_req` → kick; the virtqueue interrupt → `virtblk_done` →
//! `blk_mq_complete_request` → `virtblk_request_done` → `virtblk_unmap_data`
//! → `blk_mq_end_request`.
//!
//! Every request carries a [`VirtblkReq`] (the blk-mq PDU, initialised by
//! `init_request`, dropped by `exit_request`): the out header, the status
//! byte the device writes, the discard ranges and the scatterlist table with
//! [`sg_plan::INLINE_SG_CNT`] inline entries; with `sg_prealloc=1` the table's
//! first chunk is instead `seg_max` entries allocated with the request.
//! Requests with more segments than the first chunk chain a table from the SG
//! pool, freed at completion.
//!
//! A request in the ring is the token of its virtqueue buffer: the device
//! hands it back with the buffer, and whoever holds the [`Request`] owns it.

use crate::{
    blk::{self, BlkStatus, Request},
    device::{VirtBlkVq, VirtioBlk},
    sg_plan,
};
use core::{ffi::c_void, mem::size_of, pin::Pin, ptr};
use kernel::{
    bindings,
    prelude::*,
    scatterlist::{ChainedSgTable, SingleSg},
    types::Opaque,
    virtio::{Queue, QueueGuard},
};

/// Inline scatterlist entries per request (C `VIRTIO_BLK_INLINE_SG_CNT`).
const INLINE: usize = sg_plan::INLINE_SG_CNT as usize;

/// The per-request driver data (C `struct virtblk_req`).
#[pin_data]
pub(crate) struct VirtblkReq {
    /// Header the device reads.
    out_hdr: bindings::virtio_blk_outhdr,
    /// Status byte the device writes (`VIRTIO_BLK_S_*`).
    status: Opaque<u8>,
    /// The data (or range table) goes to the device (`type & VIRTIO_BLK_T_OUT`).
    data_out: bool,
    /// Discard / write-zeroes ranges (the request's special payload).
    ranges: KVec<sg_plan::Range>,
    /// Data scatterlist.
    #[pin]
    sg: ChainedSgTable<INLINE>,
}

impl VirtblkReq {
    /// The driver data of a request of `vblk`: `first_chunk` entries in the
    /// table's first chunk (more than the inline ones: preallocated).
    fn new(first_chunk: u32) -> impl PinInit<Self, Error> {
        let prealloc = if first_chunk as usize > INLINE {
            first_chunk
        } else {
            0
        };
        try_pin_init!(Self {
            out_hdr: bindings::virtio_blk_outhdr {
                type_: 0,
                ioprio: 0,
                sector: 0,
            },
            status: Opaque::new(sg_plan::VIRTIO_BLK_S_IOERR),
            data_out: false,
            ranges: KVec::new(),
            sg <- ChainedSgTable::new(prealloc),
        }? Error)
    }

    /// Per-request memory for `first_chunk` entries: the PDU and, with
    /// `sg_prealloc=1`, the entries allocated with it.
    pub(crate) fn pdu_bytes(first_chunk: u32) -> usize {
        let prealloc = if first_chunk as usize > INLINE {
            first_chunk as usize * crate::stats::sg_size()
        } else {
            0
        };
        size_of::<VirtblkReq>() + prealloc
    }

    /// The PDU of `req`.
    ///
    /// # Safety
    ///
    /// `req` is owned by the caller, who makes no other reference to its PDU
    /// while the returned one lives (the PDU lives as long as the request,
    /// initialised by `init_request`). The lifetime is not tied to `req`, so
    /// that `req` itself can be handed to the virtqueue as the buffer's token
    /// while the scatterlists describing its PDU are passed along.
    unsafe fn of<'a>(req: &Request) -> Pin<&'a mut VirtblkReq> {
        // SAFETY: per the caller; the PDU never moves (it is part of the
        // request's allocation).
        unsafe { Pin::new_unchecked(&mut *req.pdu::<VirtblkReq>()) }
    }

    /// Projects the pinned data to its fields.
    fn proj(self: Pin<&mut Self>) -> VirtblkReqProj<'_> {
        // SAFETY: only `sg` is structurally pinned, and it is handed out
        // pinned; nothing is moved out.
        let this = unsafe { self.get_unchecked_mut() };
        VirtblkReqProj {
            out_hdr: &mut this.out_hdr,
            status: &this.status,
            data_out: &mut this.data_out,
            ranges: &mut this.ranges,
            // SAFETY: `sg` is structurally pinned.
            sg: unsafe { Pin::new_unchecked(&mut this.sg) },
        }
    }
}

/// The fields of a pinned [`VirtblkReq`].
struct VirtblkReqProj<'a> {
    out_hdr: &'a mut bindings::virtio_blk_outhdr,
    status: &'a Opaque<u8>,
    data_out: &'a mut bool,
    ranges: &'a mut KVec<sg_plan::Range>,
    sg: Pin<&'a mut ChainedSgTable<INLINE>>,
}

impl VirtblkReqProj<'_> {
    /// The status byte the device wrote.
    fn status(&self) -> u8 {
        // SAFETY: the device finished with the buffer (or never got it): a
        // plain read of the byte.
        unsafe { ptr::read_volatile(self.status.get()) }
    }

    fn set_status(&self, v: u8) {
        // SAFETY: the device does not own the buffer now (before it is added
        // or after it came back): a plain write of the byte.
        unsafe { ptr::write_volatile(self.status.get(), v) };
    }
}

/// Fills the header of the driver's own GET_ID request.
///
/// # Safety
///
/// As for [`VirtblkReq::of`].
pub(crate) unsafe fn setup_get_id(vblk: &VirtioBlk, req: &Request) {
    // SAFETY: per the caller.
    let v = unsafe { VirtblkReq::of(req) }.proj();
    v.out_hdr.type_ = vblk.vdev().cpu_to_virtio32(sg_plan::VIRTIO_BLK_T_GET_ID);
    v.out_hdr.ioprio = 0;
    v.out_hdr.sector = 0;
    *v.data_out = false;
}

/// The status byte of a request the driver executed itself (GET_ID).
///
/// # Safety
///
/// As for [`VirtblkReq::of`]; the request completed.
pub(crate) unsafe fn status_of(req: &Request) -> u8 {
    // SAFETY: per the caller.
    unsafe { VirtblkReq::of(req) }.proj().status()
}

/// C `virtblk_setup_cmd`: fills the out header (and the range payload of
/// discard / write zeroes).
fn virtblk_setup_cmd(vblk: &VirtioBlk, req: &Request, v: &mut VirtblkReqProj<'_>) -> BlkStatus {
    let vdev = vblk.vdev();
    let cmd = match sg_plan::setup_cmd(req.op(), req.pos()) {
        Ok(Some(cmd)) => cmd,
        // The submitter (GET_ID) prepared the header and `data_out`.
        Ok(None) => return blk::BLK_STS_OK,
        Err(sg_plan::CmdError::NotSupported) => return blk::errno_status(EOPNOTSUPP),
    };
    v.out_hdr.type_ = vdev.cpu_to_virtio32(cmd.type_);
    v.out_hdr.ioprio = 0;
    v.out_hdr.sector = vdev.cpu_to_virtio64(cmd.sector);
    *v.data_out = sg_plan::data_out(cmd.type_);
    if cmd.ranges && virtblk_setup_discard_write_zeroes(req, cmd.unmap, v).is_err() {
        return blk::BLK_STS_RESOURCE;
    }
    blk::BLK_STS_OK
}

/// C `virtblk_setup_discard_write_zeroes_erase`: one range per bio (or one
/// for the whole request when the device takes a single range).
fn virtblk_setup_discard_write_zeroes(
    req: &Request,
    unmap: bool,
    v: &mut VirtblkReqProj<'_>,
) -> Result {
    let segments = req.nr_discard_segments().max(1) as usize;
    v.ranges.clear();
    v.ranges.reserve(segments, GFP_ATOMIC)?;
    if req.max_discard_segments() <= 1 {
        let r = sg_plan::Range::new(
            req.pos(),
            sg_plan::bytes_to_sectors(req.bytes() as u64) as u32,
            unmap,
        );
        v.ranges.push_within_capacity(r).map_err(|_| ENOMEM)?;
    } else {
        let ranges = &mut *v.ranges;
        req.for_each_bio(|sector, bytes| {
            if ranges.len() < segments {
                let r = sg_plan::Range::new(
                    sector,
                    sg_plan::bytes_to_sectors(bytes as u64) as u32,
                    unmap,
                );
                // (Capacity reserved above.)
                let _ = ranges.push_within_capacity(r);
            }
        });
    }
    let len = u32::try_from(v.ranges.len() * size_of::<sg_plan::Range>()).map_err(|_| EINVAL)?;
    // SAFETY: the ranges are kmalloc'ed, live in the request's data and stay
    // unchanged until `clear_special_payload` (at completion or failure).
    unsafe { req.set_special_payload(v.ranges.as_mut_ptr().cast(), len) };
    Ok(())
}

/// C `virtblk_map_data`: builds the data scatterlist.
fn virtblk_map_data(vblk: &VirtioBlk, req: &Request, v: &mut VirtblkReqProj<'_>) -> Result {
    let nseg = req.nr_phys_segments();
    if nseg == 0 {
        return Ok(());
    }
    v.sg.as_mut().alloc(nseg).map_err(|_| ENOMEM)?;
    vblk.stats.mapped(nseg, vblk.first_chunk);
    let sgl = v.sg.as_mut().sgl_raw().ok_or(ENOMEM)?;
    // SAFETY: the table was just set up with room for every physical segment.
    let n = unsafe { req.map_sg(sgl) };
    v.sg.as_mut().set_nents(n as u32)
}

/// C `virtblk_unmap_data`: frees a chained table, if any.
fn virtblk_unmap_data(vblk: &VirtioBlk, v: &mut VirtblkReqProj<'_>) {
    if !v.sg.is_allocated() {
        return;
    }
    vblk.stats.unmapped(v.sg.orig_nents(), vblk.first_chunk);
    v.sg.as_mut().free();
}

/// Undoes [`virtblk_prep_rq`] for a request that does not reach the device
/// or came back from it.
fn virtblk_cleanup(vblk: &VirtioBlk, req: &Request, v: &mut VirtblkReqProj<'_>) {
    virtblk_unmap_data(vblk, v);
    req.clear_special_payload();
}

/// [`virtblk_cleanup`] for a request the caller owns again.
fn cleanup_owned(vblk: &VirtioBlk, req: &Request) {
    // SAFETY: the caller owns `req` (the device gave it back or never had
    // it) and holds no other reference to its PDU.
    let mut v = unsafe { VirtblkReq::of(req) }.proj();
    virtblk_cleanup(vblk, req, &mut v);
}

/// C `virtblk_add_req`: out header, data, status byte, with `req` as the
/// buffer's token. On failure the request comes back.
fn virtblk_add_req(
    g: &mut QueueGuard<'_, VirtBlkVq>,
    req: Request,
) -> Result<(), (Error, Request)> {
    // SAFETY: we own `req`; this is the only reference to its PDU until the
    // request goes to the device below.
    let v = unsafe { VirtblkReq::of(&req) }.proj();
    // SAFETY: the header lives in the PDU and has no padding
    // (`{ u32, u32, u64 }`): its bytes are initialised.
    let hdr_bytes = unsafe {
        core::slice::from_raw_parts(
            ptr::from_ref(&*v.out_hdr).cast::<u8>(),
            size_of::<bindings::virtio_blk_outhdr>(),
        )
    };
    // SAFETY: the byte lives in the PDU; nothing writes it during the call.
    let status_bytes = unsafe { core::slice::from_raw_parts(v.status.get().cast_const(), 1) };
    let (Ok(hdr), Ok(status)) = (SingleSg::new(hdr_bytes), SingleSg::new(status_bytes)) else {
        return Err((EINVAL, req));
    };
    let (sgs, n, out) = match (v.sg.sgl(), *v.data_out) {
        (Some(d), true) => ([hdr.entry(), d, status.entry()], 3, 2),
        (Some(d), false) => ([hdr.entry(), d, status.entry()], 3, 1),
        (None, _) => ([hdr.entry(), status.entry(), status.entry()], 2, 1),
    };
    // The header, status byte and table live in the request's PDU, the data
    // in its bios (or its special payload, in the PDU too), all in the
    // linear map. The request is only ended after `get_buf` returned it (or,
    // for a broken device, once the device will never use it again).
    // SAFETY: so the memory the lists describe stays valid until `req` is back.
    unsafe { g.add_sgs(&sgs[..n], out, req) }
}

/// C `virtblk_prep_rq`: header, data mapping, start.
fn virtblk_prep_rq(vblk: &VirtioBlk, req: &Request) -> Result<(), BlkStatus> {
    // SAFETY: we own `req` (blk-mq handed it to us) and no other reference to
    // its PDU exists.
    let mut v = unsafe { VirtblkReq::of(req) }.proj();
    // The device overwrites it; a stale OK must never survive a lost write.
    v.set_status(sg_plan::VIRTIO_BLK_S_IOERR);
    let status = virtblk_setup_cmd(vblk, req, &mut v);
    if status != blk::BLK_STS_OK {
        return Err(status);
    }
    match virtblk_map_data(vblk, req, &mut v) {
        Ok(()) => {
            req.start();
            Ok(())
        }
        Err(_) => {
            virtblk_cleanup(vblk, req, &mut v);
            Err(blk::BLK_STS_RESOURCE)
        }
    }
}

/// The `VirtioBlk` and virtqueue index of a hardware context.
///
/// # Safety
///
/// `hctx` is a live hardware context of one of our disks.
unsafe fn hctx_vblk<'a>(hctx: *mut bindings::blk_mq_hw_ctx) -> (&'a VirtioBlk, usize) {
    // SAFETY: `queuedata` is the `VirtioBlk` (set at disk allocation), alive
    // while the queue runs (the disk holds a reference to it).
    unsafe {
        (
            &*((*(*hctx).queue).queuedata as *const VirtioBlk),
            (*hctx).queue_num as usize,
        )
    }
}

/// `blk_mq_ops.queue_rq`.
///
/// # Safety
///
/// Called by blk-mq with a live hardware context of our tag set and a
/// request that the driver now owns.
pub(crate) unsafe extern "C" fn virtio_queue_rq(
    hctx: *mut bindings::blk_mq_hw_ctx,
    bd: *const bindings::blk_mq_queue_data,
) -> BlkStatus {
    // SAFETY: per the function's contract.
    let (vblk, qid) = unsafe { hctx_vblk(hctx) };
    // SAFETY: `bd` is valid for this call; the request is ours.
    let (req, last) = unsafe { (Request::from_raw((*bd).rq), (*bd).last) };
    if let Err(status) = virtblk_prep_rq(vblk, &req) {
        return status;
    }
    let q = &vblk.vqs[qid];
    let mut g = q.lock();
    if let Err((e, req)) = virtblk_add_req(&mut g, req) {
        g.kick();
        // Don't stop the queue on ENOMEM: that may be a global outage.
        if e == ENOSPC {
            // SAFETY: `hctx` is the live context of this call.
            unsafe { blk::stop_hw_queue(hctx) };
            vblk.stats
                .ring_full
                .fetch_add(1, core::sync::atomic::Ordering::Relaxed);
        }
        drop(g);
        cleanup_owned(vblk, &req);
        // (blk-mq takes the request back with the status.)
        return if e == ENOSPC {
            blk::BLK_STS_DEV_RESOURCE
        } else if e == ENOMEM {
            blk::BLK_STS_RESOURCE
        } else {
            blk::errno_status(EIO)
        };
    }
    q.data().count_submitted();
    let notify = last && g.kick_prepare();
    drop(g);
    if notify {
        q.notify();
    }
    blk::BLK_STS_OK
}

/// C `virtblk_add_req_batch`: adds a prepared list to one virtqueue under
/// one lock hold and kicks once; what does not fit is requeued.
fn virtblk_add_req_batch(vblk: &VirtioBlk, qid: usize, list: &mut blk::RqList) {
    let q = &vblk.vqs[qid];
    let mut g = q.lock();
    while let Some(req) = list.pop() {
        match virtblk_add_req(&mut g, req) {
            Err((e, req)) => {
                if e == ENOSPC {
                    vblk.stats
                        .ring_full
                        .fetch_add(1, core::sync::atomic::Ordering::Relaxed);
                }
                cleanup_owned(vblk, &req);
                req.requeue();
            }
            Ok(()) => q.data().count_submitted(),
        }
    }
    let kick = g.kick_prepare();
    drop(g);
    if kick {
        q.notify();
    }
}

/// `blk_mq_ops.queue_rqs` (C `virtio_queue_rqs`): a plugged batch, added to
/// each virtqueue in one go. Requests that cannot be prepared are left in
/// `rqlist` for blk-mq to issue one by one.
///
/// # Safety
///
/// Called by blk-mq with a list of requests of our queues, now owned by us.
pub(crate) unsafe extern "C" fn virtio_queue_rqs(rqlist: *mut bindings::rq_list) {
    // SAFETY: per the function's contract.
    let mut list = unsafe { blk::RqList::take(rqlist) };
    let mut submit = blk::RqList::new();
    let mut requeue = blk::RqList::new();
    let mut cur: Option<(&VirtioBlk, usize)> = None;
    while let Some(req) = list.pop() {
        // SAFETY: the request's context is live (function's contract).
        let (vblk, qid) = unsafe { hctx_vblk(req.hctx()) };
        if let Some((v, q)) = cur {
            if !ptr::eq(v, vblk) || q != qid {
                virtblk_add_req_batch(v, q, &mut submit);
            }
        }
        cur = Some((vblk, qid));
        if virtblk_prep_rq(vblk, &req).is_ok() {
            submit.add_tail(req);
        } else {
            requeue.add_tail(req);
        }
    }
    if let Some((v, q)) = cur {
        virtblk_add_req_batch(v, q, &mut submit);
    }
    // SAFETY: per the function's contract.
    unsafe { requeue.give_back(rqlist) };
}

/// `blk_mq_ops.commit_rqs`: kick what `queue_rq` left unkicked.
///
/// # Safety
///
/// Called by blk-mq with a live hardware context of our tag set.
pub(crate) unsafe extern "C" fn virtio_commit_rqs(hctx: *mut bindings::blk_mq_hw_ctx) {
    // SAFETY: per the function's contract.
    let (vblk, qid) = unsafe { hctx_vblk(hctx) };
    let q = &vblk.vqs[qid];
    let kick = q.lock().kick_prepare();
    if kick {
        q.notify();
    }
}

/// `blk_mq_ops.complete` (C `virtblk_request_done`).
///
/// # Safety
///
/// Called by blk-mq for a request completed with `blk_mq_complete_request`.
pub(crate) unsafe extern "C" fn virtblk_request_done(rq: *mut bindings::request) {
    // SAFETY: the request is ours until we end it.
    let req = unsafe { Request::from_raw(rq) };
    // SAFETY: `queuedata` is the `VirtioBlk`, alive while the disk has
    // requests.
    let vblk = unsafe { &*((*req.queue()).queuedata as *const VirtioBlk) };
    // SAFETY: we own the request; the device is done with its PDU.
    let mut v = unsafe { VirtblkReq::of(&req) }.proj();
    let status = v.status();
    virtblk_cleanup(vblk, &req, &mut v);
    req.end(blk::status_to_blk(sg_plan::result(status)));
}

/// `busy_tag_iter_fn` for a broken device (upstream `virtblk_cancel_request`):
/// completes a request the device will never answer, with `IOERR`.
///
/// # Safety
///
/// Called by `blk_mq_tagset_busy_iter` with a request of our tag set, of a
/// device that is broken: its ring never returns the request (its token is
/// dropped, without ending it, when the virtqueues are deleted).
pub(crate) unsafe extern "C" fn virtblk_cancel_request(
    rq: *mut bindings::request,
    _data: *mut c_void,
) -> bool {
    // SAFETY: per the function's contract, the device gave the request up.
    let req = unsafe { Request::from_raw(rq) };
    if req.in_flight() {
        // SAFETY: we own the request now; nothing else references its PDU.
        unsafe { VirtblkReq::of(&req) }
            .proj()
            .set_status(sg_plan::VIRTIO_BLK_S_IOERR);
        req.complete();
    }
    true
}

/// The virtqueue callback (C `virtblk_done`), in interrupt context.
pub(crate) fn virtblk_done(q: &Queue<VirtBlkVq>) {
    let mut req_done = false;
    let mut g = q.lock();
    loop {
        g.disable_cb();
        while let Some((req, _len)) = g.get_buf() {
            req.complete();
            req_done = true;
        }
        if g.enable_cb() {
            break;
        }
    }
    drop(g);
    // In case the queue was stopped waiting for free descriptors.
    if req_done {
        q.data().start_stopped_hw_queues();
    }
}

/// `blk_mq_ops.init_request`: the request's [`VirtblkReq`], in place.
///
/// # Safety
///
/// Called by blk-mq for a request of our tag set (whose `driver_data` is the
/// `VirtioBlk` and whose `cmd_size` is that of [`VirtblkReq`]) before any
/// use; `exit_request` is called for it only if this succeeds.
pub(crate) unsafe extern "C" fn virtblk_init_request(
    set: *mut bindings::blk_mq_tag_set,
    rq: *mut bindings::request,
    _hctx_idx: core::ffi::c_uint,
    _numa_node: core::ffi::c_int,
) -> core::ffi::c_int {
    // SAFETY: `driver_data` is the `VirtioBlk`, which outlives its tag set.
    let vblk = unsafe { &*((*set).driver_data as *const VirtioBlk) };
    // SAFETY: `rq` is live; its PDU has room for a `VirtblkReq` (`cmd_size`),
    // aligned as `struct request` is, which is enough (checked at build).
    let pdu = unsafe { bindings::blk_mq_rq_to_pdu(rq) }.cast::<VirtblkReq>();
    // SAFETY: `pdu` is valid for writes and never moves (part of the
    // request's allocation) until `exit_request` drops it.
    match unsafe { VirtblkReq::new(vblk.first_chunk).__init(pdu) } {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// `blk_mq_ops.exit_request`: drops the request's [`VirtblkReq`].
///
/// # Safety
///
/// Called by blk-mq for a request `init_request` set up, which is not used
/// any more.
pub(crate) unsafe extern "C" fn virtblk_exit_request(
    _set: *mut bindings::blk_mq_tag_set,
    rq: *mut bindings::request,
    _hctx_idx: core::ffi::c_uint,
) {
    // SAFETY: the PDU holds the `VirtblkReq` of `init_request`, unused now.
    unsafe { ptr::drop_in_place(bindings::blk_mq_rq_to_pdu(rq).cast::<VirtblkReq>()) };
}

/// `blk_mq_ops.map_queues` (C `virtblk_map_queues`): the default queues
/// follow the virtqueue interrupt affinity, the poll queues (no interrupts)
/// are spread over the CPUs by the block layer.
///
/// # Safety
///
/// Called by blk-mq with our tag set, whose `driver_data` is the `VirtioBlk`.
pub(crate) unsafe extern "C" fn virtblk_map_queues(set: *mut bindings::blk_mq_tag_set) {
    // SAFETY: `driver_data` is the `VirtioBlk`, which outlives its tag set.
    let vblk = unsafe { &*((*set).driver_data as *const VirtioBlk) };
    // SAFETY: `set` is valid.
    let nr_maps = unsafe { (*set).nr_maps } as usize;
    let mut qoff = 0;
    for (i, &nr_queues) in vblk.io_queues.iter().enumerate().take(nr_maps) {
        // SAFETY: blk-mq lets this callback write the maps of `set`; `i` is
        // below `nr_maps`, at most `HCTX_MAX_TYPES`, the length of `map`.
        let map = unsafe { &raw mut (*set).map[i] };
        // SAFETY: as above.
        unsafe {
            (*map).nr_queues = nr_queues;
            (*map).queue_offset = qoff;
        }
        qoff += nr_queues;
        if nr_queues == 0 {
            continue;
        }
        if i == bindings::hctx_type_HCTX_TYPE_POLL as usize {
            // SAFETY: `map` is valid; its `mq_map` covers every possible CPU.
            unsafe { bindings::blk_mq_map_queues(map) };
        } else {
            // (7.3's `blk_mq_map_hw_queues` replaces `blk_mq_virtio_map_queues`;
            // it asks the virtio bus for the vectors' affinity.)
            // SAFETY: `map` is valid; the device is bound while its tag set
            // exists.
            unsafe { bindings::blk_mq_map_hw_queues(map, vblk.parent_device(), 0) };
        }
    }
}

/// `blk_mq_ops.poll` (C `virtblk_poll`): completes what the device used on a
/// poll queue; returns how many.
///
/// # Safety
///
/// Called by blk-mq with a live hardware context of our tag set.
pub(crate) unsafe extern "C" fn virtblk_poll(
    hctx: *mut bindings::blk_mq_hw_ctx,
    _iob: *mut bindings::io_comp_batch,
) -> core::ffi::c_int {
    // SAFETY: per the function's contract.
    let (vblk, qid) = unsafe { hctx_vblk(hctx) };
    let q = &vblk.vqs[qid];
    let mut found = 0;
    let mut g = q.lock();
    while let Some((req, _len)) = g.get_buf() {
        // (A polled request completes right here, in the poller's context.)
        req.complete();
        found += 1;
    }
    drop(g);
    if found > 0 {
        vblk.stats
            .polled
            .fetch_add(found as u64, core::sync::atomic::Ordering::Relaxed);
        q.data().start_stopped_hw_queues();
    }
    found
}
