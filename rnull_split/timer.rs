// SPDX-License-Identifier: GPL-2.0

//! `irqmode=2`: requests and bios complete from a high-resolution timer
//! `completion_nsec` after they were queued, as with C null_blk.
//!
//! Every I/O gets a timer of its own, relative, `CLOCK_MONOTONIC`, expiring
//! in hard-irq context (in a softirq thread on PREEMPT_RT), as C null_blk's
//! `cmd->timer`:
//!
//! - blk-mq (`queue_mode=2`): the timer is the request's driver data
//!   ([`RequestTimer`], in the request's PDU as in C). `queue_rq` starts it
//!   and gives it the request ([`Request::start_timer`]); the callback
//!   ([`RequestTimerCallback::timer_expired`]) gets the request back and
//!   ends it. An armed timer holds a reference to its request, so nothing
//!   else can end the request meanwhile; blk-mq waits for requests in
//!   flight before it frees them, so a disk does not go away under a timer.
//! - bio-based (`queue_mode=0`): a bio has no driver data, so a device keeps
//!   a pool of `submit_queues * hw_queue_depth` timers ([`BioTimers`]), each
//!   for one bio at a time, as old C null_blk's bio mode took a command (with
//!   its timer) from a per-queue tag map for every bio and waited when all
//!   were busy. `submit_bio` takes a free timer first, sleeping until one is
//!   free, or for a `REQ_NOWAIT` bio ending it with `EAGAIN` if none is (as
//!   a blk-mq disk does when no tag is free), serves the bio, gives it to
//!   the timer and starts it; the callback ends the bio and gives the timer
//!   back.
//!   A bio-based disk does not wait for bios in flight when it goes away,
//!   so dropping the pool does: it waits for every timer to come back,
//!   then cancels them all, which also waits for a callback still returning.
//!
//! Everything is safe code over `kernel::block::mq::RequestTimerCallback`,
//! `kernel::time::hrtimer`, `kernel::sync::SpinLockIrq` and `CondVar`.

use crate::{device::NullQueue, fifo::Fifo};
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use kernel::{
    block::{
        bio::OwnedBio,
        mq::{Request, RequestTimerCallback},
    },
    impl_has_hr_timer, new_condvar, new_spinlock_irq, pr_warn_once,
    prelude::*,
    sync::{aref::ARef, Arc, ArcBorrow, CondVar, SpinLockIrq, SpinLockIrqGuard},
    time::{
        hrtimer::{
            ArcHrTimerHandle, HrTimer, HrTimerCallback, HrTimerCallbackContext, HrTimerPointer,
            HrTimerRestart, RelativeMode,
        },
        Delta, Monotonic,
    },
};

/// `completion_nsec` as a timer delay.
pub(crate) fn delay(completion_nsec: u64) -> Result<Delta> {
    Ok(Delta::from_nanos(
        i64::try_from(completion_nsec).map_err(|_| EINVAL)?,
    ))
}

/// The driver data of every blk-mq request: its completion timer, whether
/// the driver dropped it to time out (C null_blk's `fake_timeout`), and the
/// sector a zone append wrote at.
#[pin_data]
pub(crate) struct RequestTimer {
    #[pin]
    timer: HrTimer<Request<NullQueue>>,
    dropped: AtomicBool,
    /// [`NO_APPEND`] unless the request is a zone append that was served.
    append_sector: AtomicU64,
}

/// No zone append sector.
const NO_APPEND: u64 = u64::MAX;

impl RequestTimer {
    pub(crate) fn new() -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            timer <- HrTimer::new(),
            dropped: AtomicBool::new(false),
            append_sector: AtomicU64::new(NO_APPEND),
        })
    }

    /// Record where a zone append wrote.
    pub(crate) fn set_append_sector(&self, sector: u64) {
        self.append_sector.store(sector, Ordering::Relaxed);
    }

    /// Where the zone append this request is wrote, if it is one; forgets
    /// it, for the request's next use.
    #[inline(always)]
    pub(crate) fn take_append_sector(&self) -> Option<u64> {
        match self.append_sector.load(Ordering::Relaxed) {
            NO_APPEND => None,
            sector => {
                self.append_sector.store(NO_APPEND, Ordering::Relaxed);
                Some(sector)
            }
        }
    }

    /// Mark the request as dropped (or not); returns whether it was.
    pub(crate) fn set_dropped(&self, dropped: bool) -> bool {
        self.dropped.swap(dropped, Ordering::Relaxed)
    }
}

impl_has_hr_timer! {
    impl HasHrTimer<Request<NullQueue>> for RequestTimer {
        mode: RelativeMode<Monotonic>, field: self.timer
    }
}

