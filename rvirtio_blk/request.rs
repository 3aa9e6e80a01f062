// SPDX-License-Identifier: GPL-2.0

//! The I/O path, as blk-mq [`Operations`]: `queue_rq` → `virtblk_setup_cmd`
//! → `virtblk_map_data` → `virtblk_add_req` → kick; the virtqueue interrupt
//! → `virtblk_done` → `complete` of the owned request → `complete` →
//! `virtblk_unmap_data` → `end`.
//!
//! Every request carries a [`VirtblkReq`] (its driver data, made by
//! `new_request_data` when blk-mq allocates the request): the out header and
//! the status byte the device writes, each with its one-entry scatterlist
//! made once ([`SgCell`]), the discard ranges and the scatterlist table
//! with [`sg_plan::INLINE_SG_CNT`] inline entries; with
//! `sg_prealloc=1` the table's first chunk is instead `seg_max` entries
//! allocated with the request. Requests with more segments than the first
//! chunk chain a table from the SG pool, freed at completion.
//!
//! A request in the ring is the token of its virtqueue buffer: the device
//! hands it back with the buffer, and whoever holds the [`Owned`] owns it.

use crate::{
    device::{VirtBlkVq, VirtioBlk},
    sg_plan::{self, Op},
    stats,
};
use core::{cell::UnsafeCell, mem::size_of, pin::Pin, ptr};
use kernel::{
    block::mq::{
        self, attribute::AttributeGroups, Command, HwQueue, IdleRequest, Operations, Refused,
    },
    prelude::*,
    scatterlist::{ChainedSgTable, SgCell, SingleSg},
    sync::{Arc, ArcBorrow},
    transmute::AsBytes,
    types::Owned,
    uapi,
    virtio::{Queue, QueueGuard},
};
use pin_init::Wrapper;

/// Inline scatterlist entries per request (C `VIRTIO_BLK_INLINE_SG_CNT`).
const INLINE: usize = sg_plan::INLINE_SG_CNT as usize;

/// A request of an rvirtio_blk disk.
pub(crate) type Request = mq::Request<VirtioMq>;

/// The blk-mq operations of rvirtio_blk disks (C `virtio_mq_ops`).
pub(crate) struct VirtioMq;

/// The per-request driver data (C `struct virtblk_req`).
#[pin_data]
pub(crate) struct VirtblkReq {
    /// All of it: only the owner of the request touches it, see
    /// [`VirtblkReq::owned`].
    #[pin]
    owned: UnsafeCell<OwnerData>,
}

// SAFETY: `owned` is only reached by the owner of the request, one thread at
// a time (see `VirtblkReq::owned`).
unsafe impl Sync for VirtblkReq {}
// SAFETY: Every field may be dropped on any thread.
unsafe impl Send for VirtblkReq {}

/// What the owner of a request reads and writes in its [`VirtblkReq`].
#[pin_data]
pub(crate) struct OwnerData {
    /// Header the device reads, with its scatterlist entry, made once with
    /// the request data (C makes it per I/O with `sg_init_one`).
    #[pin]
    out_hdr: SgCell<uapi::virtio_blk_outhdr>,
    /// Status byte the device writes (`VIRTIO_BLK_S_*`), likewise.
    #[pin]
    status: SgCell<u8>,
    /// The data (or range table) goes to the device (`type & VIRTIO_BLK_T_OUT`).
    data_out: bool,
    /// Discard / write-zeroes ranges, the data of such a request.
    ranges: KVec<uapi::virtio_blk_discard_write_zeroes>,
    /// Data scatterlist.
    #[pin]
    sg: ChainedSgTable<INLINE>,
    /// SG pool bytes of `sg`'s chained table, as the counters took them
    /// (`Stats::mapped`); 0 when it has none.
    sg_pool_bytes: u64,
}

/// The header of a request of type `type_` at `sector` (fields in device
/// byte order).
fn outhdr(type_: u32, ioprio: u32, sector: u64) -> uapi::virtio_blk_outhdr {
    uapi::virtio_blk_outhdr {
        type_,
        ioprio,
        sector,
    }
}

