// SPDX-License-Identifier: GPL-2.0

//! Thin wrappers over the blk-mq calls the driver needs.
//!
//! The driver was written against 6.12, whose `kernel::block::mq`
//! abstraction had no per-request driver data and no queue data, which the
//! virtio frontend needs (the request header and the inline scatterlist live
//! in the request), so it uses the C tag set directly; the raw calls are
//! gathered here. (Moving onto 7.3's `kernel::block::mq` is the next step;
//! virtio and scatterlists already go through `kernel::virtio` and
//! `kernel::scatterlist`.)

use crate::sg_plan::{self, Op};
use core::{ffi::c_void, ptr::NonNull};
use kernel::{bindings, prelude::*, types::ForeignOwnable};

/// `blk_status_t`.
pub(crate) type BlkStatus = bindings::blk_status_t;
/// `BLK_STS_OK`.
pub(crate) const BLK_STS_OK: BlkStatus = bindings::BLK_STS_OK as BlkStatus;
/// `BLK_STS_RESOURCE`.
pub(crate) const BLK_STS_RESOURCE: BlkStatus = bindings::BLK_STS_RESOURCE;
/// `BLK_STS_DEV_RESOURCE`.
pub(crate) const BLK_STS_DEV_RESOURCE: BlkStatus = bindings::BLK_STS_DEV_RESOURCE;

/// The block status for an error (`errno_to_blk_status()`: `EOPNOTSUPP` is
/// `BLK_STS_NOTSUPP`, `EIO` is `BLK_STS_IOERR`, ...).
pub(crate) fn errno_status(e: Error) -> BlkStatus {
    // SAFETY: a pure mapping of the value.
    unsafe { bindings::errno_to_blk_status(e.to_errno()) }
}

/// The block status for a device status byte.
pub(crate) fn status_to_blk(s: sg_plan::Status) -> BlkStatus {
    match s {
        sg_plan::Status::Ok => BLK_STS_OK,
        sg_plan::Status::NotSupported => errno_status(EOPNOTSUPP),
        sg_plan::Status::IoErr => errno_status(EIO),
    }
}

/// A request owned by the driver: between `queue_rq` accepting it and
/// `blk_mq_end_request`.
///
/// It is not `Copy`: handing it on (to the virtqueue as a buffer's token,
/// to [`Request::complete`], [`Request::end`] or [`Request::requeue`])
/// moves the ownership, so it cannot be ended twice. Dropping it gives up
/// the driver's claim without ending it (blk-mq or another owner does).
///
/// # Invariants
///
/// `self.0` is a live request of a tag set whose `cmd_size` covers the
/// driver's `VirtblkReq`, and the driver owns it (it was handed to
/// `queue_rq`, to `complete`, or allocated by the driver).
pub(crate) struct Request(NonNull<bindings::request>);

// SAFETY: a request may be completed and ended on any CPU.
unsafe impl Send for Request {}

// SAFETY: the token of a virtqueue buffer is the request pointer itself.
unsafe impl ForeignOwnable for Request {
    const FOREIGN_ALIGN: usize = core::mem::align_of::<bindings::request>();
    type Borrowed<'a> = ();
    type BorrowedMut<'a> = ();

    fn into_foreign(self) -> *mut c_void {
        self.0.as_ptr().cast()
    }

    unsafe fn from_foreign(ptr: *mut c_void) -> Self {
        // INVARIANT: `ptr` came from `into_foreign` of an owned request
        // (the caller's contract), whose ownership comes back.
        // SAFETY: `into_foreign` returns non-null pointers.
        Self(unsafe { NonNull::new_unchecked(ptr.cast()) })
    }

    unsafe fn borrow<'a>(_: *mut c_void) -> Self::Borrowed<'a> {}

    unsafe fn borrow_mut<'a>(_: *mut c_void) -> Self::BorrowedMut<'a> {}
}

impl Request {
    /// Wraps a request handed to the driver.
    ///
    /// # Safety
    ///
    /// `ptr` is a live request owned by the driver (see the type invariants).
    pub(crate) unsafe fn from_raw(ptr: *mut bindings::request) -> Self {
        // SAFETY: blk-mq hands non-null requests.
        Self(unsafe { NonNull::new_unchecked(ptr) })
    }