impl RequestTimerCallback for NullQueue {
    fn timer_expired(rq: ARef<Request<Self>>) {
        crate::device::end(rq);
    }
}

/// Complete `rq` `delay` from now.
pub(crate) fn complete_rq_later(rq: ARef<Request<NullQueue>>, delay: Delta) {
    // A request reaches `queue_rq` with its timer stopped (its last callback
    // took the timer's reference before the request could end), so this
    // cannot fail; should it, complete at once rather than lose the request.
    if let Err(rq) = Request::start_timer(rq, delay) {
        pr_warn_once!("request timer already armed\n");
        crate::device::end(rq);
    }
}

/// One timer of a [`BioTimers`] pool.
#[pin_data]
struct BioTimer {
    #[pin]
    timer: HrTimer<Self>,
    #[pin]
    state: SpinLockIrq<BioTimerState>,
    /// Where the callback gives the timer back.
    pool: Arc<Pool>,
}

/// What a [`BioTimer`]'s lock protects.
struct BioTimerState {
    /// The bio to end, and its status, while the timer is armed.
    bio: Option<(OwnedBio, Result)>,
    /// The handle of the timer's last start. Dropping it cancels the timer
    /// (waiting for a running callback), so only whoever took the timer out
    /// of the pool's free list drops it, before starting the timer again, or
    /// the pool's drain.
    handle: Option<ArcHrTimerHandle<BioTimer>>,
}

impl_has_hr_timer! {
    impl HasHrTimer<Self> for BioTimer {
        mode: RelativeMode<Monotonic>, field: self.timer
    }
}

impl HrTimerCallback for BioTimer {
    type Pointer<'a> = Arc<Self>;

    /// End the bio, then give the timer back.
    fn run(this: ArcBorrow<'_, Self>, _ctx: HrTimerCallbackContext<'_, Self>) -> HrTimerRestart {
        let bio = this.state.lock().bio.take();
        if let Some((bio, status)) = bio {
            bio.end(status);
        }
        this.pool.put(this.into());
        HrTimerRestart::NoRestart
    }
}

/// The free timers of a [`BioTimers`] pool, taken oldest first: a timer
/// just given back may still be in its callback, on another CPU, and would
/// stay armed there (see [`crate::fifo`]).
struct Free {
    /// A slot for every timer of the pool, so that giving one back never
    /// allocates.
    slots: KVec<Option<Arc<BioTimer>>>,
    /// Which of `slots` hold free timers, oldest first.
    queue: Fifo,
    /// How many timers the pool has.
    total: usize,
    /// How many tasks wait in [`Pool::wait_returned`], so that giving a
    /// timer back wakes somebody only when somebody waits (C null_blk's
    /// `waitqueue_active()` check before `wake_up()`).
    waiters: usize,
}

impl Free {
    /// Queue a free timer; gives it back if every slot is taken.
    fn push(&mut self, timer: Arc<BioTimer>) -> Result<(), Arc<BioTimer>> {
        match self.queue.push().and_then(|i| self.slots.get_mut(i)) {
            Some(slot) => {
                *slot = Some(timer);
                Ok(())
            }
            None => Err(timer),
        }
    }

    /// The timer free the longest, if any.
    fn pop(&mut self) -> Option<Arc<BioTimer>> {
        let i = self.queue.pop()?;
        self.slots.get_mut(i)?.take()
    }
}

/// The part of a [`BioTimers`] that its timers see.
#[pin_data]
struct Pool {
    #[pin]
    free: SpinLockIrq<Free>,
    /// Signalled when a timer comes back.
    #[pin]
    returned: CondVar,
    delay: Delta,
}

impl Pool {
    /// Take a free timer, waiting for one if all are busy, or, for a
    /// `REQ_NOWAIT` bio (`nowait`), `None` if all are busy.
    fn get(&self, nowait: bool) -> Option<Arc<BioTimer>> {
        let mut free = self.free.lock();
        loop {
            if let Some(t) = free.pop() {
                return Some(t);
            }
            if nowait {
                return None;
            }
            self.wait_returned(&mut free);
        }
    }

    /// Sleep until a timer comes back (or spuriously): the caller rechecks.
    fn wait_returned(&self, free: &mut SpinLockIrqGuard<'_, Free>) {
        // Counted under the lock, and `wait` queues the task before it
        // releases it: a `put` that does not see the count cannot have
        // run before the task was queued, so no wake-up is lost.
        free.waiters += 1;
        self.returned.wait(free);
        free.waiters -= 1;
    }

