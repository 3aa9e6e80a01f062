// SPDX-License-Identifier: GPL-2.0

//! The data of a memory-backed device (`memory_backed=1`).
//!
//! Like C null_blk's backing store: 4 KiB pages allocated on first write, in
//! an XArray indexed by page number (C's radix tree), so a device of any
//! size costs only what was written. Never-written ranges read as zeroes;
//! discard and write-zeroes drop whole pages and zero partial ones. Pages
//! are allocated outside the lock and only inserted under it.
//!
//! With `cache_size`, as C null_blk's, a write-back cache of that many
//! pages sits in front: writes land in cache pages (a copy of the stored
//! page, then the new bytes), reads see the cache first, a flush moves
//! every cache page to the store, and a write that finds the cache full
//! first writes back its lowest page. A FUA write goes to the store, and to
//! the cache page it also has, so that the two agree.
//!
//! Locking: the XArray's own lock guards the stored pages; the cache's
//! spinlock guards the cache and, taken first, every use of the store that
//! must agree with it, so that a reader never falls between a cache page
//! and the stored page it replaces. Without a cache it is never taken. A
//! page stored while the cache lock is held may need an XArray node, which
//! is then allocated without sleeping (`GFP_ATOMIC`): failing that, the
//! cache page stays and the flush or write fails with `ENOMEM`.

use kernel::{
    alloc::{flags::GFP_ATOMIC, Flags},
    block::{bio::Bio, mq::Command},
    new_spinlock,
    prelude::*,
    rbtree::{RBTree, RBTreeNodeReservation},
    sync::{Arc, SpinLock},
    xarray::{self, AllocKind, XArray},
};

use crate::stats::Stats;

const PAGE: usize = 4096;
const PAGE_SHIFT: u32 = 12;
const SECTOR_SHIFT: u32 = 9;
const SECTOR_SIZE: u64 = 1 << SECTOR_SHIFT;

type Page = KBox<[u8; PAGE]>;

/// The stored pages, locked.
type Data<'a> = xarray::Guard<'a, Page>;

/// The pages of one device.
#[pin_data]
pub(crate) struct Store {
    /// The stored pages, by page index.
    #[pin]
    data: XArray<Page>,
    /// The write-back cache; empty, and never locked, without one.
    #[pin]
    cache: SpinLock<Cache>,
    /// Cache pages at most; 0 for no cache.
    cache_limit: usize,
    /// Counts the cache pages written back (`cache_writebacks`).
    stats: Arc<Stats>,
}

/// What [`Store::cache`] protects.
///
/// # Invariants
///
/// Every value of `pages` is `Some` whenever the lock is free (a page is
/// only taken out while it is being written back, under the lock), and
/// `cached` is the number of entries of `pages`.
struct Cache {
    /// The write-back cache's pages, newer than the store's.
    pages: RBTree<u64, Option<Page>>,
    /// `pages`' length.
    cached: usize,
}

impl Cache {
    /// The cache page `idx`, if there is one.
    fn get(&self, idx: u64) -> Option<&[u8; PAGE]> {
        self.pages.get(&idx)?.as_deref()
    }

    /// The cache page `idx`, writable, if there is one.
    fn get_mut(&mut self, idx: u64) -> Option<&mut [u8; PAGE]> {
        self.pages.get_mut(&idx)?.as_deref_mut()
    }

    /// Move the lowest cache page to the store `data`, freeing the stored
    /// page it replaces; `Ok(false)` if the cache is empty.
    fn write_back_one(&mut self, data: &mut Data<'_>) -> Result<bool> {
        let Some(mut cursor) = self.pages.cursor_front_mut() else {
            return Ok(false);
        };
        let (&idx, slot) = cursor.current_mut();
        let Some(page) = slot.take() else {
            // Unreachable by the type invariant; treated as a write-back.
            drop(cursor.remove_current());
            self.cached -= 1;
            return Ok(true);
        };
        match data.store(index(idx)?, page, GFP_ATOMIC) {
            Ok(replaced) => {
                drop(replaced);
                drop(cursor.remove_current());
                self.cached -= 1;
                Ok(true)
            }
            Err(e) => {
                // INVARIANT: the page goes back before the lock is dropped.
                *slot = Some(e.value);
                Err(e.error)
            }
        }
    }
}

/// Where byte `pos` of the device lives: page index and offset in it, and how
/// many of `left` bytes fit in that page.
fn locate(pos: u64, left: usize) -> (u64, usize, usize) {
    let idx = pos >> PAGE_SHIFT;
    let off = (pos & (PAGE as u64 - 1)) as usize;
    (idx, off, left.min(PAGE - off))
}

/// The XArray index of page `idx` (always itself on 64-bit machines).
#[inline]
fn index(idx: u64) -> Result<usize> {
    usize::try_from(idx).map_err(|_| EINVAL)
}

