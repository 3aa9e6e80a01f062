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
//!   ends it. An armed timer owns its request, so nothing else can end the
//!   request meanwhile; blk-mq waits for requests in flight before it frees
//!   them, so a disk does not go away under a timer.
//! - bio-based (`queue_mode=0`): a bio has no driver data, so a device keeps
//!   a pool of `submit_queues * hw_queue_depth` timers ([`BioTimers`]), each
//!   for one bio at a time, as old C null_blk's bio mode took a command (with
//!   its timer) from a per-queue tag map for every bio and waited when all
//!   were busy. The timers are numbered by a lock-free tag map of the same
//!   kind ([`crate::tags`]): taking a timer and giving it back lock nothing,
//!   only waiting for one does; a timer's own lock hands its bio over to
//!   the callback. Each CPU searches the map from a hint of its own, so a
//!   bio gets the timer given back last on its CPU, which is on that CPU's
//!   timer base and whose callback has returned. `submit_bio` takes a free
//!   timer first, sleeping until one is free, or for a `REQ_NOWAIT` bio
//!   ending it with `EAGAIN` if none is (as a blk-mq disk does when no tag
//!   is free), serves the bio, gives it to the timer and starts it; the
//!   callback ends the bio and gives the timer back.
//!   A bio-based disk does not wait for bios in flight when it goes away,
//!   so dropping the pool does: it waits for every timer to come back,
//!   then cancels them all, which also waits for a callback still returning.
//!
//! Everything is safe code over `kernel::block::mq::RequestTimerCallback`,
//! `kernel::time::hrtimer`, `kernel::sync::SpinLockIrq` and `CondVar`.

use crate::{
    device::NullQueue,
    tags::{Hint, Tags},
};
use core::sync::atomic::{fence, AtomicBool, AtomicU64, AtomicUsize, Ordering};
use kernel::{
    block::{
        bio::OwnedBio,
        mq::{Request, RequestTimerCallback},
    },
    cpu::{nr_cpu_ids, CpuId},
    impl_has_hr_timer, new_condvar, new_spinlock_irq, pr_warn_once,
    prelude::*,
    sync::{Arc, ArcBorrow, CondVar, SpinLockIrq},
    time::{
        hrtimer::{
            ArcHrTimerHandle, HrTimer, HrTimerCallback, HrTimerCallbackContext, HrTimerPointer,
            HrTimerRestart, RelativeMode,
        },
        Delta, Monotonic,
    },
    types::Owned,
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
    fn timer_expired(rq: Owned<Request<Self>>) {
        crate::device::end(rq);
    }
}

/// Complete `rq` `delay` from now.
pub(crate) fn complete_rq_later(rq: Owned<Request<NullQueue>>, delay: Delta) {
    // A request reaches `queue_rq` with its timer stopped (its last callback
    // took the ownership back before the request could end), so this
    // cannot fail; should it, complete at once rather than lose the request.
    if let Err(rq) = Request::start_timer(rq, delay) {
        pr_warn_once!("request timer already armed\n");
        crate::device::end(rq);
    }
}

/// The CPU this runs on, for a tag map's hint: a stale one (after a
/// migration) only makes a search start elsewhere.
#[inline]
fn this_cpu() -> usize {
    CpuId::current().as_u32() as usize
}

/// One timer of a [`BioTimers`] pool.
#[pin_data]
struct BioTimer {
    #[pin]
    timer: HrTimer<Self>,
    #[pin]
    state: SpinLockIrq<BioTimerState>,
    /// Where the callback gives the timer's tag back.
    pool: Arc<Pool>,
    /// The timer's tag in `pool`.
    tag: usize,
}

/// What a [`BioTimer`]'s lock protects.
struct BioTimerState {
    /// The bio to end, and its status, while the timer is armed.
    bio: Option<(OwnedBio, Result)>,
    /// The handle of the timer's last start. Dropping it cancels the timer
    /// (waiting for a running callback), so only whoever holds the timer's
    /// tag drops it, before starting the timer again, or the pool's drain.
    handle: Option<ArcHrTimerHandle<BioTimer>>,
}

