// SPDX-License-Identifier: GPL-2.0

//! One rnull_split disk: blk-mq (`queue_mode=2`) or bio-based
//! (`queue_mode=0`, see `bio_queue.rs`), with its counters in debugfs.

use crate::{
    bad_sectors::{BadBlockCheck, BadSectors},
    bio_queue::{BioQueue, NullBio},
    debugfs,
    fault::Fault,
    params::{DeviceConfig, IrqMode, QueueMode},
    stats::Stats,
    store::Store,
    throttle::Throttle,
    timer::{self, RequestTimer},
    zoned::Cond,
    zones::DevZones,
};
use core::sync::atomic::{AtomicU32, Ordering};
use kernel::{
    block::{
        major::Major,
        mq::{
            self,
            gen_disk::{BioDisk, GenDisk, GenDiskBuilder},
            zoned::ZoneReport,
            HwQueue, HwQueueKind, HwQueues, IdleRequest, Operations, Refused, TagSet, TagSetFlags,
            TimeoutAction,
        },
    },
    new_mutex, new_spinlock,
    prelude::*,
    str::CString,
    sync::{aref::ARef, Arc, Mutex, SpinLock},
    time::{Delta, Instant, Monotonic},
    types::Owned,
};

/// The number of possible CPUs, the most hardware queues blk-mq will use.
pub(crate) use crate::store::KeptData;
pub(crate) use kernel::cpu::nr_cpu_ids;

/// What all devices of the module share: the module's debugfs directory and
/// C null_blk's global tag set (`shared_tags`). Clones refer to the same.
#[derive(Clone)]
pub(crate) struct Shared {
    debugfs: debugfs::Root,
    tag_set: Arc<SharedTagSet>,
    /// The module's `poll_queues`, the most poll queues a disk can change
    /// to at runtime (as C null_blk).
    poll_queues: u32,
    /// The module's major (`nullb` in `/proc/devices` for the `null_blk.ko`
    /// build, as C; `rnullb` for `rnull_split.ko`): a disk's minor is its
    /// index, the lowest free one when it is made, as C's IDA.
    major: Arc<Major>,
}

impl Shared {
    /// `module` is the module parameters' configuration, which the shared
    /// tag set follows.
    pub(crate) fn new(debugfs: debugfs::Root, module: &DeviceConfig) -> Result<Self> {
        let tag_set = Arc::pin_init(
            pin_init!(SharedTagSet {
                layout: TagLayout::of(module),
                set <- new_mutex!(None, "rnull_split:shared_tags"),
            }),
            GFP_KERNEL,
        )?;
        Ok(Self {
            debugfs,
            tag_set,
            poll_queues: module.poll_queues,
            major: Major::register(crate::names::MAJOR, 1)?,
        })
    }
}

/// The fault points of a device, as C null_blk's `timeout_config`,
/// `requeue_config` and `init_hctx_fault_config`: set from the module
/// parameters when the device (or its configfs directory) is made, then
/// its own; a configfs directory changes them through its
/// `timeout_inject/`, `requeue_inject/` and `init_hctx_fault_inject/`.
#[derive(Clone)]
pub(crate) struct DeviceFaults {
    /// `timeout`: requests dropped, to time out.
    pub(crate) timeout: Arc<Fault>,
    /// `requeue`: requests given back to be issued again.
    pub(crate) requeue: Arc<Fault>,
    /// `init_hctx`: hardware queue set-ups that fail.
    pub(crate) init_hctx: Arc<Fault>,
}

impl DeviceFaults {
    /// The fault points of device `name` with `config`.
    pub(crate) fn new(config: &DeviceConfig, name: &CStr) -> Result<Self> {
        Ok(Self {
            timeout: Arc::new(Fault::new(config.timeout_inject, seed(name, 1)), GFP_KERNEL)?,
            requeue: Arc::new(Fault::new(config.requeue_inject, seed(name, 2)), GFP_KERNEL)?,
            init_hctx: Arc::new(
                Fault::new(config.init_hctx_inject, seed(name, 3)),
                GFP_KERNEL,
            )?,
        })
    }
}

