// SPDX-License-Identifier: GPL-2.0

//! Pure logic of the rvirtio_blk driver, shared with the host unit tests.
//!
//! Nothing here touches the kernel: the driver reads the device and the
//! request, then asks this module
//!
//! 1. how many scatterlist entries live inline in each request
//!    ([`first_chunk_entries`]) and how big the per-request data is
//!    ([`pdu_size`]);
//! 2. whether a request needs a chained table from the SG pool, and how many
//!    bytes of pool memory that table costs ([`chained_table_bytes`]), for the
//!    counters;
//! 3. which virtio-blk command a block-layer operation becomes
//!    ([`setup_cmd`]) and what the device status byte means ([`result`]);
//! 4. the queue limits, queue count and queue depth that the device config
//!    space implies ([`read_limits`], [`num_vqs`], [`queue_depth`]), exactly as
//!    C `virtio_blk` computes them;
//! 5. disk names ([`name_format`]) and capacity conversions;
//! 6. whether the module parameters are acceptable ([`check_params`]).
//!
//! It is compiled by the module (through `#[path]`) and by `cargo test` in
//! `host-tests/`.

/// Scatterlist entries kept inline in every request (C `VIRTIO_BLK_INLINE_SG_CNT`).
pub const INLINE_SG_CNT: u32 = 2;

/// Entries per chained chunk allocated from the SG pool (C `SG_CHUNK_SIZE`).
pub const SG_CHUNK_SIZE: u32 = 128;

/// The largest number of SG entries a virtqueue can take (C `VIRTIO_BLK_MAX_SG_ELEMS`).
pub const MAX_SG_ELEMS: u32 = 32768;

/// The most discard ranges the driver sends in one request.
pub const MAX_DISCARD_SEGMENTS: u32 = 256;

/// Bytes in a sector, the unit of virtio-blk and of the block layer.
pub const SECTOR_SIZE: u32 = 512;

/// `log2(SECTOR_SIZE)`.
pub const SECTOR_SHIFT: u32 = 9;

/// Converts a sector count to bytes (multiplies, never shifts a narrow type).
pub const fn sectors_to_bytes(sectors: u64) -> u64 {
    sectors.saturating_mul(SECTOR_SIZE as u64)
}

/// Converts bytes to whole sectors, rounding down.
pub const fn bytes_to_sectors(bytes: u64) -> u64 {
    bytes / SECTOR_SIZE as u64
}

/// Number of logical blocks of size `lbs` bytes covering `capacity` sectors
/// (C `DIV_ROUND_UP_ULL(capacity, lbs >> 9)`).
pub const fn nblocks(capacity_sectors: u64, lbs: u32) -> u64 {
    let per = (lbs / SECTOR_SIZE) as u64;
    if per == 0 {
        return capacity_sectors;
    }
    capacity_sectors.div_ceil(per)
}

/// Inline scatterlist entries per request.
///
/// The runtime design keeps [`INLINE_SG_CNT`] entries inline and chains a pool
/// table for bigger requests; the pre-2021 design (`sg_prealloc=1`) keeps
/// `seg_max` entries inline so that no request ever needs a pool table.
pub fn first_chunk_entries(prealloc: bool, seg_max: u32) -> u32 {
    if prealloc {
        seg_max.max(1)
    } else {
        INLINE_SG_CNT
    }
}

/// Size of the per-request data (the blk-mq PDU): the fixed part of the
/// request plus `first_chunk` scatterlist entries of `sg_size` bytes.
pub const fn pdu_size(fixed: usize, sg_size: usize, first_chunk: u32) -> usize {
    fixed + sg_size * first_chunk as usize
}

/// SG memory preallocated by a tag set: every request of every hardware queue
/// carries `first_chunk` entries.
pub const fn tagset_sg_bytes(
    nr_hw_queues: u32,
    queue_depth: u32,
    sg_size: usize,
    first_chunk: u32,
) -> u64 {
    nr_hw_queues as u64 * queue_depth as u64 * sg_size as u64 * first_chunk as u64
}

/// Whether `sg_alloc_table_chained(.., nents, first_chunk, first_chunk)` has
/// to take a table from the SG pool.
pub const fn needs_chained_table(nents: u32, first_chunk: u32) -> bool {
    nents > first_chunk
}