impl_has_hr_timer! {
    impl HasHrTimer<Self> for BioTimer {
        mode: RelativeMode<Monotonic>, field: self.timer
    }
}

impl HrTimerCallback for BioTimer {
    type Pointer<'a> = Arc<Self>;

    /// End the bio, then give the timer's tag back.
    fn run(this: ArcBorrow<'_, Self>, _ctx: HrTimerCallbackContext<'_, Self>) -> HrTimerRestart {
        let bio = this.state.lock().bio.take();
        if let Some((bio, status)) = bio {
            bio.end(status);
        }
        // The last use of the lock: whoever takes the tag next may hold it
        // while it waits for this callback to return.
        this.pool.give_back(this.tag);
        HrTimerRestart::NoRestart
    }
}

/// Which timers of a [`BioTimers`] pool are free, and who waits for one;
/// what the timers see of the pool.
#[pin_data]
struct Pool {
    /// A timer's tag is taken while a bio holds the timer.
    tags: Tags<KVec<AtomicU64>, KVec<Hint>>,
    /// How many tasks wait in [`Pool::wait_until`], so that giving a tag
    /// back wakes somebody only when somebody waits (C null_blk's
    /// `waitqueue_active()` check before `wake_up()`).
    waiters: AtomicUsize,
    /// Only for sleeping on `returned`: taking and giving back tags does
    /// not lock.
    #[pin]
    lock: SpinLockIrq<()>,
    /// Signalled when a tag comes back and somebody waits.
    #[pin]
    returned: CondVar,
}

impl Pool {
    /// Wait until `f` returns something, retrying it whenever a tag comes
    /// back.
    fn wait_until<T>(
        &self,
        mut f: impl FnMut(&Tags<KVec<AtomicU64>, KVec<Hint>>) -> Option<T>,
    ) -> T {
        let mut guard = self.lock.lock();
        self.waiters.fetch_add(1, Ordering::Relaxed);
        // Pairs with the fence in `give_back`: either `f` sees the tag given
        // back, or `give_back` sees the waiter and takes the lock to wake
        // it, which it cannot get before the task is queued on `returned`
        // (`wait` queues it, then releases the lock).
        fence(Ordering::SeqCst);
        let found = loop {
            if let Some(found) = f(&self.tags) {
                break found;
            }
            self.returned.wait(&mut guard);
        };
        self.waiters.fetch_sub(1, Ordering::Relaxed);
        found
    }

    /// Give back `tag` (from its timer's callback, or unused), on this CPU.
    fn give_back(&self, tag: usize) {
        self.tags.give_back(tag, this_cpu());
        // Pairs with the fence in `wait_until`.
        fence(Ordering::SeqCst);
        if self.waiters.load(Ordering::Relaxed) > 0 {
            let _guard = self.lock.lock();
            self.returned.notify_all();
        }
    }
}

/// The completion timers of one bio-based device.
///
/// # Invariants
///
/// `timers[i].tag == i`, and `pool`'s tags are `0..timers.len()`.
pub(crate) struct BioTimers {
    timers: KVec<Arc<BioTimer>>,
    pool: Arc<Pool>,
    delay: Delta,
}