/// The tag set of the devices with `shared_tags`, made when the first of
/// them is, with the module parameters' queues, tags and flags (those of
/// the devices' own configurations are not used, as in C null_blk). Every
/// disk using it holds a reference; the last one to go frees it.
#[pin_data]
struct SharedTagSet {
    layout: TagLayout,
    #[pin]
    set: Mutex<Option<Arc<TagSet<NullQueue>>>>,
}

impl SharedTagSet {
    fn get(&self) -> Result<Arc<TagSet<NullQueue>>> {
        let mut set = self.set.lock();
        if let Some(set) = &*set {
            return Ok(set.clone());
        }
        let new = self.layout.new_tag_set()?;
        *set = Some(new.clone());
        Ok(new)
    }
}

/// What a tag set is made of.
#[derive(Clone, Copy)]
struct TagLayout {
    queues: HwQueues,
    depth: u32,
    flags: TagSetFlags,
}

impl TagLayout {
    /// The tag set `config` asks for (shared or not).
    fn of(config: &DeviceConfig) -> Self {
        let mut flags = TagSetFlags::empty();
        // Like C null_blk: a memory-backed device allocates its pages in
        // `queue_rq`, which may then sleep (`GFP_NOIO`).
        // A zoned device serves requests under a mutex (`zones.rs`).
        if config.blocking || config.memory_backed || config.zoned {
            flags = flags | TagSetFlags::BLOCKING;
        }
        if config.shared_tag_bitmap {
            flags = flags | TagSetFlags::TAG_HCTX_SHARED;
        }
        if config.no_sched {
            flags = flags | TagSetFlags::NO_SCHED_BY_DEFAULT;
        }
        Self {
            queues: HwQueues {
                default: config.submit_queues,
                poll: config.poll_queues,
            },
            depth: config.hw_queue_depth,
            flags,
        }
    }

    fn new_tag_set(&self) -> Result<Arc<TagSet<NullQueue>>> {
        Arc::pin_init(
            TagSet::new_with_hw_queues(self.queues, self.depth, self.flags),
            GFP_KERNEL,
        )
    }
}

/// A disk of either kind.
enum Disk {
    Mq {
        _disk: GenDisk<NullQueue>,
        tag_set: Arc<TagSet<NullQueue>>,
        /// `zoned=1`: the zones, which configfs changes too.
        zones: Option<Arc<DevZones>>,
        store: Option<Arc<Store>>,
        /// Whether `tag_set` is the shared one.
        shared: bool,
        /// The most poll queues the disk can have (it has a poll list for
        /// each hardware queue up to `nr_cpu_ids + max_poll`).
        max_poll: u32,
    },
    Bio {
        _disk: BioDisk<NullBio>,
    },
}

/// A disk and what it needs. Fields drop in order: the debugfs files go
/// before the disk, the counters they show last.
pub(crate) struct NullDevice {
    _debugfs: debugfs::Dir,
    disk: Disk,
    _stats: Arc<Stats>,
    /// `memory_backed=1`: the stored pages, which a configfs disk's
    /// directory keeps across power cycles ([`NullDevice::remove`]).
    store: Option<Arc<Store>>,
    /// The disk's index in the module's major (its minor), as C's `index`.
    index: u32,
}

/// What a configfs directory gives its disk: its fault points, its bad
/// blocks, and the pages its previous disk stored (taken by a memory-backed
/// disk, and put back if making the disk fails).
pub(crate) struct DirParts<'a> {
    pub(crate) faults: &'a DeviceFaults,
    pub(crate) badblocks: &'a Arc<BadSectors>,
    pub(crate) kept: &'a mut Option<KeptData>,
}

