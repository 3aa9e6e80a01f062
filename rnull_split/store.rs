// SPDX-License-Identifier: GPL-2.0

//! The data of a memory-backed device (`memory_backed=1`).
//!
//! Like C null_blk's backing store: 4 KiB pages allocated on first write,
//! indexed by page number, so a device of any size costs only what was
//! written. The index is a page table of four levels
//! (`common/page_table.rs`) rather than C's radix tree: a lookup is four
//! dependent loads, inline. Never-written ranges read as zeroes, and what
//! a zoned disk reads past a zone's write pointer as 0xFF bytes; discard and
//! write-zeroes drop whole pages (and the table nodes they leave empty)
//! and zero partial ones. Pages and table nodes are allocated outside the
//! lock and only inserted under it: a write that finds its page missing
//! allocates what is missing, takes the lock again and looks again.
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
    rbtree::{RBTree, RBTreeNodeReservation},
    sync::{Arc, SpinLock},
};

use crate::page_table::{self, LEAF_SLOTS, MID_SLOTS, UPPER_SLOTS};
use crate::stats::Stats;

const PAGE: usize = 4096;
const PAGE_SHIFT: u32 = 12;
const SECTOR_SHIFT: u32 = 9;
const SECTOR_SIZE: u64 = 1 << SECTOR_SHIFT;

type Page = KBox<[u8; PAGE]>;

/// What a read returns past a zone's write pointer (C null_blk fills it
/// with 0xFF bytes): a page of them, at least as long as any piece of a
/// single-page segment.
static PAST_WP: [u8; PAGE] = [0xff; PAGE];

/// A node of the page table above the leaves: `N` slots of `T`s.
///
/// # Invariants
///
/// `used` is the number of `Some` entries of `slots`. No node below the
/// top, leaves included, is empty when the store's lock is free (one that
/// empties is freed, a new one gets its first entry before the lock is
/// dropped).
struct Node<T, const N: usize> {
    slots: [Option<KBox<T>>; N],
    used: usize,
}

impl<T, const N: usize> Node<T, N> {
    fn new_boxed(flags: Flags) -> Result<KBox<Self>> {
        Ok(KBox::new(
            Self {
                slots: [const { None }; N],
                used: 0,
            },
            flags,
        )?)
    }

    /// Put `new` in slot `at` if it is empty; returns the entry there.
    fn fill(&mut self, at: usize, new: &mut Option<KBox<T>>) -> Option<&mut T> {
        let slot = &mut self.slots[at];
        if slot.is_none() {
            *slot = Some(new.take()?);
            // INVARIANT: one more entry.
            self.used += 1;
        }
        slot.as_deref_mut()
    }

    /// Take the entry of slot `at` out.
    fn take(&mut self, at: usize) -> Option<KBox<T>> {
        let entry = self.slots[at].take()?;
        // INVARIANT: one entry fewer.
        self.used -= 1;
        Some(entry)
    }
}

/// A leaf: pages. No count, so that it is 512 bytes, a slab object of its
/// own size; only a removal asks whether it is empty.
struct Leaf {
    pages: [Option<Page>; LEAF_SLOTS],
}

impl Leaf {
    fn new_boxed(flags: Flags) -> Result<KBox<Self>> {
        Ok(KBox::new(
            Self {
                pages: [const { None }; LEAF_SLOTS],
            },
            flags,
        )?)
    }

    fn is_empty(&self) -> bool {
        self.pages.iter().all(Option::is_none)
    }
}

/// A middle node: leaves.
type Mid = Node<Leaf, MID_SLOTS>;
/// An upper node: middle nodes.
type Upper = Node<Mid, UPPER_SLOTS>;

/// What a page table lacks below an index for a page to be put there.
#[derive(Clone, Copy)]
struct Lack {
    upper: bool,
    mid: bool,
    leaf: bool,
}

/// Nodes allocated outside the lock for an insertion under it.
#[derive(Default)]
struct Spare {
    upper: Option<KBox<Upper>>,
    mid: Option<KBox<Mid>>,
    leaf: Option<KBox<Leaf>>,
}

impl Spare {
    /// Whether these nodes make up for `lack`.
    fn covers(&self, lack: Lack) -> bool {
        (!lack.upper || self.upper.is_some())
            && (!lack.mid || self.mid.is_some())
            && (!lack.leaf || self.leaf.is_some())
    }