/// Entries of the SG pool object that holds `n` entries (pools of 8, 16, 32,
/// 64 and 128 entries, C `sg_pool_index`).
pub const fn sg_pool_entries(n: u32) -> u32 {
    if n <= 8 {
        8
    } else {
        n.next_power_of_two()
    }
}

/// Pool entries allocated by `sg_alloc_table_chained(.., nents, first_chunk,
/// first_chunk)`, following `__sg_alloc_table`: the first chunk keeps
/// `first_chunk - 1` entries and a chain link, each pool chunk holds up to
/// [`SG_CHUNK_SIZE`] entries, the last of which links onward when more follow.
pub const fn chained_pool_entries(nents: u32, first_chunk: u32) -> u32 {
    if nents == 0 || (first_chunk > 0 && nents <= first_chunk) {
        return 0;
    }
    let mut left = nents;
    let mut total = 0;
    let mut max = SG_CHUNK_SIZE;
    if first_chunk > 1 {
        // The inline chunk: all but its last entry carry data.
        left -= first_chunk - 1;
    }
    while left > 0 {
        let alloc = if left > max { max } else { left };
        let used = if left > max { alloc - 1 } else { alloc };
        total += sg_pool_entries(alloc);
        left -= used;
        max = SG_CHUNK_SIZE;
    }
    total
}

/// Bytes of SG pool memory a request with `nents` segments holds.
pub const fn chained_table_bytes(nents: u32, first_chunk: u32, sg_size: usize) -> u64 {
    chained_pool_entries(nents, first_chunk) as u64 * sg_size as u64
}

/// The block-layer operations the driver distinguishes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `REQ_OP_READ`.
    Read,
    /// `REQ_OP_WRITE`.
    Write,
    /// `REQ_OP_FLUSH`.
    Flush,
    /// `REQ_OP_DISCARD`.
    Discard,
    /// `REQ_OP_WRITE_ZEROES`; `nounmap` is `REQ_NOUNMAP`.
    WriteZeroes {
        /// The caller asked to keep the blocks allocated.
        nounmap: bool,
    },
    /// `REQ_OP_DRV_IN`: the header was filled by the submitter (GET_ID).
    DrvIn,
    /// Anything else (zone management, secure erase, ...).
    Other,
}

/// `VIRTIO_BLK_T_IN`.
pub const VIRTIO_BLK_T_IN: u32 = 0;
/// `VIRTIO_BLK_T_OUT`.
pub const VIRTIO_BLK_T_OUT: u32 = 1;
/// `VIRTIO_BLK_T_FLUSH`.
pub const VIRTIO_BLK_T_FLUSH: u32 = 4;
/// `VIRTIO_BLK_T_GET_ID`.
pub const VIRTIO_BLK_T_GET_ID: u32 = 8;
/// `VIRTIO_BLK_T_DISCARD`.
pub const VIRTIO_BLK_T_DISCARD: u32 = 11;
/// `VIRTIO_BLK_T_WRITE_ZEROES`.
pub const VIRTIO_BLK_T_WRITE_ZEROES: u32 = 13;
/// `VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP`.
pub const VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP: u32 = 1;
/// Bytes of the GET_ID answer (`VIRTIO_BLK_ID_BYTES`).
pub const VIRTIO_BLK_ID_BYTES: usize = 20;

/// What `virtblk_setup_cmd` puts in the out header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cmd {
    /// `VIRTIO_BLK_T_*`.
    pub type_: u32,
    /// Start sector (0 where the command has none).
    pub sector: u64,
    /// The payload is a table of discard/write-zeroes ranges.
    pub ranges: bool,
    /// Range flag `VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP`.
    pub unmap: bool,
}

/// Why a request cannot become a virtio-blk command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmdError {
    /// The operation is not supported (`BLK_STS_NOTSUPP`).
    NotSupported,
}