impl NullDevice {
    /// Create disk `name` (e.g. `rnullb0`, or a configfs directory's name)
    /// with `config` and add it to the system, its debugfs directory in
    /// `shared`'s and, with `shared_tags`, on `shared`'s tag set. A configfs
    /// disk gives its directory's parts (`dir`); a load-time disk gets
    /// fault points of its own from `config`. Requests that meet a bad
    /// range fail. Dropping the device removes the disk.
    pub(crate) fn new(
        name: core::fmt::Arguments<'_>,
        config: &DeviceConfig,
        shared: &Shared,
        dir: Option<DirParts<'_>>,
    ) -> Result<Self> {
        let name = CString::try_from_fmt(name)?;
        let (faults, badblocks, mut kept) = match dir {
            Some(d) => (d.faults.clone(), Some(d.badblocks.clone()), Some(d.kept)),
            None => (DeviceFaults::new(config, &name)?, None, None),
        };
        let stats = Arc::new(Stats::new()?, GFP_KERNEL)?;
        let store = if config.memory_backed {
            // `cache_size` MiB of 4 KiB cache pages
            let cache_pages =
                usize::try_from(config.cache_size_mb.saturating_mul(256)).map_err(|_| EINVAL)?;
            let data = kept.as_deref_mut().and_then(Option::take);
            Some(Arc::pin_init(
                Store::new(config.capacity_sectors, cache_pages, stats.clone(), data),
                GFP_KERNEL,
            )?)
        } else {
            None
        };
        Self::with_store(
            name,
            config,
            shared,
            faults,
            badblocks,
            stats,
            store.clone(),
        )
        .inspect_err(|_| {
            // the directory keeps its pages for the next power=1
            if let (Some(store), Some(kept)) = (store, kept) {
                *kept = Some(store.take_data());
            }
        })
    }