    /// Allocate what `lack` asks for and is not here yet.
    fn provide(&mut self, lack: Lack, flags: Flags) -> Result {
        if lack.upper && self.upper.is_none() {
            self.upper = Some(Upper::new_boxed(flags)?);
        }
        if lack.mid && self.mid.is_none() {
            self.mid = Some(Mid::new_boxed(flags)?);
        }
        if lack.leaf && self.leaf.is_none() {
            self.leaf = Some(Leaf::new_boxed(flags)?);
        }
        Ok(())
    }
}

/// The stored pages of a device, by page index (`common/page_table.rs`).
struct Table {
    top: KVVec<Option<KBox<Upper>>>,
}

impl Table {
    /// An empty table for a device of `pages` pages.
    fn new(pages: u64) -> Result<Self> {
        let mut table = Self { top: KVVec::new() };
        table.grow(pages)?;
        Ok(table)
    }

    /// Make room for a device of `pages` pages; the pages stored stay (a
    /// table never shrinks: pages past a smaller device are kept, as C
    /// null_blk keeps them, and show again if the device grows back).
    fn grow(&mut self, pages: u64) -> Result {
        let len = page_table::top_len(pages).ok_or(EINVAL)?;
        while self.top.len() < len {
            self.top.push(None, GFP_KERNEL)?;
        }
        Ok(())
    }

    /// Whether the device has a page `idx`.
    fn has_slot(&self, idx: u64) -> bool {
        page_table::slot(idx, self.top.len()).is_some()
    }

    #[inline]
    fn get(&self, idx: u64) -> Option<&[u8; PAGE]> {
        let s = page_table::slot(idx, self.top.len())?;
        let upper = self.top[s.top].as_deref()?;
        let leaf = upper.slots[s.upper].as_deref()?.slots[s.mid].as_deref()?;
        leaf.pages[s.leaf].as_deref()
    }

    #[inline]
    fn get_mut(&mut self, idx: u64) -> Option<&mut [u8; PAGE]> {
        let s = page_table::slot(idx, self.top.len())?;
        let upper = self.top[s.top].as_deref_mut()?;
        let leaf = upper.slots[s.upper].as_deref_mut()?.slots[s.mid].as_deref_mut()?;
        leaf.pages[s.leaf].as_deref_mut()
    }

    /// What the table lacks for a page at `idx` (nothing for an index it
    /// has no slot for: see [`Table::has_slot`]).
    fn lacks(&self, idx: u64) -> Lack {
        let mut lack = Lack {
            upper: false,
            mid: false,
            leaf: false,
        };
        let Some(s) = page_table::slot(idx, self.top.len()) else {
            return lack;
        };
        match self.top[s.top].as_deref() {
            None => (lack.upper, lack.mid, lack.leaf) = (true, true, true),
            Some(upper) => match upper.slots[s.upper].as_deref() {
                None => (lack.mid, lack.leaf) = (true, true),
                Some(mid) => lack.leaf = mid.slots[s.mid].is_none(),
            },
        }
        lack
    }

    /// Put `page` at `idx`, making the path to it from `spare`; returns the
    /// page it replaces, or `Err(page)` if `spare` lacks a node it needs
    /// (see [`Table::lacks`]) or the device has no page `idx`.
    fn insert(&mut self, idx: u64, page: Page, spare: &mut Spare) -> Result<Option<Page>, Page> {
        let Some(s) = page_table::slot(idx, self.top.len()) else {
            return Err(page);
        };
        if !spare.covers(self.lacks(idx)) {
            return Err(page);
        }
        let top = &mut self.top[s.top];
        if top.is_none() {
            *top = spare.upper.take();
        }
        // Every node the path lacks is in `spare` (checked above), and each
        // gets its entry below before the lock is dropped.
        let leaf = top
            .as_deref_mut()
            .and_then(|upper| upper.fill(s.upper, &mut spare.mid))
            .and_then(|mid| mid.fill(s.mid, &mut spare.leaf));
        let Some(leaf) = leaf else {
            return Err(page);
        };
        Ok(leaf.pages[s.leaf].replace(page))
    }

    /// Take page `idx` out; the nodes it leaves empty are freed.
    fn remove(&mut self, idx: u64) -> Option<Page> {
        let s = page_table::slot(idx, self.top.len())?;
        let top = &mut self.top[s.top];
        let upper = top.as_deref_mut()?;
        let mid = upper.slots[s.upper].as_deref_mut()?;
        let leaf = mid.slots[s.mid].as_deref_mut()?;
        let page = leaf.pages[s.leaf].take()?;
        if leaf.is_empty() {
            drop(mid.take(s.mid));
            if mid.used == 0 {
                drop(upper.take(s.upper));
                if upper.used == 0 {
                    *top = None;
                }
            }
        }
        Some(page)
    }
}

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
    data: Table,
    /// The write-back cache's pages, newer than `data`'s.
    cache: RBTree<u64, Page>,
    /// `cache`'s length.
    cached: usize,
}