/// Put `page` at `idx` in the store unless one is there already, then run
/// `fill` on the page at `idx`. `flags` may let [`xarray::Guard::store`]
/// drop the lock to allocate a node: a page another writer stored
/// meanwhile is then replaced by ours only after its bytes are copied
/// into ours, all before the lock is dropped again, so no reader sees a
/// page without them.
fn insert_and_fill(
    data: &mut Data<'_>,
    idx: usize,
    page: Page,
    flags: Flags,
    fill: &mut impl FnMut(&mut [u8; PAGE]) -> Result,
) -> Result {
    if data.get(idx).is_none() {
        let theirs = data.store(idx, page, flags)?;
        if let (Some(theirs), Some(ours)) = (theirs, data.get_mut(idx)) {
            ours.copy_from_slice(&theirs[..]);
        }
    }
    match data.get_mut(idx) {
        Some(page) => fill(page),
        None => Err(ENOMEM),
    }
}

impl Store {
    /// A store with a write-back cache of `cache_pages` pages (0: none),
    /// counting its write-backs in `stats`.
    pub(crate) fn new(cache_pages: usize, stats: Arc<Stats>) -> impl PinInit<Self> {
        let cache = Cache {
            pages: RBTree::new(),
            cached: 0,
        };
        pin_init!(Self {
            data <- XArray::new(AllocKind::Alloc),
            cache <- new_spinlock!(cache, "rnull_split:cache"),
            cache_limit: cache_pages,
            stats,
        })
    }

    /// Serve a flush: every cache page goes to the store.
    pub(crate) fn flush(&self) -> Result {
        if self.cache_limit == 0 {
            return Ok(());
        }
        let mut cache = self.cache.lock();
        let mut data = self.data.lock();
        let mut n = 0;
        let r = loop {
            match cache.write_back_one(&mut data) {
                Ok(true) => n += 1,
                Ok(false) => break Ok(()),
                Err(e) => break Err(e),
            }
        };
        drop(data);
        drop(cache);
        Stats::add(&self.stats.cache_writebacks, n);
        r
    }

    /// Serve the data of `bio` (a read or a write; other operations carry
    /// no data), allocating with `flags`.
    pub(crate) fn transfer(&self, bio: &Bio, flags: Flags) -> Result {
        self.transfer_at(bio, bio.sector(), u64::MAX, false, flags)
            .map(|_| ())
    }

    /// Serve the first `sectors` sectors of `bio` only (a bio that met a
    /// bad sector, `badblocks_partial_io`).
    pub(crate) fn transfer_part(&self, bio: &Bio, sectors: u64, flags: Flags) -> Result {
        let limit = sectors.saturating_mul(SECTOR_SIZE);
        self.transfer_at(bio, bio.sector(), limit, false, flags)
            .map(|_| ())
    }

    /// Serve the data of every bio of `rq` as if the request started at
    /// `sector` (a zone append's is the write pointer, not its own).
    pub(crate) fn transfer_rq_at<T: kernel::block::mq::Operations>(
        &self,
        rq: &kernel::block::mq::Request<T>,
        sector: u64,
        flags: Flags,
    ) -> Result {
        self.transfer_rq_part(rq, sector, u64::MAX, flags)
    }

    /// Serve the first `sectors` sectors of `rq`'s data only, as if the
    /// request started at `sector` (a request that met a bad sector,
    /// `badblocks_partial_io`; `u64::MAX` for all).
    pub(crate) fn transfer_rq_part<T: kernel::block::mq::Operations>(
        &self,
        rq: &kernel::block::mq::Request<T>,
        sector: u64,
        sectors: u64,
        flags: Flags,
    ) -> Result {
        if rq.command() == Command::Flush {
            return self.flush();
        }
        let base = rq.sector();
        let fua = rq.is_fua();
        let mut left = sectors.saturating_mul(SECTOR_SIZE);
        for bio in rq.bios() {
            if left == 0 {
                break;
            }
            left -= self.transfer_at(bio, sector + (bio.sector() - base), left, fua, flags)?;
        }
        Ok(())
    }

    /// Forget `sectors` sectors from `sector` (a reset zone).
    pub(crate) fn discard_sectors(&self, sector: u64, sectors: u64) {
        self.discard(sector << SECTOR_SHIFT, sectors << SECTOR_SHIFT);
    }

    /// Serve the data of `bio` at `sector`, at most `limit` bytes of it,
    /// a write past the cache if `fua`; returns how many bytes it served.
    fn transfer_at(
        &self,
        bio: &Bio,
        sector: u64,
        limit: u64,
        fua: bool,
        flags: Flags,
    ) -> Result<u64> {
        let mut pos = sector << SECTOR_SHIFT;
        let write = match bio.command() {
            Command::Write | Command::ZoneAppend => true,
            Command::Read => false,
            Command::Discard | Command::WriteZeroes | Command::SecureErase => {
                let len = u64::from(bio.size()).min(limit);
                self.discard(pos, len);
                return Ok(len);
            }
            Command::Flush => {
                self.flush()?;
                return Ok(0);
            }
            _ => return Ok(0),
        };
        let mut served = 0u64;
        for seg in bio.page_segments() {
            if served == limit {
                break;
            }
            let mut at = 0usize;
            // `limit - served` is below the segment's `u32` length here.
            let len = u64::from(seg.len()).min(limit - served) as usize;
            while at < len {
                let (idx, off, n) = locate(pos, len - at);
                if write {
                    let fill = |page: &mut [u8; PAGE]| seg.copy_to(at, &mut page[off..off + n]);
                    if self.cache_limit == 0 || fua {
                        self.write_chunk(idx, fill, fua, flags)?;
                    } else {
                        self.write_cached(idx, fill, flags)?;
                    }
                } else {
                    let copy = |page: Option<&[u8; PAGE]>| match page {
                        Some(page) => seg.copy_from(at, &page[off..off + n]),
                        None => seg.zero(at, n),
                    };
                    if self.cache_limit == 0 {
                        copy(self.data.lock().get(index(idx)?))?;
                    } else {
                        let cache = self.cache.lock();
                        match cache.get(idx) {
                            Some(page) => copy(Some(page))?,
                            None => copy(self.data.lock().get(index(idx)?))?,
                        }
                    }
                }
                at += n;
                pos += n as u64;
            }
            served += len as u64;
        }
        Ok(served)
    }