    /// [`NullDevice::new`] once the store is made.
    fn with_store(
        name: CString,
        config: &DeviceConfig,
        shared: &Shared,
        faults: DeviceFaults,
        badblocks: Option<Arc<BadSectors>>,
        stats: Arc<Stats>,
        store: Option<Arc<Store>>,
    ) -> Result<Self> {
        let number = shared.major.index(None)?;
        let index = number.index();
        let mut builder = GenDiskBuilder::new()
            .number(number)
            .capacity_sectors(config.capacity_sectors)
            .logical_block_size(config.block_size)?
            .physical_block_size(config.block_size)?
            .max_sectors(config.max_sectors)
            // As C null_blk: direct I/O from 2-byte aligned buffers, so a
            // segment may end inside a sector (the store copies bytes).
            .dma_alignment(1)?
            // Opening a disk pins the module: rmmod fails with EBUSY.
            .owner(kernel::module::this_module::<crate::LocalModule>())
            // C null_blk's request timeout (5 s), after which requests left
            // to time out (`timeout`) end with `ETIMEDOUT`.
            .rq_timeout(5000)
            // C null_blk's discard limit (`UINT_MAX >> 9`).
            .max_hw_discard_sectors(if config.discard { u32::MAX >> 9 } else { 0 })
            // C null_blk's `cache_size` and `fua`: a volatile write cache.
            .write_cache(config.cache_size_mb > 0)
            .fua(config.fua)
            // C null_blk's `rotational`: `BLK_FEAT_ROTATIONAL`.
            .rotational(config.rotational);
        let badblocks = badblocks.map(|list| {
            BadBlockCheck::new(
                list,
                config.badblocks_once,
                config.badblocks_partial_io,
                config.block_size,
            )
        });
        let zones = if config.zoned {
            let (zones, limits) = DevZones::new(config)?;
            builder = builder.zoned(limits);
            Some(zones)
        } else {
            None
        };
        let store_kept = store.clone();
        let disk = match config.queue_mode {
            QueueMode::Mq => {
                let (layout, tagset) = if config.shared_tags {
                    (shared.tag_set.layout, shared.tag_set.get()?)
                } else {
                    let layout = TagLayout::of(config);
                    (layout, layout.new_tag_set()?)
                };
                if (store.is_some() || zones.is_some())
                    && !layout.flags.contains(TagSetFlags::BLOCKING)
                {
                    let what = if zones.is_some() {
                        "zoned"
                    } else {
                        "memory_backed"
                    };
                    pr_err!(
                        "{}: invalid {}=1 with shared_tags=1: the shared tag set is not \
                         blocking (set the blocking or memory_backed parameter)\n",
                        &*name,
                        what
                    );
                    return Err(EINVAL);
                }
                // A list for every hardware queue there can be, indexed as
                // they are, while `submit_queues` and `poll_queues` may
                // change (`update_hw_queues`), to the module's
                // `poll_queues` at most. None if there can be no poll queue.
                let max_poll = if layout.queues.poll == 0 {
                    0
                } else {
                    layout.queues.poll.max(shared.poll_queues)
                };
                let nr_lists = if max_poll == 0 {
                    0
                } else {
                    nr_cpu_ids().max(layout.queues.default) + max_poll
                };
                let mut poll_lists = KVec::with_capacity(nr_lists as usize, GFP_KERNEL)?;
                for _ in 0..nr_lists {
                    poll_lists.push(PollList::new(layout.depth)?, GFP_KERNEL)?;
                }
                let queue_data = KBox::new(
                    QueueData {
                        irqmode: config.irqmode,
                        completion: timer::delay(config.completion_nsec)?,
                        stats: stats.clone(),
                        store: store.clone(),
                        poll_lists,
                        faults,
                        requeue_selection: AtomicU32::new(0),
                        zones: zones.clone(),
                        badblocks,
                        throttle: (config.mbps != 0).then(|| Throttle::new(config.mbps)),
                        start: Instant::now(),
                    },
                    GFP_KERNEL,
                )?;
                Disk::Mq {
                    _disk: builder.build(fmt!("{}", &*name), tagset.clone(), queue_data)?,
                    tag_set: tagset,
                    zones,
                    store,
                    shared: config.shared_tags,
                    max_poll,
                }
            }
            QueueMode::Bio => {
                let queue = Arc::pin_init(
                    BioQueue::new(config, stats.clone(), store, badblocks)?,
                    GFP_KERNEL,
                )?;
                Disk::Bio {
                    _disk: builder.build_bio(fmt!("{}", &*name), queue)?,
                }
            }
        };
        Ok(Self {
            _debugfs: debugfs::Dir::with_stats(&shared.debugfs, &name, stats.clone()),
            disk,
            _stats: stats,
            store: store_kept,
            index,
        })
    }

    /// The disk's index in the module's major: its minor.
    pub(crate) fn index(&self) -> u32 {
        self.index
    }

    /// Remove the disk; its stored pages, if it has any, are returned for
    /// the directory to keep (its cache's are dropped, as C null_blk drops
    /// them at `power=0`).
    pub(crate) fn remove(self) -> Option<KeptData> {
        let store = self.store.clone();
        drop(self);
        store.map(|s| s.take_data())
    }

    /// Put the zone of `sector` in condition `cond` (read-only or offline),
    /// or back to empty (configfs `zone_readonly` and `zone_offline`). A
    /// disk that is not zoned, a sector past its end or in a conventional
    /// zone: `EINVAL` and a message naming disk `name`.
    pub(crate) fn set_zone_cond(&self, name: &CStr, sector: u64, cond: Cond) -> Result {
        let Disk::Mq {
            zones: Some(zones),
            store,
            ..
        } = &self.disk
        else {
            pr_err!("{}: not a zoned disk\n", name);
            return Err(EINVAL);
        };
        zones
            .set_cond(sector, cond, store.as_deref())
            .inspect_err(|_| {
                pr_err!(
                    "{}: sector {} is past the end or in a conventional zone\n",
                    name,
                    sector
                );
            })
    }