    /// The raw pointer.
    pub(crate) fn as_ptr(&self) -> *mut bindings::request {
        self.0.as_ptr()
    }

    /// The per-request driver data (`blk_mq_rq_to_pdu`).
    pub(crate) fn pdu<T>(&self) -> *mut T {
        // SAFETY: live request (type invariant).
        unsafe { bindings::blk_mq_rq_to_pdu(self.as_ptr()).cast() }
    }

    /// `req->q`.
    pub(crate) fn queue(&self) -> *mut bindings::request_queue {
        // SAFETY: live request (type invariant).
        unsafe { (*self.as_ptr()).q }
    }

    /// The operation, as the pure logic knows it.
    pub(crate) fn op(&self) -> Op {
        // SAFETY: live request (type invariant).
        let op = unsafe { bindings::req_op(self.as_ptr()) };
        match op {
            bindings::req_op_REQ_OP_READ => Op::Read,
            bindings::req_op_REQ_OP_WRITE => Op::Write,
            bindings::req_op_REQ_OP_FLUSH => Op::Flush,
            bindings::req_op_REQ_OP_DISCARD => Op::Discard,
            bindings::req_op_REQ_OP_WRITE_ZEROES => {
                // SAFETY: live request (type invariant).
                let flags = unsafe { (*self.as_ptr()).cmd_flags };
                Op::WriteZeroes {
                    nounmap: flags & (1 << bindings::req_flag_bits___REQ_NOUNMAP) != 0,
                }
            }
            bindings::req_op_REQ_OP_DRV_IN => Op::DrvIn,
            _ => Op::Other,
        }
    }

    /// `blk_rq_pos()`: start sector.
    pub(crate) fn pos(&self) -> u64 {
        // SAFETY: live request (type invariant).
        unsafe { bindings::blk_rq_pos(self.as_ptr()) }
    }

    /// `blk_rq_bytes()`.
    pub(crate) fn bytes(&self) -> u32 {
        // SAFETY: live request (type invariant).
        unsafe { bindings::blk_rq_bytes(self.as_ptr()) }
    }

    /// `blk_rq_nr_phys_segments()`.
    pub(crate) fn nr_phys_segments(&self) -> u32 {
        // SAFETY: live request (type invariant).
        unsafe { bindings::blk_rq_nr_phys_segments(self.as_ptr()) as u32 }
    }

    /// `blk_rq_nr_discard_segments()`.
    pub(crate) fn nr_discard_segments(&self) -> u32 {
        // SAFETY: live request (type invariant).
        unsafe { bindings::blk_rq_nr_discard_segments(self.as_ptr()) as u32 }
    }

    /// `queue_max_discard_segments(req->q)`.
    pub(crate) fn max_discard_segments(&self) -> u32 {
        // SAFETY: a live request's queue is live.
        unsafe { (*self.queue()).limits.max_discard_segments as u32 }
    }

    /// Calls `f(sector, bytes)` for every bio of the request
    /// (`__rq_for_each_bio`).
    pub(crate) fn for_each_bio(&self, mut f: impl FnMut(u64, u32)) {
        // SAFETY: live request; its bio chain is stable while we own it.
        let mut bio = unsafe { (*self.as_ptr()).bio };
        while !bio.is_null() {
            // SAFETY: `bio` is a live bio of the chain.
            let (sector, size, next) = unsafe {
                (
                    (*bio).bi_iter.bi_sector,
                    (*bio).bi_iter.bi_size,
                    (*bio).bi_next,
                )
            };
            f(sector, size);
            bio = next;
        }
    }

    /// Attaches a payload (`bvec_set_virt(&req->special_vec, ..)` plus
    /// `RQF_SPECIAL_PAYLOAD`), which `blk_rq_map_sg` then maps instead of
    /// the bios; detached by [`Request::clear_special_payload`].
    ///
    /// # Safety
    ///
    /// `buf` holds `len` bytes in the kernel's linear map and stays valid,
    /// unchanged, until the payload is detached.
    pub(crate) unsafe fn set_special_payload(&self, buf: *mut c_void, len: u32) {
        let rq = self.as_ptr();
        // SAFETY: live request owned by us; the special vector is ours to set.
        unsafe {
            bindings::bvec_set_virt(&raw mut (*rq).__bindgen_anon_3.special_vec, buf, len);
            (*rq).rq_flags |= 1 << bindings::rqf_flags___RQF_SPECIAL_PAYLOAD;
        }
    }

