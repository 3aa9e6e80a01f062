// SPDX-License-Identifier: GPL-2.0

//! `irqmode=2`: requests complete from a high-resolution timer
//! `completion_nsec` after they were queued, as with C null_blk.
//!
//! C null_blk arms one hrtimer per request (in the request's PDU). The 6.12
//! Rust blk-mq abstraction has no per-request driver data, so a device keeps
//! one timer and a FIFO of in-flight requests instead: every request gets the
//! same delay, so deadlines leave the FIFO in order, and the timer always
//! waits for the head. The FIFO has one slot per tag, so `queue_rq` never
//! allocates.
//!
//! This is the driver's only use of raw hrtimer and spinlock bindings: the
//! timer callback runs in hard-irq context and must share the FIFO with
//! `queue_rq`, which needs an irq-safe lock that 6.12's `kernel::sync` does
//! not have.

use crate::device::NullQueue;
use core::{cell::UnsafeCell, pin::Pin};
use kernel::{
    bindings,
    block::mq::Request,
    c_str,
    init::PinInit,
    prelude::*,
    static_lock_class,
    types::{ARef, Opaque},
};

type Rq = ARef<Request<NullQueue>>;

/// A FIFO of requests with their deadlines (ns of `ktime_get`).
struct Fifo {
    slots: KVec<Option<(Rq, i64)>>,
    head: usize,
    len: usize,
}

impl Fifo {
    fn push(&mut self, rq: Rq, deadline: i64) -> core::result::Result<(), Rq> {
        let cap = self.slots.len();
        if self.len == cap {
            return Err(rq);
        }
        self.slots[(self.head + self.len) % cap] = Some((rq, deadline));
        self.len += 1;
        Ok(())
    }

    fn front_deadline(&self) -> Option<i64> {
        (self.len > 0).then(|| self.slots[self.head].as_ref().map_or(0, |(_, d)| *d))
    }

    fn pop(&mut self) -> Option<Rq> {
        if self.len == 0 {
            return None;
        }
        let item = self.slots[self.head].take();
        self.head = (self.head + 1) % self.slots.len();
        self.len -= 1;
        item.map(|(rq, _)| rq)
    }
}

/// The completion timer of one blk-mq device.
///
/// # Invariants
///
/// - `lock` is an initialized `spinlock_t` and `fifo` is only accessed with
///   it held (irqs off).
/// - `timer` is an initialized hrtimer whose callback is [`Self::expired`];
///   it is cancelled before the struct is dropped.
#[pin_data(PinnedDrop)]
pub(crate) struct TimerQueue {
    #[pin]
    lock: Opaque<bindings::spinlock_t>,
    #[pin]
    timer: Opaque<bindings::hrtimer>,
    fifo: UnsafeCell<Fifo>,
    delay_ns: i64,
}

// SAFETY: `fifo` is only touched under `lock`; the rest is C state with its
// own synchronization.
unsafe impl Send for TimerQueue {}
// SAFETY: As above.
unsafe impl Sync for TimerQueue {}

/// Ends `rq` (the timer is the only owner of its `ARef`).
fn end(rq: Rq) {
    if Request::end_ok(rq).is_err() {
        pr_warn!("request still referenced at timer completion\n");
    }
}

impl TimerQueue {
    /// A timer completing requests `delay_ns` after `queue`, for at most
    /// `slots` requests in flight (the device's number of tags).
    pub(crate) fn new(delay_ns: u64, slots: usize) -> Result<impl PinInit<Self, Error>> {
        let mut v = KVec::with_capacity(slots, GFP_KERNEL)?;
        for _ in 0..slots {
            v.push(None, GFP_KERNEL)?;
        }
        let fifo = UnsafeCell::new(Fifo {
            slots: v,
            head: 0,
            len: 0,
        });
        let delay_ns = i64::try_from(delay_ns).map_err(|_| EINVAL)?;
        Ok(try_pin_init!(Self {
            lock <- Opaque::ffi_init(|slot: *mut bindings::spinlock_t| {
                // SAFETY: `slot` is valid for writing a spinlock; the name and
                // the lock class key are static.
                unsafe {
                    bindings::__spin_lock_init(
                        slot,
                        c_str!("rnull_split:timer").as_char_ptr(),
                        static_lock_class!().as_ptr(),
                    )
                }
            }),
            timer <- Opaque::ffi_init(|slot: *mut bindings::hrtimer| {
                // SAFETY: `slot` is valid for writing an hrtimer.
                unsafe {
                    bindings::hrtimer_init(
                        slot,
                        bindings::CLOCK_MONOTONIC as _,
                        bindings::hrtimer_mode_HRTIMER_MODE_ABS,
                    );
                    (*slot).function = Some(Self::expired);
                }
            }),
            fifo,
            delay_ns,
        }))
    }