impl Pages {
    /// Move the lowest cache page to the store, with table nodes from
    /// `spare`; `Ok(false)` if the cache is empty, `Err` with what the
    /// table lacks for it if `spare` does not have it (the page stays).
    fn write_back_one(&mut self, spare: &mut Spare) -> Result<bool, Lack> {
        let Some(cursor) = self.cache.cursor_front_mut() else {
            return Ok(false);
        };
        let idx = *cursor.current().0;
        let lack = self.data.lacks(idx);
        if !spare.covers(lack) {
            return Err(lack);
        }
        let (_, node) = cursor.remove_current();
        self.cached -= 1;
        let (_, page) = node.to_key_value();
        // Cannot fail with `lack` covered; a page of an index the device
        // does not have (none is cached) would be dropped.
        drop(self.data.insert(idx, page, spare));
        Ok(true)
    }
}

/// Where byte `pos` of the device lives: page index and offset in it, and how
/// many of `left` bytes fit in that page.
fn locate(pos: u64, left: usize) -> (u64, usize, usize) {
    let idx = pos >> PAGE_SHIFT;
    let off = (pos & (PAGE as u64 - 1)) as usize;
    (idx, off, left.min(PAGE - off))
}

/// The stored pages of a configfs disk while it is powered off: C null_blk
/// keeps a memory-backed disk's data across `power` 0 and 1 (and frees it
/// at `rmdir`), but not its cache's, which is how power-fail tests lose a
/// volatile cache.
pub(crate) struct KeptData(Table);

impl Store {
    /// A store for a device of `capacity_sectors` with a write-back cache
    /// of `cache_pages` pages (0: none), counting its write-backs in
    /// `stats`; holding the pages of `kept` if given.
    pub(crate) fn new(
        capacity_sectors: u64,
        cache_pages: usize,
        stats: Arc<Stats>,
        kept: Option<KeptData>,
    ) -> impl PinInit<Self, Error> {
        let pages = capacity_sectors.div_ceil(1 << (PAGE_SHIFT - SECTOR_SHIFT));
        let data = match kept {
            Some(KeptData(mut table)) => table.grow(pages).map(|()| table),
            None => Table::new(pages),
        };
        try_pin_init!(Self {
            pages <- new_spinlock!(
                Pages {
                    data: data?,
                    cache: RBTree::new(),
                    cached: 0,
                },
                "rnull_split:store"
            ),
            cache_limit: cache_pages,
            stats,
        })
    }

    /// Take the stored pages out, for the next disk of the same configfs
    /// directory: the store is left empty, and its cache pages are dropped
    /// with it. Called after the disk is gone, so no request is in flight.
    pub(crate) fn take_data(&self) -> KeptData {
        let mut pages = self.pages.lock();
        KeptData(core::mem::replace(
            &mut pages.data,
            Table { top: KVVec::new() },
        ))
    }

    /// Serve a flush: every cache page goes to the store, allocating the
    /// table nodes it needs with `flags`.
    pub(crate) fn flush(&self, flags: Flags) -> Result {
        let mut spare = Spare::default();
        let mut n = 0;
        let r = loop {
            let lack = {
                let mut pages = self.pages.lock();
                loop {
                    match pages.write_back_one(&mut spare) {
                        Ok(true) => n += 1,
                        Ok(false) => break None,
                        Err(lack) => break Some(lack),
                    }
                }
            };
            match lack {
                None => break Ok(()),
                Some(lack) => {
                    if let Err(e) = spare.provide(lack, flags) {
                        break Err(e);
                    }
                }
            }
        };
        self.stats.cache_writebacks.add(n);
        r
    }

    /// Serve the data of `bio` (a read or a write; other operations carry
    /// no data), allocating with `flags`.
    pub(crate) fn transfer(&self, bio: &Bio, flags: Flags) -> Result {
        let bios = core::iter::once((bio, bio.sector()));
        self.transfer_bios(bios, bio.command(), u64::MAX, u64::MAX, false, flags)
            .map(|_| ())
    }