    /// Change the disk's hardware queues to `submit_queues` default and
    /// `poll_queues` poll queues, as C null_blk's configfs does on a
    /// powered device (`nullb_update_nr_hw_queues`). The caller has checked
    /// each number alone; a combination the disk cannot take fails with
    /// `EINVAL` and a message naming disk `name`, a failure of blk-mq with
    /// `ENOMEM` (the disk then keeps the queues it had).
    pub(crate) fn update_hw_queues(
        &self,
        name: &CStr,
        submit_queues: u32,
        poll_queues: u32,
    ) -> Result {
        let Disk::Mq {
            tag_set,
            shared,
            max_poll,
            ..
        } = &self.disk
        else {
            pr_err!(
                "{}: queue_mode=0 has no hardware queues to change
",
                name
            );
            return Err(EINVAL);
        };
        // As C null_blk: the shared tag set's queues follow the module
        // parameters, not one device.
        if *shared {
            pr_err!(
                "{}: the queues of a shared_tags=1 disk cannot change
",
                name
            );
            return Err(EINVAL);
        }
        if poll_queues > *max_poll {
            pr_err!(
                "{}: invalid poll_queues={}: at most {} on this disk (the module's poll_queues, \
                 0 if the disk was made without)\n",
                name,
                poll_queues,
                max_poll
            );
            return Err(EINVAL);
        }
        tag_set.update_hw_queues(HwQueues {
            default: submit_queues,
            poll: poll_queues,
        })
    }
}

/// Per-queue data of a blk-mq device.
pub(crate) struct QueueData {
    irqmode: IrqMode,
    /// `completion_nsec`, for `irqmode=2`.
    completion: Delta,
    stats: Arc<Stats>,
    store: Option<Arc<Store>>,
    /// The requests of the poll queues, a list per hardware queue index
    /// (the poll queues follow the default ones; their numbers may change).
    poll_lists: KVec<Pin<KBox<PollList>>>,
    /// `timeout`, `requeue` and `init_hctx` fault injection.
    faults: DeviceFaults,
    /// Alternates injected requeues between the two ways, as C null_blk.
    requeue_selection: AtomicU32,
    /// `zoned=1`: the zones.
    zones: Option<Arc<DevZones>>,
    /// A configfs disk's `badblocks`.
    badblocks: Option<BadBlockCheck>,
    /// `mbps`: the bandwidth limit.
    throttle: Option<Throttle>,
    /// When the disk was made, the time base of `throttle`.
    start: Instant<Monotonic>,
}

/// A seed for the fault injection draws of disk `name`: fixed per disk and
/// fault point, so that a run can be repeated.
fn seed(name: &CStr, point: u64) -> u64 {
    // FNV-1a
    name.to_bytes()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325 ^ point, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        })
}

impl QueueData {
    /// The list of poll queue `hw_queue`.
    fn poll_list(&self, hw_queue: HwQueue) -> Option<&PollList> {
        self.poll_lists
            .get(hw_queue.index() as usize)
            .map(|list| &**list)
    }
}

/// The requests issued to one poll queue, in order, until it is polled
/// (C null_blk's `nullb_queue.poll_list`). There is room for every tag of
/// the queue, so adding a request never allocates.
#[pin_data]
struct PollList {
    #[pin]
    requests: SpinLock<KVec<Owned<mq::Request<NullQueue>>>>,
}

impl PollList {
    fn new(depth: u32) -> Result<Pin<KBox<Self>>> {
        let requests = KVec::with_capacity(depth as usize, GFP_KERNEL)?;
        KBox::pin_init(
            pin_init!(Self {
                requests <- new_spinlock!(requests, "rnull_split:poll_list"),
            }),
            GFP_KERNEL,
        )
    }

    /// Keep `rq` until the queue is polled.
    fn add(&self, rq: Owned<mq::Request<NullQueue>>) {
        // A queue has no more requests in flight than tags, so this fits;
        // if it ever did not, the request is ended now rather than lost.
        if let Err(e) = self.requests.lock().push_within_capacity(rq) {
            end(e.0);
        }
    }