    /// Give `timer` back (from its callback).
    fn put(&self, timer: Arc<BioTimer>) {
        let (full, waiters) = {
            let mut free = self.free.lock();
            (free.push(timer), free.waiters)
        };
        // Cannot happen (there is room for every timer); the timer would be
        // lost to the pool, so that dropping the pool would wait forever.
        if full.is_err() {
            pr_err!("bio timer pool overflow\n");
        }
        if waiters > 0 {
            self.returned.notify_one();
        }
    }
}

/// The completion timers of one bio-based device.
pub(crate) struct BioTimers {
    pool: Arc<Pool>,
}

impl BioTimers {
    /// `count` timers completing bios `delay` after [`TakenTimer::complete_later`].
    pub(crate) fn new(delay: Delta, count: usize) -> Result<Self> {
        let mut slots = KVec::with_capacity(count, GFP_KERNEL)?;
        for _ in 0..count {
            slots.push(None, GFP_KERNEL)?;
        }
        let free = Free {
            slots,
            queue: Fifo::new(count),
            total: 0,
            waiters: 0,
        };
        let pool = Arc::pin_init(
            pin_init!(Pool {
                free <- new_spinlock_irq!(free, "rnull_split:bio_timers"),
                returned <- new_condvar!("rnull_split:bio_timers"),
                delay,
            }),
            GFP_KERNEL,
        )?;
        // From here on, dropping `this` releases the timers made so far.
        let this = Self { pool };
        for _ in 0..count {
            let pool = this.pool.clone();
            let timer = Arc::pin_init(
                pin_init!(BioTimer {
                    timer <- HrTimer::new(),
                    state <- new_spinlock_irq!(
                        BioTimerState { bio: None, handle: None },
                        "rnull_split:bio_timer"
                    ),
                    pool,
                }),
                GFP_KERNEL,
            )?;
            let mut free = this.pool.free.lock();
            if free.push(timer).is_err() {
                return Err(ENOMEM);
            }
            free.total += 1;
        }
        Ok(this)
    }

    /// Take a free timer for a bio before serving it. Sleeps while every
    /// timer is busy, unless `nowait` (a `REQ_NOWAIT` bio): then `EAGAIN`,
    /// and the bio is ended with it untouched, as a blk-mq disk ends one
    /// that finds no free tag.
    pub(crate) fn take(&self, nowait: bool) -> Result<TakenTimer<'_>> {
        let timer = self.pool.get(nowait).ok_or(EAGAIN)?;
        Ok(TakenTimer {
            timer: Some(timer),
            pool: &self.pool,
        })
    }
}

/// A timer taken out of a [`BioTimers`] pool for one bio; dropped unused,
/// it goes back to the pool.
///
/// # Invariants
///
/// `timer` is `Some` until [`TakenTimer::complete_later`] or `drop` takes it.
pub(crate) struct TakenTimer<'a> {
    timer: Option<Arc<BioTimer>>,
    pool: &'a Arc<Pool>,
}

impl TakenTimer<'_> {
    /// End `bio` with `status` `completion_nsec` from now.
    pub(crate) fn complete_later(mut self, bio: OwnedBio, status: Result) {
        let Some(timer) = self.timer.take() else {
            // Unreachable by the type invariant.
            return bio.end(status);
        };
        // Its callback gave the timer back: dropping the handle of its last
        // start returns at once, or once that callback has returned (it
        // spins, never sleeps: fine for a `REQ_NOWAIT` bio).
        let old = timer.state.lock().handle.take();
        drop(old);
        let mut state = timer.state.lock();
        state.bio = Some((bio, status));
        // Under the lock, so that the callback, which takes the bio under it,
        // cannot give the timer back before its handle is stored.
        state.handle = Some(timer.clone().start(self.pool.delay));
    }
}

impl Drop for TakenTimer<'_> {
    fn drop(&mut self) {
        if let Some(timer) = self.timer.take() {
            self.pool.put(timer);
        }
    }
}

impl Drop for BioTimers {
    fn drop(&mut self) {
        // No bio comes in any more (the disk is gone); wait for those in
        // flight, whose timers then all come back.
        let timers = {
            let mut free = self.pool.free.lock();
            while free.queue.len() < free.total {
                self.pool.wait_returned(&mut free);
            }
            // Every slot holds a timer now; the pool is left empty.
            free.queue = Fifo::new(0);
            free.total = 0;
            core::mem::take(&mut free.slots)
        };
        for timer in timers.iter().flatten() {
            let handle = timer.state.lock().handle.take();
            // Cancels a stopped timer, waiting for a callback still
            // returning; drops the handle's reference on `timer`.
            drop(handle);
        }
        // Drops the last references on the timers, then theirs on the pool.
        drop(timers);
    }
}