impl VirtblkReq {
    /// The driver data of a request: `first_chunk` entries in the table's
    /// first chunk (more than the inline ones: preallocated).
    fn new(first_chunk: u32) -> impl PinInit<Self, Error> {
        let prealloc = if first_chunk as usize > INLINE {
            first_chunk
        } else {
            0
        };
        try_pin_init!(Self {
            owned <- UnsafeCell::pin_init(try_pin_init!(OwnerData {
                out_hdr <- SgCell::new(outhdr(0, 0, 0)),
                status <- SgCell::new(sg_plan::VIRTIO_BLK_S_IOERR),
                data_out: false,
                ranges: KVec::new(),
                sg <- ChainedSgTable::new(prealloc),
                sg_pool_bytes: 0,
            }? Error)),
        }? Error)
    }

    /// Per-request memory for `first_chunk` entries: the driver data and,
    /// with `sg_prealloc=1`, the entries allocated with it.
    pub(crate) fn pdu_bytes(first_chunk: u32) -> usize {
        let prealloc = if first_chunk as usize > INLINE {
            first_chunk as usize * stats::sg_size()
        } else {
            0
        };
        size_of::<VirtblkReq>() + prealloc
    }

    /// The data, for the request's owner.
    ///
    /// # Safety
    ///
    /// The caller owns the request (between blk-mq handing it to
    /// `queue_rq` and the driver ending it, the device having given it
    /// back; or while it sets up a driver-private request), and makes no
    /// other reference to the owned part while the returned one lives.
    unsafe fn owned(self: Pin<&Self>) -> Pin<&mut OwnerData> {
        // `owned` is structurally pinned, so it never moves while the
        // request data lives.
        // SAFETY: Per the caller the reference is unique; it stays pinned.
        unsafe { Pin::new_unchecked(&mut *self.owned.get()) }
    }

    /// Fills the header of the driver's own GET_ID request.
    ///
    /// # Safety
    ///
    /// As for [`VirtblkReq::owned`].
    pub(crate) unsafe fn setup_get_id(self: Pin<&Self>, vblk: &VirtioBlk) {
        // SAFETY: Per the caller.
        let o = unsafe { self.owned() }.project();
        let type_ = vblk
            .byte_order
            .cpu_to_virtio32(sg_plan::VIRTIO_BLK_T_GET_ID);
        o.out_hdr.set(outhdr(type_, 0, 0));
        *o.data_out = false;
    }
}

/// The operation, as the pure logic knows it.
fn op_of(req: &Request) -> Op {
    match req.command() {
        Command::Read => Op::Read,
        Command::Write => Op::Write,
        Command::Flush => Op::Flush,
        Command::Discard => Op::Discard,
        Command::WriteZeroes => Op::WriteZeroes {
            nounmap: req.is_nounmap(),
        },
        Command::DriverIn => Op::DrvIn,
        _ => Op::Other,
    }
}

/// C `virtblk_setup_cmd`: fills the out header (and the range payload of
/// discard / write zeroes).
fn virtblk_setup_cmd(vblk: &VirtioBlk, req: &Request, o: &mut OwnerDataProjection<'_>) -> Result {
    let order = vblk.byte_order;
    let cmd = match sg_plan::setup_cmd(op_of(req), req.sector()) {
        Ok(Some(cmd)) => cmd,
        // The submitter (GET_ID) prepared the header and `data_out`.
        Ok(None) => return Ok(()),
        Err(sg_plan::CmdError::NotSupported) => return Err(EOPNOTSUPP),
    };
    o.out_hdr.as_mut().set(outhdr(
        order.cpu_to_virtio32(cmd.type_),
        order.cpu_to_virtio32(req.ioprio().into()),
        order.cpu_to_virtio64(cmd.sector),
    ));
    *o.data_out = sg_plan::data_out(cmd.type_);
    o.ranges.clear();
    if cmd.ranges {
        virtblk_setup_discard_write_zeroes(vblk, req, cmd.unmap, o).map_err(|_| ENOMEM)?;
    }
    Ok(())
}

