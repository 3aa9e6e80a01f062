// SPDX-License-Identifier: GPL-2.0

//! The I/O path: `queue_rq` → `virtblk_setup_cmd` → `virtblk_map_data` →
//! `virtblk_add_req` → kick; the virtqueue interrupt → `virtblk_done` →
//! `blk_mq_complete_request` → `virtblk_request_done` → `virtblk_unmap_data`
//! → `blk_mq_end_request`.
//!
//! Every request carries a [`VirtblkReq`] (the blk-mq PDU): the out header,
//! the status byte the device writes, the scatterlist table and, right
//! behind it, `first_chunk` inline scatterlist entries — two in the runtime
//! design, `seg_max` with `sg_prealloc=1`. Requests with more segments than
//! that chain a table from the SG pool, freed at completion.

use crate::{
    blk::{self, BlkStatus, Request},
    device::VirtioBlk,
    sg_plan,
    virtio::Virtqueue,
};
use core::{ffi::c_void, mem::size_of, ptr};
use kernel::{bindings, prelude::*};

/// The per-request driver data (C `struct virtblk_req`).
///
/// `first_chunk` scatterlist entries follow `sg` in memory (the tag set's
/// `cmd_size` is [`VirtblkReq::pdu_size`]).
#[repr(C)]
pub(crate) struct VirtblkReq {
    /// Header the device reads.
    pub(crate) out_hdr: bindings::virtio_blk_outhdr,
    /// Status byte the device writes (`VIRTIO_BLK_S_*`).
    pub(crate) status: u8,
    /// The data (or range table) goes to the device (`type & VIRTIO_BLK_T_OUT`).
    pub(crate) data_out: bool,
    /// Data scatterlist: `sgl` points at `sg` or at a chained pool table.
    pub(crate) sg_table: bindings::sg_table,
    /// The inline entries.
    pub(crate) sg: [bindings::scatterlist; 0],
}

impl VirtblkReq {
    /// The PDU size for `first_chunk` inline entries.
    pub(crate) const fn pdu_size(first_chunk: u32) -> usize {
        sg_plan::pdu_size(
            size_of::<VirtblkReq>(),
            size_of::<bindings::scatterlist>(),
            first_chunk,
        )
    }
}

/// C `virtblk_setup_cmd`: fills the out header (and the range payload of
/// discard / write zeroes).
fn virtblk_setup_cmd(vblk: &VirtioBlk, req: Request, vbr: *mut VirtblkReq) -> BlkStatus {
    let vdev = vblk.vdev;
    let cmd = match sg_plan::setup_cmd(req.op(), req.pos()) {
        Ok(Some(cmd)) => cmd,
        // The submitter (GET_ID) prepared the header and `data_out`.
        Ok(None) => return blk::BLK_STS_OK,
        Err(sg_plan::CmdError::NotSupported) => return blk::BLK_STS_NOTSUPP,
    };
    // SAFETY: `vbr` is this request's PDU, owned by us until completion.
    unsafe {
        (*vbr).out_hdr.type_ = vdev.cpu_to_virtio32(cmd.type_);
        (*vbr).out_hdr.ioprio = 0;
        (*vbr).out_hdr.sector = vdev.cpu_to_virtio64(cmd.sector);
        (*vbr).data_out = sg_plan::data_out(cmd.type_);
    }
    if cmd.ranges && virtblk_setup_discard_write_zeroes(req, cmd.unmap).is_err() {
        return blk::BLK_STS_RESOURCE;
    }
    blk::BLK_STS_OK
}

/// C `virtblk_setup_discard_write_zeroes_erase`: one range per bio (or one
/// for the whole request when the device takes a single range).
fn virtblk_setup_discard_write_zeroes(req: Request, unmap: bool) -> Result {
    let segments = req.nr_discard_segments().max(1);
    let len = segments as usize * size_of::<sg_plan::Range>();
    let range = blk::kmalloc_atomic(len).cast::<sg_plan::Range>();
    if range.is_null() {
        return Err(ENOMEM);
    }
    if req.max_discard_segments() <= 1 {
        let r = sg_plan::Range::new(
            req.pos(),
            sg_plan::bytes_to_sectors(req.bytes() as u64) as u32,
            unmap,
        );
        // SAFETY: `range` holds at least one entry.
        unsafe { range.write(r) };
    } else {
        let mut n = 0u32;
        req.for_each_bio(|sector, bytes| {
            if n < segments {
                let r = sg_plan::Range::new(
                    sector,
                    sg_plan::bytes_to_sectors(bytes as u64) as u32,
                    unmap,
                );
                // SAFETY: `n < segments`, the allocated count.
                unsafe { range.add(n as usize).write(r) };
                n += 1;
            }
        });
    }
    // SAFETY: `range` is kmalloc'ed with `len` bytes.
    unsafe { req.set_special_payload(range.cast(), len as u32) };
    Ok(())
}