    /// Detaches the payload of [`Request::set_special_payload`], if any
    /// (`virtblk_cleanup_cmd`; the memory belongs to the caller).
    pub(crate) fn clear_special_payload(&self) {
        let rq = self.as_ptr();
        // SAFETY: live request owned by us; the flag is ours to clear.
        unsafe { (*rq).rq_flags &= !(1 << bindings::rqf_flags___RQF_SPECIAL_PAYLOAD) };
    }

    /// `blk_rq_map_sg()`: fills `sgl` (with room for every physical segment)
    /// and returns the number of entries used.
    ///
    /// # Safety
    ///
    /// `sgl` is an initialised table of at least `nr_phys_segments()` entries.
    pub(crate) unsafe fn map_sg(&self, sgl: *mut bindings::scatterlist) -> i32 {
        // SAFETY: per the caller.
        unsafe { bindings::blk_rq_map_sg(self.as_ptr(), sgl) }
    }

    /// `blk_mq_start_request()`.
    pub(crate) fn start(&self) {
        // SAFETY: live request owned by us.
        unsafe { bindings::blk_mq_start_request(self.as_ptr()) }
    }

    /// `blk_mq_complete_request()`: schedules `complete` for the request,
    /// which gets the ownership.
    pub(crate) fn complete(self) {
        // SAFETY: live, started request.
        unsafe { bindings::blk_mq_complete_request(self.as_ptr()) }
    }

    /// The hardware context the request was queued on (`req->mq_hctx`).
    pub(crate) fn hctx(&self) -> *mut bindings::blk_mq_hw_ctx {
        // SAFETY: live request (type invariant).
        unsafe { (*self.as_ptr()).mq_hctx }
    }

    /// `blk_mq_requeue_request(req, true)`: blk-mq issues it again later.
    pub(crate) fn requeue(self) {
        // SAFETY: a started request we own; ownership goes back to blk-mq.
        unsafe { bindings::blk_mq_requeue_request(self.as_ptr(), true) }
    }

    /// `blk_mq_end_request()`: gives the request back to the block layer.
    pub(crate) fn end(self, status: BlkStatus) {
        // SAFETY: live request owned by us; ownership ends here (`self` is
        // consumed).
        unsafe { bindings::blk_mq_end_request(self.as_ptr(), status) }
    }
}

/// A singly linked list of requests (`struct rq_list`), as handed to
/// `queue_rqs`.
///
/// # Invariants
///
/// `head..tail` are requests owned by whoever holds the list, linked by
/// `rq_next`; `tail` is null iff `head` is.
pub(crate) struct RqList(bindings::rq_list);

impl RqList {
    /// An empty list.
    pub(crate) const fn new() -> Self {
        Self(bindings::rq_list {
            head: core::ptr::null_mut(),
            tail: core::ptr::null_mut(),
        })
    }

    /// Takes the list blk-mq passed to `queue_rqs`, leaving it empty.
    ///
    /// # Safety
    ///
    /// `l` is the valid list passed to `queue_rqs`.
    pub(crate) unsafe fn take(l: *mut bindings::rq_list) -> Self {
        // SAFETY: per the caller.
        unsafe { core::ptr::replace(l, Self::new().0) }.into()
    }

    /// Gives the list back to blk-mq (the requests it still has to issue).
    ///
    /// # Safety
    ///
    /// `l` is the valid list passed to `queue_rqs`.
    pub(crate) unsafe fn give_back(self, l: *mut bindings::rq_list) {
        // SAFETY: per the caller.
        unsafe { l.write(self.0) };
    }

    /// `rq_list_pop()`.
    pub(crate) fn pop(&mut self) -> Option<Request> {
        let rq = self.0.head;
        if rq.is_null() {
            return None;
        }
        // SAFETY: `rq` is a request of the list (type invariant).
        unsafe {
            self.0.head = (*rq).__bindgen_anon_1.rq_next;
            if self.0.head.is_null() {
                self.0.tail = core::ptr::null_mut();
            }
            (*rq).__bindgen_anon_1.rq_next = core::ptr::null_mut();
            Some(Request::from_raw(rq))
        }
    }