/// C `virtblk_setup_discard_write_zeroes_erase`: one range per bio (or one
/// for the whole request when the device takes a single range).
fn virtblk_setup_discard_write_zeroes(
    vblk: &VirtioBlk,
    req: &Request,
    unmap: bool,
    o: &mut OwnerDataProjection<'_>,
) -> Result {
    let segments = req.nr_discard_segments().max(1) as usize;
    o.ranges.reserve(segments, GFP_ATOMIC)?;
    if vblk.max_discard_segments <= 1 {
        let r = range(sg_plan::Range::new(req.sector(), req.sectors(), unmap));
        o.ranges.push_within_capacity(r).map_err(|_| ENOMEM)?;
    } else {
        for bio in req.bios().take(segments) {
            let r = sg_plan::Range::new(
                bio.sector(),
                sg_plan::bytes_to_sectors(bio.size().into()) as u32,
                unmap,
            );
            // (Capacity reserved above.)
            let _ = o.ranges.push_within_capacity(range(r));
        }
    }
    Ok(())
}

/// A range as the device reads it (the pure logic made it little endian).
fn range(r: sg_plan::Range) -> uapi::virtio_blk_discard_write_zeroes {
    uapi::virtio_blk_discard_write_zeroes {
        sector: r.sector,
        num_sectors: r.num_sectors,
        flags: r.flags,
    }
}

/// C `virtblk_map_data`: builds the data scatterlist.
fn virtblk_map_data(vblk: &VirtioBlk, req: &Request, o: &mut OwnerDataProjection<'_>) -> Result {
    // Discard and write zeroes carry ranges, not data pages (their bios
    // have no vectors to map).
    if !o.ranges.is_empty() {
        return Ok(());
    }
    let n = req.map_sg(o.sg.as_mut())?;
    if n > 0 {
        *o.sg_pool_bytes = vblk.stats.mapped(o.sg.orig_nents(), vblk.first_chunk);
    }
    Ok(())
}

/// C `virtblk_unmap_data` and `virtblk_cleanup_cmd`: frees a chained table,
/// if any, for a request that does not reach the device or came back from
/// it.
#[inline]
fn virtblk_cleanup(vblk: &VirtioBlk, o: &mut OwnerDataProjection<'_>) {
    if o.sg.is_allocated() {
        vblk.stats.unmapped(core::mem::take(o.sg_pool_bytes));
        o.sg.as_mut().free();
    }
}

/// [`virtblk_cleanup`] for a request the caller owns again; returns the
/// status byte the device wrote.
#[inline]
fn cleanup_owned(vblk: &VirtioBlk, req: &Request) -> u8 {
    // SAFETY: The caller owns `req` (the device gave it back or never had
    // it) and holds no other reference to its owned data.
    let mut o = unsafe { req.data().owned() }.project();
    virtblk_cleanup(vblk, &mut o);
    o.status.as_mut().get()
}