/// C `virtblk_map_data`: builds the data scatterlist; returns its length.
fn virtblk_map_data(vblk: &VirtioBlk, req: Request, vbr: *mut VirtblkReq) -> Result<u32> {
    let nseg = req.nr_phys_segments();
    if nseg == 0 {
        return Ok(0);
    }
    let first = vblk.first_chunk;
    // SAFETY: `vbr` is our PDU; `first` entries follow `sg` (cmd_size).
    let table = unsafe { &raw mut (*vbr).sg_table };
    // SAFETY: as above.
    let sgl = unsafe { (&raw mut (*vbr).sg).cast::<bindings::scatterlist>() };
    // `sg_alloc_table_chained` initialises the first chunk through `table->sgl`.
    // SAFETY: our PDU.
    unsafe { (*table).sgl = sgl };
    // SAFETY: `sgl` has `first` entries living as long as the request.
    unsafe { blk::sg_alloc_table_chained(table, nseg, sgl, first) }.map_err(|_| ENOMEM)?;
    vblk.stats.mapped(nseg, first);
    // SAFETY: the table now has room for `nseg` entries.
    let n = unsafe { req.map_sg((*table).sgl) };
    // SAFETY: our PDU.
    unsafe { (*table).nents = n as u32 };
    Ok(n as u32)
}

/// C `virtblk_unmap_data`: frees a chained table, if any.
fn virtblk_unmap_data(vblk: &VirtioBlk, req: Request, vbr: *mut VirtblkReq) {
    if req.nr_phys_segments() == 0 {
        return;
    }
    // SAFETY: our PDU; the table was set up by `virtblk_map_data`.
    let orig = unsafe { (*vbr).sg_table.orig_nents };
    vblk.stats.unmapped(orig, vblk.first_chunk);
    // SAFETY: allocated by `virtblk_map_data` with the same first chunk.
    unsafe { blk::sg_free_table_chained(&raw mut (*vbr).sg_table, vblk.first_chunk) };
}

/// C `virtblk_add_req`: out header, data, status byte.
///
/// # Safety
///
/// The lock of `vq` is held; `vbr` is the PDU of a started request.
unsafe fn virtblk_add_req(vq: Virtqueue, vbr: *mut VirtblkReq) -> Result {
    // SAFETY: our PDU, set up by `virtblk_prep_rq`.
    let (nents, write) = unsafe { ((*vbr).sg_table.nents, (*vbr).data_out) };
    // SAFETY: an all-zero scatterlist is valid input to `sg_init_one`.
    let mut out_hdr: bindings::scatterlist = unsafe { core::mem::zeroed() };
    // SAFETY: as above.
    let mut in_hdr: bindings::scatterlist = unsafe { core::mem::zeroed() };
    let mut sgs: [*mut bindings::scatterlist; 3] = [ptr::null_mut(); 3];
    let (mut num_out, mut num_in) = (0usize, 0usize);

    // SAFETY: the header lives in the PDU until completion.
    unsafe {
        blk::sg_init_one(
            &mut out_hdr,
            (&raw const (*vbr).out_hdr).cast(),
            size_of::<bindings::virtio_blk_outhdr>() as u32,
        )
    };
    sgs[num_out] = &mut out_hdr;
    num_out += 1;
    if nents > 0 {
        // SAFETY: our PDU.
        let sgl = unsafe { (*vbr).sg_table.sgl };
        if write {
            sgs[num_out] = sgl;
            num_out += 1;
        } else {
            sgs[num_out + num_in] = sgl;
            num_in += 1;
        }
    }
    // SAFETY: the status byte lives in the PDU until completion.
    unsafe { blk::sg_init_one(&mut in_hdr, (&raw const (*vbr).status).cast(), 1) };
    sgs[num_out + num_in] = &mut in_hdr;
    num_in += 1;

    // SAFETY: the lock is held (caller); all buffers stay valid until the
    // device returns `vbr` (the request is not ended before that).
    unsafe {
        vq.add_sgs(
            &mut sgs[..num_out + num_in],
            num_out as u32,
            num_in as u32,
            vbr.cast(),
        )
    }
}