    /// Serve the first `sectors` sectors of `bio` only (a bio that met a
    /// bad sector, `badblocks_partial_io`).
    pub(crate) fn transfer_part(&self, bio: &Bio, sectors: u64, flags: Flags) -> Result {
        let limit = sectors.saturating_mul(SECTOR_SIZE);
        let bios = core::iter::once((bio, bio.sector()));
        self.transfer_bios(bios, bio.command(), limit, u64::MAX, false, flags)
            .map(|_| ())
    }

    /// Serve the first `sectors` sectors of `rq`'s data (`u64::MAX` for
    /// all; fewer for a request that met a bad sector,
    /// `badblocks_partial_io`). A read gets stored data for its first
    /// `valid` bytes and 0xFF bytes after them (a zoned disk's read past
    /// the write pointer, as C null_blk's; `u64::MAX`: all data).
    pub(crate) fn transfer_rq<T: kernel::block::mq::Operations>(
        &self,
        rq: &kernel::block::mq::Request<T>,
        sectors: u64,
        valid: u64,
        flags: Flags,
    ) -> Result {
        self.transfer_rq_from(rq, rq.sector(), sectors, valid, flags)
    }

    /// Serve the first `sectors` sectors of `rq`'s data only, as if the
    /// request started at `sector` (a zone append's is the write pointer,
    /// not its own; `u64::MAX` sectors for all).
    pub(crate) fn transfer_rq_part<T: kernel::block::mq::Operations>(
        &self,
        rq: &kernel::block::mq::Request<T>,
        sector: u64,
        sectors: u64,
        flags: Flags,
    ) -> Result {
        self.transfer_rq_from(rq, sector, sectors, u64::MAX, flags)
    }

    /// [`Store::transfer_rq`] as if the request started at `sector`.
    fn transfer_rq_from<T: kernel::block::mq::Operations>(
        &self,
        rq: &kernel::block::mq::Request<T>,
        sector: u64,
        sectors: u64,
        valid: u64,
        flags: Flags,
    ) -> Result {
        let base = rq.sector();
        // A request's bios follow its first sector (`bio.sector() >=
        // base`), and each lands on a sector of the device; wrapping only
        // spares the overflow checks (a wrong sector would find no page
        // slot: `EIO`).
        let bios = rq
            .bios()
            .map(|bio| (bio, sector.wrapping_add(bio.sector().wrapping_sub(base))));
        let limit = sectors.saturating_mul(SECTOR_SIZE);
        self.transfer_bios(bios, rq.command(), limit, valid, rq.is_fua(), flags)
            .map(|_| ())
    }

    /// Forget `sectors` sectors from `sector` (a reset zone).
    pub(crate) fn discard_sectors(&self, sector: u64, sectors: u64) {
        self.discard(sector << SECTOR_SHIFT, sectors << SECTOR_SHIFT);
    }