/// Maps a block-layer operation at sector `pos` to a virtio-blk command.
/// `None` means the header was prepared by the submitter ([`Op::DrvIn`]).
pub fn setup_cmd(op: Op, pos: u64) -> Result<Option<Cmd>, CmdError> {
    let cmd = |type_, sector, ranges, unmap| {
        Ok(Some(Cmd {
            type_,
            sector,
            ranges,
            unmap,
        }))
    };
    match op {
        Op::Read => cmd(VIRTIO_BLK_T_IN, pos, false, false),
        Op::Write => cmd(VIRTIO_BLK_T_OUT, pos, false, false),
        Op::Flush => cmd(VIRTIO_BLK_T_FLUSH, 0, false, false),
        Op::Discard => cmd(VIRTIO_BLK_T_DISCARD, 0, true, false),
        Op::WriteZeroes { nounmap } => cmd(VIRTIO_BLK_T_WRITE_ZEROES, 0, true, !nounmap),
        Op::DrvIn => Ok(None),
        Op::Other => Err(CmdError::NotSupported),
    }
}

/// Whether the data of a command goes to the device (C: `type &
/// VIRTIO_BLK_T_OUT`): writes, and the range tables of discard and write
/// zeroes; not reads, flushes or GET_ID.
pub const fn data_out(type_: u32) -> bool {
    type_ & VIRTIO_BLK_T_OUT != 0
}

/// One discard / write-zeroes range as the device reads it
/// (`struct virtio_blk_discard_write_zeroes`, little endian).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Range {
    /// Start sector, little endian.
    pub sector: u64,
    /// Sector count, little endian.
    pub num_sectors: u32,
    /// `VIRTIO_BLK_WRITE_ZEROES_FLAG_*`, little endian.
    pub flags: u32,
}

impl Range {
    /// A range of `num_sectors` at `sector` in device byte order.
    pub fn new(sector: u64, num_sectors: u32, unmap: bool) -> Self {
        let flags = if unmap {
            VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP
        } else {
            0
        };
        Self {
            sector: sector.to_le(),
            num_sectors: num_sectors.to_le(),
            flags: flags.to_le(),
        }
    }
}

/// `VIRTIO_BLK_S_OK`.
pub const VIRTIO_BLK_S_OK: u8 = 0;
/// `VIRTIO_BLK_S_IOERR`.
pub const VIRTIO_BLK_S_IOERR: u8 = 1;
/// `VIRTIO_BLK_S_UNSUPP`.
pub const VIRTIO_BLK_S_UNSUPP: u8 = 2;

/// What a device status byte means to the caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Success (`BLK_STS_OK`).
    Ok,
    /// Unsupported command (`BLK_STS_NOTSUPP`, `EOPNOTSUPP`).
    NotSupported,
    /// Anything else (`BLK_STS_IOERR`, `EIO`).
    IoErr,
}

/// C `virtblk_result`: maps the device status byte.
pub const fn result(status: u8) -> Status {
    match status {
        VIRTIO_BLK_S_OK => Status::Ok,
        VIRTIO_BLK_S_UNSUPP => Status::NotSupported,
        _ => Status::IoErr,
    }
}

/// The config-space fields `virtblk_read_limits` looks at; `None` when the
/// feature bit that guards the field was not negotiated.
#[derive(Clone, Copy, Debug, Default)]
pub struct DevConfig {
    /// `seg_max` (`VIRTIO_BLK_F_SEG_MAX`).
    pub seg_max: Option<u32>,
    /// `size_max` (`VIRTIO_BLK_F_SIZE_MAX`).
    pub size_max: Option<u32>,
    /// `blk_size` (`VIRTIO_BLK_F_BLK_SIZE`).
    pub blk_size: Option<u32>,
    /// `physical_block_exp`, `alignment_offset`, `min_io_size`,
    /// `opt_io_size` (`VIRTIO_BLK_F_TOPOLOGY`).
    pub topology: Option<(u8, u8, u16, u32)>,
    /// `discard_sector_alignment`, `max_discard_sectors`, `max_discard_seg`
    /// (`VIRTIO_BLK_F_DISCARD`).
    pub discard: Option<(u32, u32, u32)>,
    /// `max_write_zeroes_sectors` (`VIRTIO_BLK_F_WRITE_ZEROES`).
    pub write_zeroes: Option<u32>,
    /// `virtio_max_dma_size()` of the transport.
    pub max_dma_size: u64,
}