    /// End every request kept; returns how many.
    fn end_all(&self) -> u32 {
        let mut n = 0;
        // Ended under the lock, as C virtio_blk ends requests under its
        // queue's lock: ending a request does not issue another one here.
        for rq in self.requests.lock().drain_all() {
            end(rq);
            n += 1;
        }
        n
    }
}

/// The blk-mq operations of a [`NullDevice`].
pub(crate) struct NullQueue;

#[vtable]
impl Operations for NullQueue {
    type QueueData = KBox<QueueData>;
    /// The `irqmode=2` timer (`timer.rs`), as C null_blk's `cmd->timer`.
    type RequestData = RequestTimer;
    type TagSetData = ();

    fn new_request_data(_tag_set_data: &()) -> impl PinInit<RequestTimer, Error> {
        RequestTimer::new()
    }

    // Like C null_blk's `null_queue_rqs`: take a whole plug in one call.
    const QUEUE_RQS: bool = true;

    #[inline(always)]
    fn queue_rq(
        queue_data: &QueueData,
        rq: Owned<IdleRequest<Self>>,
        _is_last: bool,
    ) -> Result<(), Refused<Self>> {
        if queue_data.faults.requeue.should_fail() {
            queue_data.stats.requeued.inc();
            // As C null_blk: alternate between the block layer's busy path
            // and a requeue by the driver.
            if queue_data.requeue_selection.fetch_add(1, Ordering::Relaxed) & 1 == 0 {
                // ENOMEM is `BLK_STS_RESOURCE`: blk-mq runs the queue again
                // shortly, as for C null_blk's `BLK_STS_RESOURCE`.
                return Err(Refused::new(rq, ENOMEM));
            }
            rq.requeue();
            return Ok(());
        }
        // As C null_blk's `mbps`; C stops the hardware queues until its
        // timer starts them, here blk-mq issues the request again shortly
        // (`ENOMEM` is `BLK_STS_RESOURCE`).
        if let Some(throttle) = &queue_data.throttle {
            let now = u64::try_from(queue_data.start.elapsed().as_nanos()).unwrap_or(0);
            if !throttle.admit(rq.bytes().into(), now) {
                queue_data.stats.throttled.inc();
                return Err(Refused::new(rq, ENOMEM));
            }
        }
        // As C null_blk, after the requeue and throttling checks.
        let rq = rq.start();
        let hw_queue = rq.hw_queue();
        // As C null_blk: a request picked to time out is dropped (lost: the
        // driver keeps no handle), unless polled; `timeout` below ends it
        // when the block layer says so.
        if hw_queue.kind() != HwQueueKind::Poll && queue_data.faults.timeout.should_fail() {
            rq.data_ref().set_dropped(true);
            drop(rq);
            return Ok(());
        }
        // The tag set is `BLOCKING` for a memory-backed or zoned device, so
        // this may sleep for memory or the zones' lock. If there is no
        // memory even so, the request is requeued, as C null_blk's
        // `BLK_STS_RESOURCE`; it is served again from the start, which
        // rewrites what was copied already.
        let bad = queue_data.badblocks.as_ref();
        let status = match (&queue_data.zones, &queue_data.store) {
            (Some(zones), store) => zones.serve(&rq, store.as_deref(), bad),
            (None, store) => serve_data(&rq, store.as_deref(), bad, u64::MAX),
        };
        match status {
            Ok(()) => {}
            Err(e) if e == ENOMEM => return Err(Refused::started(rq, e)),
            Err(e) => {
                end_with(rq, Err(e));
                return Ok(());
            }
        }
        queue_data.stats.requests.inc();
        queue_data.stats.bytes.add(rq.bytes().into());
        if rq.command() == mq::Command::Flush {
            queue_data.stats.flushes.inc();
        }
        // As C null_blk: a polled request is done when its queue is polled,
        // whatever `irqmode` says.
        if hw_queue.kind() == HwQueueKind::Poll {
            if let Some(list) = queue_data.poll_list(hw_queue) {
                list.add(rq);
                return Ok(());
            }
        }
        match queue_data.irqmode {
            IrqMode::Timer => timer::complete_rq_later(rq, queue_data.completion),
            IrqMode::Softirq => rq.complete(),
            IrqMode::None => end(rq),
        }
        Ok(())
    }