    /// Run `f` on the FIFO with the lock held and irqs off.
    fn with_fifo<R>(&self, f: impl FnOnce(&mut Fifo) -> R) -> R {
        // On !PREEMPT_RT a `spinlock_t` is a `raw_spinlock_t` (its union's
        // only member), which is what the exported lock functions take.
        let raw = self.lock.get().cast::<bindings::raw_spinlock_t>();
        // SAFETY: `lock` is initialized (type invariant).
        let flags = unsafe { bindings::_raw_spin_lock_irqsave(raw) };
        // SAFETY: We hold the lock, so we have exclusive access to `fifo`.
        let r = f(unsafe { &mut *self.fifo.get() });
        // SAFETY: We took the lock above with these flags.
        unsafe { bindings::_raw_spin_unlock_irqrestore(raw, flags) };
        r
    }

    /// Complete `rq` `completion_nsec` from now.
    pub(crate) fn queue(&self, rq: Rq) {
        let overflow = self.with_fifo(|fifo| {
            // SAFETY: `ktime_get` may be called in any context.
            let deadline = unsafe { bindings::ktime_get() } + self.delay_ns;
            let was_empty = fifo.len == 0;
            let r = fifo.push(rq, deadline);
            if r.is_ok() && was_empty {
                // Starting it while its callback runs elsewhere is allowed.
                // SAFETY: `timer` is initialized (type invariant).
                unsafe {
                    bindings::hrtimer_start_range_ns(
                        self.timer.get(),
                        deadline,
                        0,
                        bindings::hrtimer_mode_HRTIMER_MODE_ABS,
                    )
                };
            }
            r.err()
        });
        // More requests than tags cannot be in flight; should it happen,
        // complete at once rather than lose the request.
        if let Some(rq) = overflow {
            end(rq);
        }
    }

    /// The hrtimer callback: end every request whose deadline has passed,
    /// then wait for the next one.
    ///
    /// # Safety
    ///
    /// Called by the hrtimer core for `self.timer` of a live `TimerQueue`.
    unsafe extern "C" fn expired(timer: *mut bindings::hrtimer) -> bindings::hrtimer_restart {
        let offset = core::mem::offset_of!(TimerQueue, timer);
        // SAFETY: `timer` is the `timer` field of a live `TimerQueue` (this
        // function's requirement): stepping back to its start stays inside.
        let this = unsafe { &*timer.cast::<u8>().sub(offset).cast::<TimerQueue>() };
        // SAFETY: `ktime_get` may be called in any context.
        let now = unsafe { bindings::ktime_get() };
        loop {
            let step = this.with_fifo(|fifo| match fifo.front_deadline() {
                Some(d) if d <= now => Ok(fifo.pop()),
                Some(d) => {
                    // hrtimer_set_expires(): the timer is not queued while
                    // its callback runs.
                    // SAFETY: `timer` is valid and not enqueued.
                    unsafe {
                        (*timer).node.expires = d;
                        (*timer)._softexpires = d;
                    }
                    Err(bindings::hrtimer_restart_HRTIMER_RESTART)
                }
                None => Err(bindings::hrtimer_restart_HRTIMER_NORESTART),
            });
            match step {
                Ok(Some(rq)) => end(rq),
                Ok(None) => return bindings::hrtimer_restart_HRTIMER_NORESTART,
                Err(restart) => return restart,
            }
        }
    }
}

#[pinned_drop]
impl PinnedDrop for TimerQueue {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: `timer` is initialized; this waits for a running callback.
        unsafe { bindings::hrtimer_cancel(self.timer.get()) };
    }
}