    /// Run `fill` on stored page `idx` under the lock, allocating the page
    /// first if it does not exist yet; with `also_cached` on its cache page
    /// too, if there is one (a FUA write).
    fn write_chunk(
        &self,
        idx: u64,
        mut fill: impl FnMut(&mut [u8; PAGE]) -> Result,
        also_cached: bool,
        flags: Flags,
    ) -> Result {
        let i = index(idx)?;
        if !also_cached || self.cache_limit == 0 {
            if let Some(page) = self.data.lock().get_mut(i) {
                return fill(page);
            }
            // Allocate outside the lock; another writer may win the race,
            // then ours is dropped.
            let page: Page = KBox::init(pin_init::init_zeroed(), flags)?;
            return insert_and_fill(&mut self.data.lock(), i, page, flags, &mut fill);
        }
        // A FUA write with a cache: the stored page and the cache page change
        // together, under the cache lock (so no sleeping allocation).
        let mut page = None;
        loop {
            let mut cache = self.cache.lock();
            let mut data = self.data.lock();
            let r = match (data.get_mut(i), page.take()) {
                (Some(stored), _) => fill(stored),
                (None, Some(page)) => insert_and_fill(&mut data, i, page, GFP_ATOMIC, &mut fill),
                (None, None) => {
                    drop(data);
                    drop(cache);
                    page = Some(KBox::init(pin_init::init_zeroed(), flags)?);
                    continue;
                }
            };
            return match (r, cache.get_mut(idx)) {
                (Ok(()), Some(cached)) => fill(cached),
                (r, _) => r,
            };
        }
    }

    /// Run `fill` on cache page `idx` under the lock, making it first if
    /// the cache has none: a copy of the stored page, after writing back
    /// the lowest cache page if the cache is full.
    fn write_cached(
        &self,
        idx: u64,
        mut fill: impl FnMut(&mut [u8; PAGE]) -> Result,
        flags: Flags,
    ) -> Result {
        if let Some(page) = self.cache.lock().get_mut(idx) {
            return fill(page);
        }
        // Allocate outside the lock; another writer may win the race, then
        // ours is dropped.
        let mut page: Page = KBox::init(pin_init::init_zeroed(), flags)?;
        let reservation = RBTreeNodeReservation::new(flags)?;
        let mut cache = self.cache.lock();
        if cache.get(idx).is_none() {
            let mut data = self.data.lock();
            if cache.cached >= self.cache_limit {
                cache.write_back_one(&mut data)?;
                Stats::inc(&self.stats.cache_writebacks);
            }
            if let Some(stored) = data.get(index(idx)?) {
                page.copy_from_slice(&stored[..]);
            }
            drop(data);
            cache.pages.insert(reservation.into_node(idx, Some(page)));
            cache.cached += 1;
        }
        match cache.get_mut(idx) {
            Some(page) => fill(page),
            None => Err(ENOMEM),
        }
    }

    /// Forget `len` bytes from byte `pos`: whole pages are freed, partial
    /// ones zeroed.
    fn discard(&self, mut pos: u64, len: u64) {
        let end = pos + len;
        while pos < end {
            let (idx, off, n) = locate(pos, (end - pos).min(PAGE as u64) as usize);
            let Ok(i) = index(idx) else {
                // Beyond what an XArray indexes: nothing was stored there.
                return;
            };
            let mut cache = (self.cache_limit != 0).then(|| self.cache.lock());
            let mut data = self.data.lock();
            // Whole pages are freed after the locks are dropped.
            let freed = if n == PAGE {
                let cached = cache.as_mut().and_then(|c| c.pages.remove(&idx));
                if let (Some(c), Some(_)) = (cache.as_mut(), &cached) {
                    c.cached -= 1;
                }
                (data.remove(i), cached)
            } else {
                if let Some(page) = data.get_mut(i) {
                    page[off..off + n].fill(0);
                }
                if let Some(page) = cache.as_mut().and_then(|c| c.get_mut(idx)) {
                    page[off..off + n].fill(0);
                }
                (None, None)
            };
            drop(data);
            drop(cache);
            drop(freed);
            pos += n as u64;
        }
    }
}
