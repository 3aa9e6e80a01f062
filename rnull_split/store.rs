// SPDX-License-Identifier: GPL-2.0

//! The data of a memory-backed device (`memory_backed=1`).
//!
//! Like C null_blk's backing store: 4 KiB pages allocated on first write, in
//! a tree indexed by page number, so a device of any size costs only what was
//! written. Never-written ranges read as zeroes; discard and write-zeroes
//! drop whole pages and zero partial ones. Pages are allocated outside the
//! lock and only inserted under it.
//!
//! With `cache_size`, as C null_blk's, a write-back cache of that many
//! pages sits in front: writes land in cache pages (a copy of the stored
//! page, then the new bytes), reads see the cache first, a flush moves
//! every cache page to the store, and a write that finds the cache full
//! first writes back its lowest page. A FUA write goes to the store, and to
//! the cache page it also has, so that the two agree.

use kernel::{
    alloc::Flags,
    block::{bio::Bio, mq::Command},
    new_spinlock,
    prelude::*,
    rbtree::{RBTree, RBTreeNode, RBTreeNodeReservation},
    sync::{Arc, SpinLock},
};

use crate::stats::Stats;

const PAGE: usize = 4096;
const PAGE_SHIFT: u32 = 12;
const SECTOR_SHIFT: u32 = 9;
const SECTOR_SIZE: u64 = 1 << SECTOR_SHIFT;

type Page = KBox<[u8; PAGE]>;

/// The pages of one device.
#[pin_data]
pub(crate) struct Store {
    #[pin]
    pages: SpinLock<Pages>,
    /// Cache pages at most; 0 for no cache.
    cache_limit: usize,
    /// Counts the cache pages written back (`cache_writebacks`).
    stats: Arc<Stats>,
}

/// What [`Store::pages`] protects.
struct Pages {
    /// The stored pages.
    data: RBTree<u64, Page>,
    /// The write-back cache's pages, newer than `data`'s.
    cache: RBTree<u64, Page>,
    /// `cache`'s length.
    cached: usize,
}

impl Pages {
    /// Move every cache page to the store, freeing the pages they
    /// replace; returns how many it moved.
    fn flush(&mut self) -> u64 {
        let mut n = 0;
        while let Some(cursor) = self.cache.cursor_front_mut() {
            let (_, node) = cursor.remove_current();
            self.cached -= 1;
            n += 1;
            drop(self.data.insert(node));
        }
        n
    }

    /// Write back the lowest cache page.
    fn write_back_one(&mut self) -> Option<RBTreeNode<u64, Page>> {
        let (_, node) = self.cache.cursor_front_mut()?.remove_current();
        self.cached -= 1;
        self.data.insert(node)
    }
}

/// Where byte `pos` of the device lives: page index and offset in it, and how
/// many of `left` bytes fit in that page.
fn locate(pos: u64, left: usize) -> (u64, usize, usize) {
    let idx = pos >> PAGE_SHIFT;
    let off = (pos & (PAGE as u64 - 1)) as usize;
    (idx, off, left.min(PAGE - off))
}

impl Store {
    /// A store with a write-back cache of `cache_pages` pages (0: none),
    /// counting its write-backs in `stats`.
    pub(crate) fn new(cache_pages: usize, stats: Arc<Stats>) -> impl PinInit<Self> {
        let pages = Pages {
            data: RBTree::new(),
            cache: RBTree::new(),
            cached: 0,
        };
        pin_init!(Self {
            pages <- new_spinlock!(pages, "rnull_split:store"),
            cache_limit: cache_pages,
            stats,
        })
    }

    /// Serve a flush: every cache page goes to the store.
    pub(crate) fn flush(&self) {
        let n = self.pages.lock().flush();
        Stats::add(&self.stats.cache_writebacks, n);
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
            self.flush();
            return Ok(());
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
                self.flush();
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
                    let pages = self.pages.lock();
                    match pages.cache.get(&idx).or_else(|| pages.data.get(&idx)) {
                        Some(page) => seg.copy_from(at, &page[off..off + n])?,
                        None => seg.zero(at, n)?,
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
        let mut fill_both = |pages: &mut Pages| -> Option<Result> {
            let page = pages.data.get_mut(&idx)?;
            let r = fill(page);
            if also_cached && r.is_ok() {
                if let Some(page) = pages.cache.get_mut(&idx) {
                    return Some(fill(page));
                }
            }
            Some(r)
        };
        if let Some(r) = fill_both(&mut self.pages.lock()) {
            return r;
        }
        // Allocate outside the lock; another writer may win the race, then
        // ours is dropped.
        let page: Page = KBox::init(pin_init::init_zeroed(), flags)?;
        let node = RBTreeNode::new(idx, page, flags)?;
        let mut pages = self.pages.lock();
        if pages.data.get(&idx).is_none() {
            pages.data.insert(node);
        }
        fill_both(&mut pages).unwrap_or(Err(ENOMEM))
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
        if let Some(page) = self.pages.lock().cache.get_mut(&idx) {
            return fill(page);
        }
        // Allocate outside the lock; another writer may win the race, then
        // ours is dropped.
        let mut page: Page = KBox::init(pin_init::init_zeroed(), flags)?;
        let reservation = RBTreeNodeReservation::new(flags)?;
        let mut pages = self.pages.lock();
        let mut replaced = None;
        if pages.cache.get(&idx).is_none() {
            if pages.cached >= self.cache_limit {
                replaced = pages.write_back_one();
                Stats::inc(&self.stats.cache_writebacks);
            }
            if let Some(stored) = pages.data.get(&idx) {
                page.copy_from_slice(&stored[..]);
            }
            pages.cache.insert(reservation.into_node(idx, page));
            pages.cached += 1;
        }
        let r = match pages.cache.get_mut(&idx) {
            Some(page) => fill(page),
            None => Err(ENOMEM),
        };
        drop(pages);
        // A stored page the write-back replaced, freed after the lock.
        drop(replaced);
        r
    }

    /// Forget `len` bytes from byte `pos`: whole pages are freed, partial
    /// ones zeroed.
    fn discard(&self, mut pos: u64, len: u64) {
        let end = pos + len;
        while pos < end {
            let (idx, off, n) = locate(pos, (end - pos).min(PAGE as u64) as usize);
            // Free whole pages after dropping the lock.
            let freed = {
                let mut pages = self.pages.lock();
                if n == PAGE {
                    let cached = pages.cache.remove(&idx);
                    if cached.is_some() {
                        pages.cached -= 1;
                    }
                    (pages.data.remove(&idx), cached)
                } else {
                    if let Some(page) = pages.data.get_mut(&idx) {
                        page[off..off + n].fill(0);
                    }
                    if let Some(page) = pages.cache.get_mut(&idx) {
                        page[off..off + n].fill(0);
                    }
                    (None, None)
                }
            };
            drop(freed);
            pos += n as u64;
        }
    }
}