    /// `rq_list_add_tail()`.
    pub(crate) fn add_tail(&mut self, req: Request) {
        let rq = req.as_ptr();
        // SAFETY: `rq` is owned by the caller and now joins the list.
        unsafe {
            (*rq).__bindgen_anon_1.rq_next = core::ptr::null_mut();
            if self.0.tail.is_null() {
                self.0.head = rq;
            } else {
                (*self.0.tail).__bindgen_anon_1.rq_next = rq;
            }
        }
        self.0.tail = rq;
    }
}

impl From<bindings::rq_list> for RqList {
    fn from(l: bindings::rq_list) -> Self {
        Self(l)
    }
}

/// Ends every in-flight request of a dead device (upstream
/// `virtblk_cleanup_broken_device`): new requests wait at the queue's door
/// (freeze), dispatch stops (quiesce), every started request is completed
/// through `cancel`, then the hardware queues run again, so that the requests
/// already past the door reach the driver and fail, as do the waiters at
/// the door once the queue unfreezes.
///
/// # Safety
///
/// `q` and `set` are the live queue and tag set of one disk; `cancel` may be
/// called for every request of `set` and completes only those in flight; the
/// device will not touch the requests anymore (it is broken or reset) and the
/// driver fails every new request (`queue_rq` on a broken virtqueue).
pub(crate) unsafe fn cancel_all_requests(
    q: *mut bindings::request_queue,
    set: *mut bindings::blk_mq_tag_set,
    sync_cbs: impl FnOnce(),
    cancel: unsafe extern "C" fn(*mut bindings::request, *mut c_void) -> bool,
) {
    // SAFETY: per the caller, `q` and `set` are live.
    unsafe {
        bindings::blk_freeze_queue_start(q);
        bindings::blk_mq_quiesce_queue(q);
    }
    sync_cbs();
    // SAFETY: as above; `cancel` only completes started requests.
    unsafe {
        bindings::blk_mq_tagset_busy_iter(set, Some(cancel), core::ptr::null_mut());
        bindings::blk_mq_tagset_wait_completed_request(set);
        // A full ring stopped a hardware queue (`queue_rq` on `ENOSPC`) and
        // only a completion from the device would restart it: without this
        // the requests waiting for it never leave and the freeze below waits
        // forever.
        bindings::blk_mq_start_stopped_hw_queues(q, true);
        bindings::blk_mq_unquiesce_queue(q);
        bindings::blk_mq_freeze_queue_wait(q);
        // (No `blk_mark_disk_dead` here as upstream later does: on 6.12 it
        // takes `open_mutex` inside the freeze, which lockdep reports as a
        // cycle with `del_gendisk`. The waiters fail in `queue_rq` instead.)
        // `blk_freeze_queue_start` saved no memalloc flags: nothing to
        // restore.
        bindings::blk_mq_unfreeze_queue_nomemrestore(q);
    }
}

impl Request {
    /// Started and not yet completed (`blk_mq_request_started() &&
    /// !blk_mq_request_completed()`).
    pub(crate) fn in_flight(&self) -> bool {
        // SAFETY: live request; `state` is read once, as `READ_ONCE` does.
        let state = unsafe { core::ptr::read_volatile(&raw const (*self.as_ptr()).state) };
        state == bindings::mq_rq_state_MQ_RQ_IN_FLIGHT
    }
}

/// `blk_mq_stop_hw_queue(hctx)`.
///
/// # Safety
///
/// `hctx` is a live hardware context (the one `queue_rq` got).
pub(crate) unsafe fn stop_hw_queue(hctx: *mut bindings::blk_mq_hw_ctx) {
    // SAFETY: per the function's contract.
    unsafe { bindings::blk_mq_stop_hw_queue(hctx) }
}

/// `blk_mq_start_stopped_hw_queues(q, true)`.
///
/// # Safety
///
/// `q` is a live request queue.
pub(crate) unsafe fn start_stopped_hw_queues(q: *mut bindings::request_queue) {
    // SAFETY: per the function's contract.
    unsafe { bindings::blk_mq_start_stopped_hw_queues(q, true) }
}
