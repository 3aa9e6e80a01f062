// SPDX-License-Identifier: GPL-2.0

//! `irqmode=2`: requests complete from a high-resolution timer
//! `completion_nsec` after they were queued, as with C null_blk.
//!
//! C null_blk arms one hrtimer per request (in the request's PDU). The Rust
//! blk-mq abstraction has no per-request driver data, so a device keeps one
//! timer and a FIFO of in-flight requests instead: every request gets the
//! same delay, so deadlines leave the FIFO in order, and the timer always
//! waits for the head. The FIFO has one slot per tag, so `queue_rq` never
//! allocates.
//!
//! Everything is safe code over `kernel::time::hrtimer` and
//! `kernel::sync::SpinLockIrq`:
//!
//! 1. [`TimerQueue`] owns an [`Arc`] of the shared [`Inner`]: the
//!    [`HrTimer`] (absolute, `CLOCK_MONOTONIC`) and, under an irq-safe
//!    spinlock, the FIFO, whether the timer is armed ([`Armed`]) and the
//!    handle of its last start. The callback runs in hard-irq context (in a
//!    softirq thread on PREEMPT_RT, where `spinlock_t` sleeps and such a
//!    timer is moved to soft expiry), so `queue_rq` takes the lock with irqs
//!    off.
//! 2. [`TimerQueue::queue`] pushes the request with its deadline. If the
//!    timer is not armed, it starts it for the head's deadline. A start
//!    through [`HrTimerPointer`] returns a handle that cancels the timer
//!    when dropped, so exactly one handle is kept: the old one is dropped
//!    (a no-op on a stopped timer, or a wait for the callback that stopped
//!    it to return) outside the lock, while the state reads
//!    [`Armed::Restarting`] so that nobody else starts or disposes of one;
//!    then the timer is started under the lock and its handle stored.
//! 3. The callback ([`Inner::run`]) ends every request whose deadline has
//!    passed, one lock section each (requests are ended outside the lock),
//!    then either moves its expiry to the new head's deadline and restarts
//!    or, with the FIFO empty, marks the timer stopped and does not restart.
//! 4. The stored handle holds a reference on [`Inner`]; dropping the
//!    [`TimerQueue`] takes it out and drops it, which cancels the timer
//!    (waiting for a running callback) and breaks the cycle.

use crate::device::NullQueue;
use kernel::{
    block::mq::Request,
    impl_has_hr_timer,
    prelude::*,
    sync::{aref::ARef, new_spinlock_irq, Arc, ArcBorrow, SpinLockIrq},
    time::{
        hrtimer::{
            AbsoluteMode, ArcHrTimerHandle, HrTimer, HrTimerCallback, HrTimerCallbackContext,
            HrTimerPointer, HrTimerRestart,
        },
        Delta, Instant, Monotonic,
    },
};

type Rq = ARef<Request<NullQueue>>;

/// A point in time of the timer's clock.
type Deadline = Instant<Monotonic>;

/// A FIFO of requests with their deadlines.
struct Fifo {
    slots: KVec<Option<(Rq, Deadline)>>,
    head: usize,
    len: usize,
}

impl Fifo {
    /// A FIFO with room for `slots` requests: allocates now, never later.
    fn new(slots: usize) -> Result<Self> {
        let mut v = KVec::with_capacity(slots, GFP_KERNEL)?;
        for _ in 0..slots {
            v.push(None, GFP_KERNEL)?;
        }
        Ok(Self {
            slots: v,
            head: 0,
            len: 0,
        })
    }

    fn push(&mut self, rq: Rq, deadline: Deadline) -> core::result::Result<(), Rq> {
        let cap = self.slots.len();
        if self.len == cap {
            return Err(rq);
        }
        self.slots[(self.head + self.len) % cap] = Some((rq, deadline));
        self.len += 1;
        Ok(())
    }