/// Queue limits implied by the device, as in C `virtblk_read_limits`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// `max_segments` (also `seg_max` for the SG sizing).
    pub max_segments: u32,
    /// `max_segment_size`.
    pub max_segment_size: u32,
    /// `logical_block_size`.
    pub logical_block_size: u32,
    /// `physical_block_size` (0: block layer default).
    pub physical_block_size: u32,
    /// `alignment_offset`.
    pub alignment_offset: u32,
    /// `io_min`.
    pub io_min: u32,
    /// `io_opt`.
    pub io_opt: u32,
    /// `max_hw_discard_sectors` (0: no discard).
    pub max_hw_discard_sectors: u32,
    /// `max_discard_segments`.
    pub max_discard_segments: u16,
    /// `discard_granularity` in bytes.
    pub discard_granularity: u32,
    /// `max_write_zeroes_sectors` (0: no write zeroes).
    pub max_write_zeroes_sectors: u32,
}

/// C `virtblk_read_limits` without secure erase and zones.
pub fn read_limits(c: &DevConfig) -> Limits {
    let mut l = Limits::default();
    let sg_elems = match c.seg_max {
        Some(n) if n > 0 => n,
        _ => 1,
    }
    .min(MAX_SG_ELEMS - 2);
    l.max_segments = sg_elems;
    let mut max_size = c.max_dma_size.min(u32::MAX as u64) as u32;
    if let Some(v) = c.size_max {
        max_size = max_size.min(v);
    }
    l.max_segment_size = max_size;
    l.logical_block_size = match c.blk_size {
        Some(v) if v != 0 => v,
        _ => SECTOR_SIZE,
    };
    if let Some((exp, align, min_io, opt_io)) = c.topology {
        let lbs = l.logical_block_size;
        if exp != 0 && exp < 32 {
            l.physical_block_size = lbs.saturating_mul(1 << exp);
        }
        l.alignment_offset = lbs.saturating_mul(align as u32);
        l.io_min = lbs.saturating_mul(min_io as u32);
        l.io_opt = lbs.saturating_mul(opt_io);
    }
    if let Some((align, max_sectors, max_seg)) = c.discard {
        l.max_hw_discard_sectors = if max_sectors != 0 {
            max_sectors
        } else {
            u32::MAX
        };
        let segs = if max_seg != 0 { max_seg } else { sg_elems };
        l.max_discard_segments = segs.min(MAX_DISCARD_SEGMENTS) as u16;
        l.discard_granularity = if align != 0 {
            align.saturating_mul(SECTOR_SIZE)
        } else {
            l.logical_block_size
        };
    }
    if let Some(v) = c.write_zeroes {
        l.max_write_zeroes_sectors = if v != 0 { v } else { u32::MAX };
    }
    l
}

/// The most tags per hardware queue the block layer takes (C `BLK_MQ_MAX_DEPTH`).
pub const MAX_QUEUE_DEPTH: u32 = 10240;

/// The module parameters as `insmod` gave them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Params {
    /// `num_request_queues`: cap on hardware queues, 0 = none; any value
    /// (the CPUs truncate it, as C's).
    pub num_request_queues: u32,
    /// `queue_depth`: tags per hardware queue, 0 = fill the ring.
    pub queue_depth: u32,
    /// `sg_prealloc`: 0 = two inline entries + chaining, 1 = `seg_max` inline.
    pub sg_prealloc: u32,
    /// `seg_max`: cap on data segments per request, 0 = the device's `seg_max`.
    pub seg_max: u32,
    /// `poll_queues`: virtqueues for polled I/O, taken from the queues used.
    pub poll_queues: u32,
}

/// A refused parameter: its name, the value given and the accepted range
/// (`min..=max`), for the `pr_err` that names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamError {
    /// The parameter's name.
    pub name: &'static str,
    /// The value given.
    pub value: u32,
    /// The smallest accepted value.
    pub min: u32,
    /// The largest accepted value.
    pub max: u32,
}

/// Checks the module parameters; the first bad one is returned.
///
/// `queue_depth` may not exceed [`MAX_QUEUE_DEPTH`] (the block layer would
/// silently clamp it); `sg_prealloc` is 0 or 1; `seg_max` is 0 or at most
/// what a virtqueue can take; `poll_queues` may not exceed the CPU count.
/// These are clamped nowhere: a bad value fails `insmod`.
/// `num_request_queues` takes any value, as C `virtio_blk`'s: the CPU count
/// truncates it at probe ([`num_vqs`]).
pub fn check_params(p: &Params, nr_cpu_ids: u32) -> Result<(), ParamError> {
    let checks = [
        ("queue_depth", p.queue_depth, 0, MAX_QUEUE_DEPTH),
        ("sg_prealloc", p.sg_prealloc, 0, 1),
        ("seg_max", p.seg_max, 0, MAX_SG_ELEMS - 2),
        ("poll_queues", p.poll_queues, 0, nr_cpu_ids),
    ];
    for (name, value, min, max) in checks {
        if value < min || value > max {
            return Err(ParamError {
                name,
                value,
                min,
                max,
            });
        }
    }
    Ok(())
}