    fn commit_rqs(_queue_data: &QueueData, _hw_queue: mq::HwQueue) {}

    fn timeout(queue_data: &QueueData, rq: ARef<mq::Request<Self>>) -> TimeoutAction {
        // Only a request dropped in `queue_rq` to time out comes here: one
        // on its way (a timer, a poll list) is owned there, and blk-mq gives
        // it another period.
        if !rq.data_ref().set_dropped(false) {
            return TimeoutAction::ResetTimer;
        }
        match mq::Request::try_from_shared(rq) {
            Ok(rq) => {
                pr_info!("rq at sector {} timed out\n", rq.sector());
                queue_data.stats.timed_out.inc();
                end_with(rq, Err(ETIMEDOUT));
                TimeoutAction::Done
            }
            // The driver keeps no `ARef`, so this cannot happen; if it did,
            // the holder ends it.
            Err(rq) => {
                rq.data_ref().set_dropped(true);
                TimeoutAction::ResetTimer
            }
        }
    }

    fn report_zones(
        queue_data: &QueueData,
        sector: u64,
        nr_zones: u32,
        report: &mut ZoneReport<'_>,
    ) -> Result {
        match &queue_data.zones {
            Some(zones) => zones.report(sector, nr_zones, report),
            None => Err(EOPNOTSUPP),
        }
    }

    fn poll(queue_data: &QueueData, hw_queue: HwQueue) -> u32 {
        let n = queue_data.poll_list(hw_queue).map_or(0, PollList::end_all);
        if n > 0 {
            queue_data.stats.polled.add(n.into());
        }
        n
    }

    fn complete(rq: Owned<mq::Request<Self>>) {
        end(rq);
    }

    fn init_hctx(queue_data: &QueueData, _hctx_idx: u32) -> Result {
        // As C null_blk's `null_init_hctx()`.
        if queue_data.faults.init_hctx.should_fail() {
            return Err(EFAULT);
        }
        Ok(())
    }
}

/// Serve the data of `rq` (on a zoned disk, anything but a write or zone
/// command): move it with `store` if the disk is memory-backed, and fail it
/// (after the sectors before, with `badblocks_partial_io`) if it meets a
/// range of `bad`. A read gets stored data for its first `valid` bytes and
/// 0xFF bytes after them (past a zone's write pointer; `u64::MAX` for all).
pub(crate) fn serve_data(
    rq: &mq::Request<NullQueue>,
    store: Option<&Store>,
    bad: Option<&BadBlockCheck>,
    valid: u64,
) -> Result {
    let sectors = match bad.and_then(|bad| bad.meets_rq(rq)) {
        Some(sectors) => sectors,
        None => {
            return store.map_or(Ok(()), |s| s.transfer_rq(rq, u64::MAX, valid, GFP_NOIO));
        }
    };
    if let Some(store) = store {
        store.transfer_rq(rq, sectors, valid, GFP_NOIO)?;
    }
    Err(EIO)
}

/// End `rq` successfully.
#[inline(always)]
pub(crate) fn end(rq: Owned<mq::Request<NullQueue>>) {
    end_with(rq, Ok(()));
}

/// End `rq` with `status`.
#[inline(always)]
fn end_with(rq: Owned<mq::Request<NullQueue>>, status: Result) {
    match rq.data_ref().take_append_sector() {
        Some(sector) => rq.end_zone_append(sector, status),
        None => rq.end(status),
    }
}