/// C `virtblk_add_req`: out header, data, status byte, with `rq` as the
/// buffer's token. On failure the request comes back.
fn virtblk_add_req(
    g: &mut QueueGuard<'_, VirtBlkVq>,
    rq: Owned<Request>,
) -> Result<(), (Error, Owned<Request>)> {
    // The request stays allocated until it is ended, which happens only after
    // the device gave back its token; `req` is not used once `add_sgs`
    // returned (the device may complete it at once).
    // SAFETY: So this reference lives long enough.
    let req: &Request = unsafe { &*ptr::from_ref::<Request>(&*rq) };
    let data = req.data();
    // SAFETY: We own the request; this is the only reference to its owned
    // data until it goes to the device below.
    let o = unsafe { data.owned() }.project();
    let range_bytes = o.ranges[..].as_bytes();
    let (hdr, status) = (o.out_hdr.as_ref().get_ref(), o.status.as_ref().get_ref());
    let ranges = if range_bytes.is_empty() {
        None
    } else {
        match SingleSg::new(range_bytes) {
            Ok(sg) => Some(sg),
            Err(e) => return Err((e, rq)),
        }
    };
    let data_sg = ranges.as_ref().map(SingleSg::entry).or_else(|| o.sg.sgl());
    let (sgs, n, out) = match (data_sg, *o.data_out) {
        (Some(d), true) => ([hdr.entry(), d, status.entry()], 3, 2),
        (Some(d), false) => ([hdr.entry(), d, status.entry()], 3, 1),
        (None, _) => ([hdr.entry(), status.entry(), status.entry()], 2, 1),
    };
    // The header, status byte, ranges and table live in the request's data,
    // the data in its bios, all in the linear map. The request is only ended
    // after `get_buf` returned it (or, for a broken device, once the device
    // will never use it again).
    // SAFETY: So the memory the lists describe stays valid until `rq` is back.
    unsafe { g.add_sgs(&sgs[..n], out, rq) }
}

/// C `virtblk_prep_rq`: header and data mapping, before the request is
/// started.
fn virtblk_prep_rq(vblk: &VirtioBlk, req: &Request) -> Result {
    // SAFETY: We own `req` (blk-mq handed it to us) and no other reference
    // to its owned data exists.
    let mut o = unsafe { req.data().owned() }.project();
    // The device overwrites it; a stale OK must never survive a lost write.
    o.status.as_mut().set(sg_plan::VIRTIO_BLK_S_IOERR);
    virtblk_setup_cmd(vblk, req, &mut o)?;
    virtblk_map_data(vblk, req, &mut o).inspect_err(|_| virtblk_cleanup(vblk, &mut o))
}

#[vtable]
impl Operations for VirtioMq {
    type QueueData = Arc<VirtioBlk>;
    type RequestData = VirtblkReq;
    type TagSetData = u32;

    const DISK_ATTRIBUTES: Option<&'static AttributeGroups<Self>> = Some(&crate::sysfs::GROUPS);

    /// With `first_chunk`, the entries of the first chunk of the request's
    /// table (C `virtblk_init_request` sets `sg_table.sgl` up likewise with
    /// `sg_prealloc`'s ancestor design).
    fn new_request_data(first_chunk: &u32) -> impl PinInit<VirtblkReq, Error> {
        VirtblkReq::new(*first_chunk)
    }

    /// C `virtio_queue_rq`.
    fn queue_rq(
        vblk: ArcBorrow<'_, VirtioBlk>,
        rq: Owned<IdleRequest<Self>>,
        is_last: bool,
    ) -> Result<(), Refused<Self>> {
        let vblk: &VirtioBlk = &vblk;
        if let Err(e) = virtblk_prep_rq(vblk, &rq) {
            // `ENOMEM` requeues the request, `EOPNOTSUPP` fails it.
            return Err(Refused::new(rq, e));
        }
        // As C `virtblk_prep_rq`, once the request is set up.
        let rq = rq.start();
        let q = &vblk.vqs[rq.hw_queue().index() as usize];
        let mut g = q.lock();
        match virtblk_add_req(&mut g, rq) {
            Ok(()) => {
                q.data().count_submitted();
                let notify = is_last && g.kick_prepare();
                drop(g);
                if notify {
                    q.notify();
                }
                Ok(())
            }
            Err((e, rq)) => {
                g.kick();
                // Don't stop the queue on ENOMEM: that may be a global
                // outage.
                if e == ENOSPC {
                    rq.stop_hw_queue();
                    vblk.stats
                        .ring_full
                        .fetch_add(1, core::sync::atomic::Ordering::Relaxed);
                }
                drop(g);
                cleanup_owned(vblk, &rq);
                // A full ring (`EBUSY`: `BLK_STS_DEV_RESOURCE`, retried once
                // a completion restarts the queue) or no memory (`ENOMEM`:
                // `BLK_STS_RESOURCE`) requeue it; anything else fails it.
                let e = match e {
                    ENOSPC => EBUSY,
                    ENOMEM => ENOMEM,
                    _ => EIO,
                };
                Err(Refused::started(rq, e))
            }
        }
    }

