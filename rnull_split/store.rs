// SPDX-License-Identifier: GPL-2.0

//! The data of a memory-backed device (`memory_backed=1`).
//!
//! Like C null_blk's backing store: 4 KiB pages allocated on first write, in
//! a tree indexed by page number, so a device of any size costs only what was
//! written. Never-written ranges read as zeroes; discard and write-zeroes
//! drop whole pages and zero partial ones. Pages are allocated outside the
//! lock and only inserted under it.

use kernel::{
    alloc::Flags,
    block::{bio::Bio, mq::Command},
    new_spinlock,
    prelude::*,
    rbtree::{RBTree, RBTreeNode},
    sync::SpinLock,
};

const PAGE: usize = 4096;
const PAGE_SHIFT: u32 = 12;
const SECTOR_SHIFT: u32 = 9;
const SECTOR_SIZE: u64 = 1 << SECTOR_SHIFT;

type Page = KBox<[u8; PAGE]>;

/// The pages of one device.
#[pin_data]
pub(crate) struct Store {
    #[pin]
    pages: SpinLock<RBTree<u64, Page>>,
}

/// Where byte `pos` of the device lives: page index and offset in it, and how
/// many of `left` bytes fit in that page.
fn locate(pos: u64, left: usize) -> (u64, usize, usize) {
    let idx = pos >> PAGE_SHIFT;
    let off = (pos & (PAGE as u64 - 1)) as usize;
    (idx, off, left.min(PAGE - off))
}

impl Store {
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            pages <- new_spinlock!(RBTree::new(), "rnull_split:store"),
        })
    }

    /// Serve the data of `bio` (a read or a write; other operations carry
    /// no data), allocating with `flags`.
    pub(crate) fn transfer(&self, bio: &Bio, flags: Flags) -> Result {
        self.transfer_at(bio, bio.sector(), u64::MAX, flags)
            .map(|_| ())
    }

    /// Serve the first `sectors` sectors of `bio` only (a bio that met a
    /// bad sector, `badblocks_partial_io`).
    pub(crate) fn transfer_part(&self, bio: &Bio, sectors: u64, flags: Flags) -> Result {
        let limit = sectors.saturating_mul(SECTOR_SIZE);
        self.transfer_at(bio, bio.sector(), limit, flags)
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
        let base = rq.sector();
        let mut left = sectors.saturating_mul(SECTOR_SIZE);
        for bio in rq.bios() {
            if left == 0 {
                break;
            }
            left -= self.transfer_at(bio, sector + (bio.sector() - base), left, flags)?;
        }
        Ok(())
    }

    /// Forget `sectors` sectors from `sector` (a reset zone).
    pub(crate) fn discard_sectors(&self, sector: u64, sectors: u64) {
        self.discard(sector << SECTOR_SHIFT, sectors << SECTOR_SHIFT);
    }

    /// Serve the data of `bio` at `sector`, at most `limit` bytes of it;
    /// returns how many it served.
    fn transfer_at(&self, bio: &Bio, sector: u64, limit: u64, flags: Flags) -> Result<u64> {
        let mut pos = sector << SECTOR_SHIFT;
        let write = match bio.command() {
            Command::Write | Command::ZoneAppend => true,
            Command::Read => false,
            Command::Discard | Command::WriteZeroes | Command::SecureErase => {
                let len = u64::from(bio.size()).min(limit);
                self.discard(pos, len);
                return Ok(len);
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
                    self.write_chunk(idx, |page| seg.copy_to(at, &mut page[off..off + n]), flags)?;
                } else {
                    let pages = self.pages.lock();
                    match pages.get(&idx) {
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

    /// Run `fill` on page `idx` under the lock, allocating the page first if
    /// it does not exist yet.
    fn write_chunk(
        &self,
        idx: u64,
        fill: impl FnOnce(&mut [u8; PAGE]) -> Result,
        flags: Flags,
    ) -> Result {
        {
            let mut pages = self.pages.lock();
            if let Some(page) = pages.get_mut(&idx) {
                return fill(page);
            }
        }
        // Allocate outside the lock; another writer may win the race, then
        // ours is dropped.
        let page: Page = KBox::init(pin_init::init_zeroed(), flags)?;
        let node = RBTreeNode::new(idx, page, flags)?;
        let mut pages = self.pages.lock();
        if pages.get(&idx).is_none() {
            pages.insert(node);
        }
        match pages.get_mut(&idx) {
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
                    pages.remove(&idx)
                } else {
                    if let Some(page) = pages.get_mut(&idx) {
                        page[off..off + n].fill(0);
                    }
                    None
                }
            };
            drop(freed);
            pos += n as u64;
        }
    }
}