impl BioTimers {
    /// `count` timers completing bios `delay` after [`TakenTimer::complete_later`].
    pub(crate) fn new(delay: Delta, count: usize) -> Result<Self> {
        let mut words = KVec::with_capacity(count.div_ceil(64), GFP_KERNEL)?;
        for _ in 0..count.div_ceil(64) {
            words.push(AtomicU64::new(0), GFP_KERNEL)?;
        }
        let cpus = nr_cpu_ids() as usize;
        let mut hints = KVec::with_capacity(cpus, GFP_KERNEL)?;
        for _ in 0..cpus {
            hints.push(Hint::new(), GFP_KERNEL)?;
        }
        let tags = Tags::new(words, hints, count).ok_or(EINVAL)?;
        let pool = Arc::pin_init(
            pin_init!(Pool {
                tags,
                waiters: AtomicUsize::new(0),
                lock <- new_spinlock_irq!((), "rnull_split:bio_timers"),
                returned <- new_condvar!("rnull_split:bio_timers"),
            }),
            GFP_KERNEL,
        )?;
        let mut timers = KVec::with_capacity(count, GFP_KERNEL)?;
        for tag in 0..count {
            let pool = pool.clone();
            timers.push(
                Arc::pin_init(
                    pin_init!(BioTimer {
                        timer <- HrTimer::new(),
                        state <- new_spinlock_irq!(
                            BioTimerState { bio: None, handle: None },
                            "rnull_split:bio_timer"
                        ),
                        pool,
                        tag,
                    }),
                    GFP_KERNEL,
                )?,
                GFP_KERNEL,
            )?;
        }
        // INVARIANT: timer `tag` was pushed `tag`-th, and `pool` has `count`
        // tags.
        Ok(Self {
            timers,
            pool,
            delay,
        })
    }

    /// Take a free timer for a bio before serving it. Sleeps while every
    /// timer is busy, unless `nowait` (a `REQ_NOWAIT` bio): then `EAGAIN`,
    /// and the bio is ended with it untouched, as a blk-mq disk ends one
    /// that finds no free tag.
    pub(crate) fn take(&self, nowait: bool) -> Result<TakenTimer<'_>> {
        let tag = match self.pool.tags.take(this_cpu()) {
            Some(tag) => tag,
            None if nowait => return Err(EAGAIN),
            None => self.pool.wait_until(|tags| tags.take(this_cpu())),
        };
        match self.timers.get(tag) {
            Some(timer) => Ok(TakenTimer {
                timer: Some(timer),
                delay: self.delay,
            }),
            // Unreachable by the type invariant.
            None => {
                self.pool.give_back(tag);
                Err(EAGAIN)
            }
        }
    }
}

/// A timer taken out of a [`BioTimers`] pool for one bio, with its tag;
/// dropped unused, it goes back to the pool.
///
/// # Invariants
///
/// The tag of `timer` is taken, by this; `timer` is `Some` until
/// [`TakenTimer::complete_later`] or `drop` takes it.
pub(crate) struct TakenTimer<'a> {
    timer: Option<&'a Arc<BioTimer>>,
    delay: Delta,
}

impl TakenTimer<'_> {
    /// End `bio` with `status` `completion_nsec` from now.
    pub(crate) fn complete_later(mut self, bio: OwnedBio, status: Result) {
        let Some(timer) = self.timer.take() else {
            // Unreachable by the type invariant.
            return bio.end(status);
        };
        let mut state = timer.state.lock();
        // The callback of the timer's last start gave the tag back after its
        // last use of this lock, so it cannot be waiting for it: dropping the
        // handle returns at once, or once that callback has returned (it
        // spins, never sleeps: fine for a `REQ_NOWAIT` bio).
        drop(state.handle.take());
        state.bio = Some((bio, status));
        // Under the lock, so that the callback, which takes the bio under
        // it, cannot give the tag back before the handle is stored.
        state.handle = Some(timer.clone().start(self.delay));
    }
}

impl Drop for TakenTimer<'_> {
    fn drop(&mut self) {
        if let Some(timer) = self.timer.take() {
            timer.pool.give_back(timer.tag);
        }
    }
}

impl Drop for BioTimers {
    fn drop(&mut self) {
        // No bio comes in any more (the disk is gone); wait for those in
        // flight, whose tags then all come back.
        self.pool.wait_until(|tags| tags.all_free().then_some(()));
        for timer in self.timers.iter() {
            let handle = timer.state.lock().handle.take();
            // Cancels a stopped timer, waiting for a callback still
            // returning; drops the handle's reference on `timer`.
            drop(handle);
        }
        // The fields' drop then drops the last references on the timers,
        // then theirs on the pool.
    }
}