    /// Plugged lists go to `queue_rq` one by one, `is_last` on the last of
    /// each run for one hardware queue, which kicks its virtqueue once.
    const QUEUE_RQS: bool = true;

    /// C `virtio_commit_rqs`: kick what `queue_rq` left unkicked.
    fn commit_rqs(vblk: ArcBorrow<'_, VirtioBlk>, hw_queue: HwQueue) {
        let q = &vblk.vqs[hw_queue.index() as usize];
        let kick = q.lock().kick_prepare();
        if kick {
            q.notify();
        }
    }

    /// C `virtblk_request_done`.
    fn complete(rq: Owned<Request>) {
        let vblk = rq.queue_data();
        let status = cleanup_owned(&vblk, &rq);
        let result = match sg_plan::result(status) {
            sg_plan::Status::Ok => Ok(()),
            sg_plan::Status::NotSupported => Err(EOPNOTSUPP),
            sg_plan::Status::IoErr => Err(EIO),
        };
        rq.end(result);
    }

    /// C `virtblk_poll`: completes what the device used on a poll queue;
    /// returns how many.
    fn poll(vblk: ArcBorrow<'_, VirtioBlk>, hw_queue: HwQueue) -> u32 {
        let q = &vblk.vqs[hw_queue.index() as usize];
        let mut done = Completions::default();
        let mut g = q.lock();
        // (A polled request completes right here, in the poller's context.)
        while let Some((rq, _len)) = g.get_buf() {
            done.add(rq);
        }
        drop(g);
        let found = done.finish();
        if found > 0 {
            vblk.stats.polled.add(found.into());
        }
        found
    }
}

/// The requests one pass over a ring got back from the device, completed as
/// they come except the last one, held back by [`Completions::finish`] as
/// the handle of the disk's queue.
#[derive(Default)]
struct Completions {
    /// The last request got back, not completed yet.
    last: Option<Owned<Request>>,
    /// Requests got back.
    found: u32,
}

impl Completions {
    /// Completes the request got back before `rq` and holds `rq`.
    fn add(&mut self, rq: Owned<Request>) {
        if let Some(prev) = self.last.replace(rq) {
            prev.complete();
        }
        self.found += 1;
    }

    /// Restarts the hardware queues, in case one was stopped waiting for
    /// free descriptors, if any request came back (C
    /// `blk_mq_start_stopped_hw_queues` after the loop), then completes the
    /// last one; returns how many came back.
    fn finish(self) -> u32 {
        if let Some(rq) = self.last {
            rq.start_stopped_hw_queues();
            rq.complete();
        }
        self.found
    }
}

/// The virtqueue callback (C `virtblk_done`), in interrupt context.
pub(crate) fn virtblk_done(q: &Queue<VirtBlkVq>) {
    let mut done = Completions::default();
    let mut g = q.lock();
    loop {
        g.disable_cb();
        while let Some((rq, _len)) = g.get_buf() {
            done.add(rq);
        }
        if g.enable_cb() {
            break;
        }
    }
    drop(g);
    done.finish();
}

/// Ends a request of a broken device that the reset gave back (upstream
/// `virtblk_cancel_request`, from the ring rather than the tag set): the
/// device will never answer it, so it fails with `IOERR`.
pub(crate) fn virtblk_cancel_request(rq: Owned<Request>) {
    // SAFETY: The device was reset and gave the buffer back, so we own the
    // request, and hold no other reference to its data.
    let o = unsafe { rq.data().owned() }.project();
    o.status.set(sg_plan::VIRTIO_BLK_S_IOERR);
    rq.complete();
}