    /// Serve `command` on `bios`, each at the sector paired with it, at most
    /// `limit` bytes of them, a write past the cache if `fua`; returns how
    /// many bytes it served. A read fills the bytes it serves after the
    /// first `valid` with 0xFF instead of stored data.
    ///
    /// As C null_blk's `null_handle_data_transfer`, the lock is taken once
    /// for all the bios: a write that finds its page missing drops it to
    /// allocate the page ([`Store::make_page`]) and takes it again.
    fn transfer_bios<'b>(
        &self,
        bios: impl Iterator<Item = (&'b Bio, u64)>,
        command: Command,
        limit: u64,
        valid: u64,
        fua: bool,
        flags: Flags,
    ) -> Result<u64> {
        let write = match command {
            Command::Write | Command::ZoneAppend => true,
            Command::Read => false,
            Command::Discard | Command::WriteZeroes | Command::SecureErase => {
                let mut served = 0u64;
                for (bio, sector) in bios {
                    let len = u64::from(bio.size()).min(limit - served);
                    self.discard(sector << SECTOR_SHIFT, len);
                    served += len;
                }
                return Ok(served);
            }
            Command::Flush => {
                self.flush(flags)?;
                return Ok(0);
            }
            _ => return Ok(0),
        };
        let cache = self.cache_limit != 0;
        // A write with the write-back cache in front goes to cache pages,
        // a chunk at a time ([`Store::write_cached`] takes the lock).
        let via_cache = write && cache && !fua;
        let mut served = 0u64;
        let mut pages = self.pages.lock();
        'bios: for (bio, sector) in bios {
            let mut pos = sector << SECTOR_SHIFT;
            for seg in bio.page_segments() {
                if served == limit {
                    break 'bios;
                }
                // `limit - served` is below the segment's `u32` length here.
                let len = u64::from(seg.len()).min(limit - served) as usize;
                let mut at = 0usize;
                while at < len {
                    let (idx, off, n) = locate(pos, len - at);
                    if via_cache {
                        drop(pages);
                        self.write_cached(
                            idx,
                            |page: &mut [u8; PAGE]| seg.copy_to(at, &mut page[off..off + n]),
                            flags,
                        )?;
                        pages = self.pages.lock();
                    } else if write {
                        let Some(page) = pages.data.get_mut(idx) else {
                            // A page's first write: allocate it unlocked,
                            // then look again.
                            drop(pages);
                            self.make_page(idx, flags)?;
                            pages = self.pages.lock();
                            continue;
                        };
                        seg.copy_to(at, &mut page[off..off + n])?;
                        // A FUA write also goes to the cache page, if any,
                        // so that the two agree.
                        if cache {
                            if let Some(page) = pages.cache.get_mut(&idx) {
                                seg.copy_to(at, &mut page[off..off + n])?;
                            }
                        }
                    } else {
                        // Stored data up to `valid` bytes into the
                        // transfer, 0xFF bytes after them.
                        let data = valid.saturating_sub(served + at as u64).min(n as u64) as usize;
                        if data > 0 {
                            let cached = if cache {
                                pages.cache.get(&idx).map(|p| &**p)
                            } else {
                                None
                            };
                            match cached.or_else(|| pages.data.get(idx)) {
                                Some(page) => seg.copy_from(at, &page[off..off + data])?,
                                None => seg.zero(at, data)?,
                            }
                        }
                        if data < n {
                            // `n - data` is at most a page.
                            seg.copy_from(at + data, &PAST_WP[..n - data])?;
                        }
                    }
                    at += n;
                    pos += n as u64;
                }
                served += len as u64;
            }
        }
        Ok(served)
    }

    /// Make stored page `idx` (zeroed), and the table nodes above it, if it
    /// does not exist yet; `EIO` for a page beyond the device.
    #[inline(never)]
    fn make_page(&self, idx: u64, flags: Flags) -> Result {
        let mut page: Option<Page> = None;
        let mut spare = Spare::default();
        loop {
            let mut pages = self.pages.lock();
            if pages.data.get(idx).is_some() {
                // Ours, if allocated, is dropped: another writer won.
                return Ok(());
            }
            if !pages.data.has_slot(idx) {
                return Err(EIO);
            }
            let lack = pages.data.lacks(idx);
            if let Some(new) = page.take() {
                match pages.data.insert(idx, new, &mut spare) {
                    Ok(_) => return Ok(()),
                    Err(new) => page = Some(new),
                }
            }
            // Allocate outside the lock, then look again.
            drop(pages);
            if page.is_none() {
                page = Some(KBox::init(pin_init::init_zeroed(), flags)?);
            }
            spare.provide(lack, flags)?;
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
        if let Some(page) = self.pages.lock().cache.get_mut(&idx) {
            return fill(page);
        }
        // Allocate outside the lock; another writer may win the race, then
        // ours is dropped.
        let mut page: Page = KBox::init(pin_init::init_zeroed(), flags)?;
        let reservation = RBTreeNodeReservation::new(flags)?;
        let mut spare = Spare::default();
        let mut pages = loop {
            let mut pages = self.pages.lock();
            if pages.cache.get(&idx).is_some() || pages.cached < self.cache_limit {
                break pages;
            }
            match pages.write_back_one(&mut spare) {
                Ok(wrote) => {
                    if wrote {
                        self.stats.cache_writebacks.inc();
                    }
                    break pages;
                }
                Err(lack) => {
                    drop(pages);
                    spare.provide(lack, flags)?;
                }
            }
        };
        if pages.cache.get(&idx).is_none() {
            if let Some(stored) = pages.data.get(idx) {
                page.copy_from_slice(&stored[..]);
            }
            pages.cache.insert(reservation.into_node(idx, page));
            pages.cached += 1;
        }
        match pages.cache.get_mut(&idx) {
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
            // Free whole pages after dropping the lock.
            let freed = {
                let mut pages = self.pages.lock();
                if n == PAGE {
                    let cached = pages.cache.remove(&idx);
                    if cached.is_some() {
                        pages.cached -= 1;
                    }
                    (pages.data.remove(idx), cached)
                } else {
                    if let Some(page) = pages.data.get_mut(idx) {
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