    fn front_deadline(&self) -> Option<Deadline> {
        if self.len == 0 {
            return None;
        }
        self.slots[self.head].as_ref().map(|(_, d)| *d)
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

/// Whether the timer is armed. The callback only runs while it is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Armed {
    /// Not started, or its callback found the FIFO empty and did not
    /// restart it (it may still be returning).
    Stopped,
    /// A [`TimerQueue::queue`] is dropping the old handle and will start the
    /// timer for the FIFO's head: others only push.
    Restarting,
    /// Started, or its callback is running and will restart or stop it.
    Started,
}

/// What the lock protects.
struct State {
    fifo: Fifo,
    armed: Armed,
    /// The handle of the timer's last start. Dropping it cancels the timer,
    /// so it is only dropped, outside the lock, once the timer is stopped
    /// (`armed` is [`Armed::Stopped`], then [`Armed::Restarting`] meanwhile).
    handle: Option<ArcHrTimerHandle<Inner>>,
}

/// The part of a [`TimerQueue`] that its timer's callback sees.
#[pin_data]
struct Inner {
    #[pin]
    timer: HrTimer<Self>,
    #[pin]
    state: SpinLockIrq<State>,
    delay: Delta,
}

impl_has_hr_timer! {
    impl HasHrTimer<Self> for Inner {
        mode: AbsoluteMode<Monotonic>, field: self.timer
    }
}

/// Ends `rq` (the FIFO was the only owner of its `ARef`).
fn end(rq: Rq) {
    if Request::end_ok(rq).is_err() {
        pr_warn!("request still referenced at timer completion\n");
    }
}

/// Whether `deadline` is at or before `now`.
fn passed(deadline: Deadline, now: Deadline) -> bool {
    // `Instant` of a clock has no ordering of its own; the difference does.
    !(now - deadline).is_negative()
}

impl HrTimerCallback for Inner {
    type Pointer<'a> = Arc<Self>;

    /// End every request whose deadline has passed, then wait for the next
    /// one.
    fn run(this: ArcBorrow<'_, Self>, mut ctx: HrTimerCallbackContext<'_, Self>) -> HrTimerRestart {
        let now = Deadline::now();
        loop {
            let mut state = this.state.lock();
            match state.fifo.front_deadline() {
                Some(d) if passed(d, now) => {
                    let rq = state.fifo.pop();
                    drop(state);
                    if let Some(rq) = rq {
                        end(rq);
                    }
                }
                Some(d) => {
                    // The expiry that fired is at or before `now`, and `d`
                    // after it: forwarding by their distance makes `d` the
                    // next expiry (or later, if below the clock's
                    // resolution).
                    ctx.forward(now, d - this.timer.expires());
                    return HrTimerRestart::Restart;
                }
                None => {
                    state.armed = Armed::Stopped;
                    return HrTimerRestart::NoRestart;
                }
            }
        }
    }
}

/// The completion timer of one blk-mq device.
pub(crate) struct TimerQueue {
    inner: Arc<Inner>,
}

impl TimerQueue {
    /// A timer completing requests `delay_ns` after `queue`, for at most
    /// `slots` requests in flight (the device's number of tags).
    pub(crate) fn new(delay_ns: u64, slots: usize) -> Result<impl PinInit<Self, Error>> {
        let delay = Delta::from_nanos(i64::try_from(delay_ns).map_err(|_| EINVAL)?);
        let state = State {
            fifo: Fifo::new(slots)?,
            armed: Armed::Stopped,
            handle: None,
        };
        let inner = Arc::pin_init(
            pin_init!(Inner {
                timer <- HrTimer::new(),
                state <- new_spinlock_irq!(state, "rnull_split:timer"),
                delay,
            }),
            GFP_KERNEL,
        )?;
        Ok(try_init!(Self { inner }))
    }

    /// Complete `rq` `completion_nsec` from now.
    pub(crate) fn queue(&self, rq: Rq) {
        let restart = {
            let mut state = self.inner.state.lock();
            // Under the lock, so that deadlines enter the FIFO in order.
            let deadline = Deadline::now() + self.inner.delay;
            match state.fifo.push(rq, deadline) {
                // More requests than tags cannot be in flight; should it
                // happen, complete at once rather than lose the request.
                Err(rq) => {
                    drop(state);
                    end(rq);
                    return;
                }
                Ok(()) if state.armed == Armed::Stopped => {
                    state.armed = Armed::Restarting;
                    Some(state.handle.take())
                }
                // The callback, or the `queue` restarting the timer, will
                // see the request.
                Ok(()) => None,
            }
        };
        let Some(old) = restart else {
            return;
        };
        // Cancels a stopped timer: returns at once, or once the callback
        // that stopped it has returned (it no longer takes the lock).
        drop(old);
        let mut state = self.inner.state.lock();
        // Nothing pops while the timer is not started, so the FIFO still
        // holds at least our request.
        if let Some(head) = state.fifo.front_deadline() {
            // `Restarting` kept every other handle out.
            debug_assert!(state.handle.is_none());
            // Starting under the lock: the callback cannot see the FIFO
            // before the handle is stored.
            state.handle = Some(self.inner.clone().start(head));
            state.armed = Armed::Started;
        } else {
            state.armed = Armed::Stopped;
        }
    }
}

impl Drop for TimerQueue {
    fn drop(&mut self) {
        let handle = {
            let mut state = self.inner.state.lock();
            // Nothing can call `queue` any more (we are dropped); park the
            // state anyway so that the timer cannot be started again.
            state.armed = Armed::Restarting;
            state.handle.take()
        };
        // Cancels the timer and waits for a running callback; drops the
        // handle's reference on `inner`.
        drop(handle);
    }
}