/// C `virtblk_prep_rq`: header, data mapping, start.
fn virtblk_prep_rq(vblk: &VirtioBlk, req: Request, vbr: *mut VirtblkReq) -> Result<(), BlkStatus> {
    // The device overwrites it; a stale OK must never survive a lost write.
    // SAFETY: our PDU.
    unsafe { (*vbr).status = sg_plan::VIRTIO_BLK_S_IOERR };
    let status = virtblk_setup_cmd(vblk, req, vbr);
    if status != blk::BLK_STS_OK {
        return Err(status);
    }
    match virtblk_map_data(vblk, req, vbr) {
        Ok(n) => {
            // SAFETY: our PDU; `virtblk_add_req` reads the data length here.
            unsafe { (*vbr).sg_table.nents = n };
            req.start();
            Ok(())
        }
        Err(_) => {
            req.take_special_payload();
            Err(blk::BLK_STS_RESOURCE)
        }
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
    // SAFETY: `queuedata` is the `VirtioBlk` (set at disk allocation), alive
    // while the queue runs; `hctx` and `bd` are valid for this call.
    let (vblk, qid, req, last) = unsafe {
        (
            &*((*(*hctx).queue).queuedata as *const VirtioBlk),
            (*hctx).queue_num as usize,
            Request::from_raw((*bd).rq),
            (*bd).last,
        )
    };
    let vbr = req.pdu::<VirtblkReq>();
    if let Err(status) = virtblk_prep_rq(vblk, req, vbr) {
        return status;
    }
    let q = &vblk.vqs[qid];
    let guard = q.lock.lock();
    // SAFETY: the queue lock is held; `vbr` belongs to a started request.
    let err = unsafe { virtblk_add_req(q.vq, vbr) };
    if let Err(e) = err {
        q.vq.kick();
        // Don't stop the queue on ENOMEM: that may be a global outage.
        if e == ENOSPC {
            blk::stop_hw_queue(hctx);
            vblk.stats
                .ring_full
                .fetch_add(1, core::sync::atomic::Ordering::Relaxed);
        }
        drop(guard);
        virtblk_unmap_data(vblk, req, vbr);
        req.take_special_payload();
        return if e == ENOSPC {
            blk::BLK_STS_DEV_RESOURCE
        } else if e == ENOMEM {
            blk::BLK_STS_RESOURCE
        } else {
            blk::BLK_STS_IOERR
        };
    }
    q.count_submitted();
    let notify = last && q.vq.kick_prepare();
    drop(guard);
    if notify {
        q.vq.notify();
    }
    blk::BLK_STS_OK
}

/// C `virtblk_add_req_batch`: adds a prepared list to one virtqueue under
/// one lock hold and kicks once; what does not fit is requeued.
fn virtblk_add_req_batch(vblk: &VirtioBlk, qid: usize, list: &mut blk::RqList) {
    let q = &vblk.vqs[qid];
    let guard = q.lock.lock();
    while let Some(req) = list.pop() {
        let vbr = req.pdu::<VirtblkReq>();
        // SAFETY: the queue lock is held; `vbr` belongs to a started request.
        if let Err(e) = unsafe { virtblk_add_req(q.vq, vbr) } {
            if e == ENOSPC {
                vblk.stats
                    .ring_full
                    .fetch_add(1, core::sync::atomic::Ordering::Relaxed);
            }
            virtblk_unmap_data(vblk, req, vbr);
            req.take_special_payload();
            req.requeue();
        } else {
            q.count_submitted();
        }
    }
    let kick = q.vq.kick_prepare();
    drop(guard);
    if kick {
        q.vq.notify();
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
        let hctx = req.hctx();
        // SAFETY: as in `virtio_queue_rq`; the request's context is live.
        let (vblk, qid) = unsafe {
            (
                &*((*(*hctx).queue).queuedata as *const VirtioBlk),
                (*hctx).queue_num as usize,
            )
        };
        if let Some((v, q)) = cur {
            if !ptr::eq(v, vblk) || q != qid {
                virtblk_add_req_batch(v, q, &mut submit);
            }
        }
        cur = Some((vblk, qid));
        if virtblk_prep_rq(vblk, req, req.pdu::<VirtblkReq>()).is_ok() {
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
    // SAFETY: as in `virtio_queue_rq`.
    let (vblk, qid) = unsafe {
        (
            &*((*(*hctx).queue).queuedata as *const VirtioBlk),
            (*hctx).queue_num as usize,
        )
    };
    let q = &vblk.vqs[qid];
    let kick = {
        let _guard = q.lock.lock();
        q.vq.kick_prepare()
    };
    if kick {
        q.vq.notify();
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
    // SAFETY: as in `virtio_queue_rq`.
    let vblk = unsafe { &*((*req.queue()).queuedata as *const VirtioBlk) };
    let vbr = req.pdu::<VirtblkReq>();
    // SAFETY: the device finished with the buffer; read what it wrote.
    let status = unsafe { ptr::read_volatile(&raw const (*vbr).status) };
    virtblk_unmap_data(vblk, req, vbr);
    req.take_special_payload();
    req.end(blk::status_to_blk(sg_plan::result(status)));
}

/// `busy_tag_iter_fn` for a broken device (upstream `virtblk_cancel_request`):
/// completes a request the device will never answer, with `IOERR`.
///
/// # Safety
///
/// Called by `blk_mq_tagset_busy_iter` with a request of our tag set.
pub(crate) unsafe extern "C" fn virtblk_cancel_request(
    rq: *mut bindings::request,
    _data: *mut c_void,
) -> bool {
    // SAFETY: per the function's contract.
    let req = unsafe { Request::from_raw(rq) };
    let vbr = req.pdu::<VirtblkReq>();
    // SAFETY: our PDU; the device is broken and no longer writes it.
    unsafe { (*vbr).status = sg_plan::VIRTIO_BLK_S_IOERR };
    if req.in_flight() {
        req.complete();
    }
    true
}

/// The virtqueue callback (C `virtblk_done`), in interrupt context.
///
/// # Safety
///
/// Called by the virtio core for a live virtqueue of a device we drive.
pub(crate) unsafe extern "C" fn virtblk_done(vq: *mut bindings::virtqueue) {
    // SAFETY: per the function's contract.
    let vq = unsafe { Virtqueue::from_raw(vq) };
    // SAFETY: `priv` is our `VirtioBlk` from probe until after `del_vqs`.
    let vblk = unsafe { &*(vq.vdev().drvdata() as *const VirtioBlk) };
    let q = &vblk.vqs[vq.index()];
    let mut req_done = false;
    let _guard = q.lock.lock();
    loop {
        q.vq.disable_cb();
        while let Some(data) = q.vq.get_buf() {
            // SAFETY: the data of every buffer is the PDU of a request we own.
            let req = unsafe { Request::from_pdu(data.as_ptr().cast::<c_void>()) };
            req.complete();
            req_done = true;
        }
        if q.vq.enable_cb() {
            break;
        }
    }
    // In case the queue was stopped waiting for free descriptors.
    if req_done {
        blk::start_stopped_hw_queues(vblk.queue());
    }
}

/// `blk_mq_ops.map_queues`: follow the virtqueue interrupt affinity.
///
/// # Safety
///
/// Called by blk-mq with our tag set, whose `driver_data` is the `VirtioBlk`.
pub(crate) unsafe extern "C" fn virtblk_map_queues(set: *mut bindings::blk_mq_tag_set) {
    // SAFETY: per the function's contract.
    unsafe {
        let vblk = &*((*set).driver_data as *const VirtioBlk);
        let map = &raw mut (*set).map[bindings::hctx_type_HCTX_TYPE_DEFAULT as usize];
        (*map).nr_queues = vblk.vqs.len() as u32;
        (*map).queue_offset = 0;
        // (7.3's `blk_mq_map_hw_queues` replaces `blk_mq_virtio_map_queues`;
        // it asks the virtio bus for the vectors' affinity.)
        bindings::blk_mq_map_hw_queues(map, vblk.vdev.device(), 0);
    }
}