/// Applies the `seg_max` parameter to the device's limits: with `cap` > 0 a
/// request carries at most `cap` data segments (never more than the device
/// allows). This gives any device the small `seg_max` values QEMU cannot
/// offer (its `seg_max` is the queue size minus 2, a power of two minus 2),
/// to test requests around the inline/chained boundary. Discard ranges
/// travel in one buffer whatever their count, so they are not capped.
pub fn cap_segments(mut l: Limits, cap: u32) -> Limits {
    if cap != 0 {
        l.max_segments = l.max_segments.min(cap);
    }
    l
}

/// The most virtqueues to use, before the CPUs truncate it (C
/// `virtio_blk`'s `min_not_zero(num_request_queues, num_vqs)`, then
/// `blk_mq_num_possible_queues()`): the device's `num_queues` (1 without
/// `VIRTIO_BLK_F_MQ`), capped by the `num_request_queues` parameter unless
/// it is 0. `Err` when MQ is advertised with zero queues.
pub fn num_vqs(dev_num_queues: Option<u16>, param: u32) -> Result<u32, ()> {
    let n = match dev_num_queues {
        None => 1,
        Some(0) => return Err(()),
        Some(n) => n as u32,
    };
    Ok(if param == 0 { n } else { n.min(param) })
}

/// Of `num_vqs` virtqueues, how many serve polled I/O (C `virtio_blk`:
/// `min(poll_queues, num_vqs - 1)`, so that one queue with interrupts
/// remains; it depends on the device, so it is adjusted at probe, as in C,
/// and logged with the queue counts).
pub fn poll_vqs(num_vqs: u32, poll_queues: u32) -> u32 {
    poll_queues.min(num_vqs.saturating_sub(1))
}

/// Queue depth: the `queue_depth` parameter if set, else fill the ring
/// (half of it without indirect descriptors, which cost two per request).
pub fn queue_depth(param: u32, ring_free: u32, indirect: bool) -> u32 {
    if param != 0 {
        param
    } else if indirect {
        ring_free.max(1)
    } else {
        (ring_free / 2).max(1)
    }
}

/// C `virtblk_name_format`: `prefix` + the legacy base-26 name of `index`
/// (`a`..`z`, `aa`..`zz`, `aaa`..), NUL-terminated in `buf`. Returns the
/// length without the NUL, or `None` if `buf` is too small.
pub fn name_format(prefix: &[u8], index: u32, buf: &mut [u8]) -> Option<usize> {
    let mut letters = [0u8; 8];
    let mut n = 0;
    let mut i = index as i64;
    loop {
        letters[n] = b'a' + (i % 26) as u8;
        n += 1;
        i = i / 26 - 1;
        if i < 0 {
            break;
        }
    }
    let len = prefix.len() + n;
    if len + 1 > buf.len() {
        return None;
    }
    buf[..prefix.len()].copy_from_slice(prefix);
    for k in 0..n {
        buf[prefix.len() + k] = letters[n - 1 - k];
    }
    buf[len] = 0;
    Some(len)
}

/// Length of the serial in a GET_ID answer: up to the first NUL, at most
/// [`VIRTIO_BLK_ID_BYTES`].
pub fn serial_len(id: &[u8]) -> usize {
    let max = id.len().min(VIRTIO_BLK_ID_BYTES);
    id[..max].iter().position(|&b| b == 0).unwrap_or(max)
}

/// `cache_type` attribute values, index = writeback.
pub const CACHE_TYPES: [&str; 2] = ["write through", "write back"];

/// Parses a `cache_type` store like `sysfs_match_string`: an exact match,
/// ignoring one trailing newline.
pub fn parse_cache_type(s: &[u8]) -> Option<u8> {
    let s = s.strip_suffix(b"\n").unwrap_or(s);
    CACHE_TYPES
        .iter()
        .position(|t| t.as_bytes() == s)
        .map(|i| i as u8)
}
