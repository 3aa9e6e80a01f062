// SPDX-License-Identifier: GPL-2.0

//! Validation of rnull_split's configuration (module parameters and configfs
//! attributes), with C null_blk's names, defaults and meaning.
//!
//! Pure logic: compiled into the module and, unchanged, into the host unit
//! tests (`host-tests/`). Unlike C null_blk, nothing is clamped silently: a
//! value out of range is refused with a [`ParamError`] that names the
//! parameter, the value and what is accepted.

use crate::fault::FaultConfig;
use crate::zoned::{LayoutError, ZonedConfig};
use core::fmt;

/// Sector size of the block layer, in bytes.
pub const SECTOR_SIZE: u64 = 512;
/// `PAGE_SIZE` on the architectures we build for.
pub const PAGE_SIZE: u32 = 4096;
/// Deepest hardware queue blk-mq allows (`BLK_MQ_MAX_DEPTH`).
pub const MAX_QUEUE_DEPTH: u32 = 10240;
/// Most devices one module load may create.
pub const MAX_DEVICES: u32 = 1024;
/// Largest device, in GiB (1 PiB).
pub const MAX_GB: u32 = 1 << 20;
/// Longest simulated completion time for `irqmode=2`, in ns (10 s: well
/// within the block layer's 30 s request timeout; blktests uses up to 2 s).
pub const MAX_COMPLETION_NSEC: u64 = 10_000_000_000;

/// How requests reach the driver (`queue_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueMode {
    /// `0`: bio-based; the driver splits bios itself.
    Bio,
    /// `2`: blk-mq; the block layer splits bios before they reach the driver.
    Mq,
}

/// How a completion is signalled (`irqmode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IrqMode {
    /// `0`: complete inline in the submission path.
    None,
    /// `1`: complete through the block layer's softirq / IPI path.
    Softirq,
    /// `2`: complete from a timer after `completion_nsec`.
    Timer,
}

/// How a bio-based device makes the pieces of a split bio (`split_clone`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SplitClone {
    /// `bio_split()`: the piece shares the parent's bvec table (since 2015).
    Fast,
    /// The pre-2015 `bio_clone_bioset()`: the piece gets a copy of every
    /// remaining bvec of its parent.
    Deep,
}

impl SplitClone {
    /// Parse the parameter string (`fast` or `deep`, a trailing newline
    /// allowed as written by `echo` into configfs).
    pub fn parse(s: &[u8]) -> Option<Self> {
        match trim_newline(s) {
            b"fast" => Some(Self::Fast),
            b"deep" => Some(Self::Deep),
            _ => None,
        }
    }

    /// The parameter string.
    pub fn name(self) -> &'static str {
        match self {
            Self::Fast => "fast",
            Self::Deep => "deep",
        }
    }
}

/// Strip one trailing `\n`.
pub fn trim_newline(s: &[u8]) -> &[u8] {
    s.strip_suffix(b"\n").unwrap_or(s)
}

/// Raw parameter values, typed as C null_blk declares them.
#[derive(Clone, Copy, Debug)]
pub struct RawParams<'a> {
    /// `gb`: size in GiB.
    pub gb: i32,
    /// `bs`: logical (and physical) block size in bytes.
    pub bs: i32,
    /// `nr_devices`: devices created at load time.
    pub nr_devices: u32,
    /// `submit_queues`: hardware queues.
    pub submit_queues: i32,
    /// `poll_queues`: hardware queues for polled I/O, besides those.
    pub poll_queues: i32,
    /// `hw_queue_depth`: tags per hardware queue.
    pub hw_queue_depth: i32,
    /// `max_sectors`: largest request in 512-byte sectors, 0 = block layer default.
    pub max_sectors: i32,
    /// `queue_mode`: 0 = bio, 2 = blk-mq.
    pub queue_mode: i32,
    /// `irqmode`: 0 = none, 1 = softirq, 2 = timer.
    pub irqmode: i32,
    /// `completion_nsec`: completion time for `irqmode=2`.
    pub completion_nsec: u64,
    /// `memory_backed`: keep written data.
    pub memory_backed: bool,
    /// `discard`: support discard (needs `memory_backed`).
    pub discard: bool,
    /// `blocking`: `queue_rq` may sleep (`BLK_MQ_F_BLOCKING`).
    pub blocking: bool,
    /// `shared_tags`: use the tag set shared by every device that sets it.
    pub shared_tags: bool,
    /// `shared_tag_bitmap`: one tag bitmap for all hardware queues.
    pub shared_tag_bitmap: bool,
    /// `no_sched`: no I/O scheduler by default.
    pub no_sched: bool,
    /// `rotational`: the disk says it is rotational.
    pub rotational: bool,
    /// `split_clone`: `fast` or `deep`.
    pub split_clone: &'a [u8],
    /// `timeout`: fault injection, requests left to time out
    /// (`<interval>,<probability>,<space>,<times>`, empty for none).
    pub timeout: &'a [u8],
    /// `requeue`: fault injection, requests requeued (same format).
    pub requeue: &'a [u8],
    /// `init_hctx`: fault injection, hardware queue set-ups that fail
    /// (same format), counted over all devices of the module.
    pub init_hctx: &'a [u8],
    /// `mbps`: bandwidth limit in MiB/s, 0 for none.
    pub mbps: u32,
    /// `cache_size`: write-back cache in MiB, 0 for none (needs
    /// `memory_backed`).
    pub cache_size: u64,
    /// `fua`: with a cache, writes may ask for FUA.
    pub fua: bool,
    /// `zoned`: a zoned device, with the `zone_*` parameters.
    pub zoned: bool,
    /// `zone_size` (MiB), `zone_capacity` (MiB), `zone_nr_conv`,
    /// `zone_max_open`, `zone_max_active`, `zone_append_max_sectors`,
    /// `zone_full`.
    pub zone: ZonedConfig,
}

impl Default for RawParams<'_> {
    /// C null_blk's defaults (with our `split_clone=fast`).
    fn default() -> Self {
        Self {
            gb: 250,
            bs: 512,
            nr_devices: 1,
            submit_queues: 1,
            poll_queues: 1,
            hw_queue_depth: 64,
            max_sectors: 0,
            queue_mode: 2,
            irqmode: 1,
            completion_nsec: 10_000,
            memory_backed: false,
            discard: false,
            blocking: false,
            shared_tags: false,
            shared_tag_bitmap: false,
            no_sched: false,
            rotational: false,
            split_clone: b"fast",
            timeout: b"",
            requeue: b"",
            init_hctx: b"",
            mbps: 0,
            cache_size: 0,
            fua: true,
            zoned: false,
            zone: ZonedConfig::default(),
        }
    }
}

/// A validated device configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceConfig {
    /// Capacity in 512-byte sectors.
    pub capacity_sectors: u64,
    /// Logical and physical block size in bytes.
    pub block_size: u32,
    /// Hardware queues.
    pub submit_queues: u32,
    /// Hardware queues for polled I/O (blk-mq only), after those.
    pub poll_queues: u32,
    /// Tags per hardware queue.
    pub hw_queue_depth: u32,
    /// Largest request in sectors, 0 = block layer default.
    pub max_sectors: u32,
    /// Bio-based or blk-mq.
    pub queue_mode: QueueMode,
    /// Completion path.
    pub irqmode: IrqMode,
    /// Completion delay for [`IrqMode::Timer`].
    pub completion_nsec: u64,
    /// Keep data written to the device.
    pub memory_backed: bool,
    /// Accept discard requests.
    pub discard: bool,
    /// `queue_rq` may sleep; a memory-backed device always may.
    pub blocking: bool,
    /// Use the tag set shared by all devices that set this, made with the
    /// module parameters' queues, tags and flags (C null_blk's global one).
    pub shared_tags: bool,
    /// All hardware queues share one tag bitmap (`BLK_MQ_F_TAG_HCTX_SHARED`).
    pub shared_tag_bitmap: bool,
    /// No I/O scheduler by default (`BLK_MQ_F_NO_SCHED_BY_DEFAULT`).
    pub no_sched: bool,
    /// Rotational media (`BLK_FEAT_ROTATIONAL`, `queue/rotational` 1).
    pub rotational: bool,
    /// Clone flavour for bio-mode splits.
    pub split_clone: SplitClone,
    /// Requests left to time out (blk-mq; C null_blk's `timeout`).
    pub timeout_inject: FaultConfig,
    /// Requests requeued (blk-mq; C null_blk's `requeue`).
    pub requeue_inject: FaultConfig,
    /// Hardware queue set-ups that fail (blk-mq; C null_blk's `init_hctx`).
    /// The module parameter's is the module's: its count runs over all
    /// devices, as in C null_blk.
    pub init_hctx_inject: FaultConfig,
    /// Bandwidth limit in MiB/s, 0 for none (blk-mq).
    pub mbps: u32,
    /// Write-back cache in MiB, 0 for none (blk-mq, memory-backed).
    pub cache_size_mb: u64,
    /// With a cache, writes may ask for forced unit access.
    pub fua: bool,
    /// A request that meets a bad range clears it (configfs
    /// `badblocks_once`).
    pub badblocks_once: bool,
    /// A request that meets a bad range transfers the blocks before it
    /// (configfs `badblocks_partial_io`).
    pub badblocks_partial_io: bool,
    /// A zoned device (blk-mq), laid out by `zone`.
    pub zoned: bool,
    /// The zone parameters, used when `zoned`.
    pub zone: ZonedConfig,
}

/// A refused parameter value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamError {
    /// The parameter's name, as the user typed it.
    pub name: &'static str,
    /// The refused value.
    pub value: Value,
    /// What is accepted, as a phrase ("a power of two from 512 to 4096").
    pub expected: &'static str,
}

/// A parameter value, for messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value {
    /// A number.
    Int(i64),
    /// An unsigned number (a `ulong` parameter may not fit an `i64`).
    UInt(u64),
    /// A boolean.
    Bool(bool),
    /// A string that was not accepted (not shown, may be arbitrary bytes).
    Text,
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.value {
            Value::Int(v) => write!(f, "invalid {}={}: must be {}", self.name, v, self.expected),
            Value::UInt(v) => write!(f, "invalid {}={}: must be {}", self.name, v, self.expected),
            Value::Bool(v) => write!(
                f,
                "invalid {}={}: must be {}",
                self.name, v as u8, self.expected
            ),
            Value::Text => write!(f, "invalid {}: must be {}", self.name, self.expected),
        }
    }
}

fn err(name: &'static str, value: i64, expected: &'static str) -> ParamError {
    ParamError {
        name,
        value: Value::Int(value),
        expected,
    }
}

/// Check that `v` lies in `lo..=hi`.
fn in_range(
    name: &'static str,
    v: i64,
    lo: i64,
    hi: i64,
    expected: &'static str,
) -> Result<u64, ParamError> {
    if v < lo || v > hi {
        return Err(err(name, v, expected));
    }
    Ok(v as u64)
}

/// Validate a block size: a power of two from 512 to `PAGE_SIZE`.
pub fn validate_bs(bs: i64) -> Result<u32, ParamError> {
    const EXPECTED: &str = "a power of two from 512 to 4096";
    let v = in_range("bs", bs, 512, PAGE_SIZE as i64, EXPECTED)?;
    if !v.is_power_of_two() {
        return Err(err("bs", bs, EXPECTED));
    }
    Ok(v as u32)
}

/// Validate `max_sectors` for block size `bs`: 0 (default) or a multiple of
/// the block size in sectors, at least one page (8). No upper bound, as C
/// null_blk (the queue's `max_hw_sectors`; the block layer keeps the soft
/// `max_sectors` at 2560 until `queue/max_sectors_kb` raises it).
pub fn validate_max_sectors(max_sectors: i64, bs: u32) -> Result<u32, ParamError> {
    const EXPECTED: &str =
        "0 (default) or at least 8 sectors and a multiple of the block size in sectors";
    if max_sectors == 0 {
        return Ok(0);
    }
    let page_sectors = (PAGE_SIZE as u64 / SECTOR_SIZE) as i64;
    let v = in_range(
        "max_sectors",
        max_sectors,
        page_sectors,
        u32::MAX as i64,
        EXPECTED,
    )?;
    // `bs` is a validated block size (at least one sector), so the
    // remainder is defined; `checked_rem` says so without a panic path.
    if v.checked_rem(bs as u64 / SECTOR_SIZE) != Some(0) {
        return Err(err("max_sectors", max_sectors, EXPECTED));
    }
    Ok(v as u32)
}

/// Validate the size in GiB and return the capacity in sectors.
pub fn validate_gb(gb: i64) -> Result<u64, ParamError> {
    let gb = in_range("gb", gb, 1, MAX_GB as i64, "from 1 to 1048576 (GiB)")?;
    Ok(gb_to_sectors(gb))
}

/// GiB to 512-byte sectors.
pub const fn gb_to_sectors(gb: u64) -> u64 {
    gb * (1 << 30) / SECTOR_SIZE
}

/// MiB (configfs `size`) to 512-byte sectors.
pub const fn mb_to_sectors(mb: u64) -> u64 {
    mb * (1 << 20) / SECTOR_SIZE
}

/// Validate `submit_queues` against the number of possible CPUs.
pub fn validate_submit_queues(q: i64, nr_cpus: u32) -> Result<u32, ParamError> {
    let v = in_range(
        "submit_queues",
        q,
        1,
        nr_cpus as i64,
        "from 1 to the number of possible CPUs",
    )?;
    Ok(v as u32)
}

/// Validate `poll_queues` against the number of possible CPUs (C null_blk
/// has `poll_queues` queues for polled I/O, 0 for none, besides its
/// `submit_queues`).
pub fn validate_poll_queues(q: i64, nr_cpus: u32) -> Result<u32, ParamError> {
    let v = in_range(
        "poll_queues",
        q,
        0,
        nr_cpus as i64,
        "from 0 to the number of possible CPUs",
    )?;
    Ok(v as u32)
}

/// Validate `hw_queue_depth`.
pub fn validate_hw_queue_depth(d: i64) -> Result<u32, ParamError> {
    let v = in_range(
        "hw_queue_depth",
        d,
        1,
        MAX_QUEUE_DEPTH as i64,
        "from 1 to 10240",
    )?;
    Ok(v as u32)
}

/// Validate `queue_mode`.
pub fn validate_queue_mode(m: i64) -> Result<QueueMode, ParamError> {
    match m {
        0 => Ok(QueueMode::Bio),
        2 => Ok(QueueMode::Mq),
        _ => Err(err(
            "queue_mode",
            m,
            "0 (bio) or 2 (blk-mq); 1 (legacy request queue) no longer exists",
        )),
    }
}

/// Validate `irqmode`.
pub fn validate_irqmode(m: i64) -> Result<IrqMode, ParamError> {
    match m {
        0 => Ok(IrqMode::None),
        1 => Ok(IrqMode::Softirq),
        2 => Ok(IrqMode::Timer),
        _ => Err(err("irqmode", m, "0 (none), 1 (softirq) or 2 (timer)")),
    }
}

/// Validate `completion_nsec`.
pub fn validate_completion_nsec(ns: u64) -> Result<u64, ParamError> {
    if ns > MAX_COMPLETION_NSEC {
        return Err(ParamError {
            name: "completion_nsec",
            value: Value::UInt(ns),
            expected: "at most 10000000000 (10 s)",
        });
    }
    Ok(ns)
}

/// Validate `split_clone`.
pub fn validate_split_clone(s: &[u8]) -> Result<SplitClone, ParamError> {
    SplitClone::parse(s).ok_or(ParamError {
        name: "split_clone",
        value: Value::Text,
        expected: "fast or deep",
    })
}

/// Validate `cache_size` (MiB, 0 for no cache).
pub fn validate_cache_size(mb: u64) -> Result<u64, ParamError> {
    if mb > MAX_SIZE_MB {
        return Err(ParamError {
            name: "cache_size",
            value: Value::UInt(mb),
            expected: "from 0 (no cache) to 1073741824 (MiB)",
        });
    }
    Ok(mb)
}

/// Validate `mbps` (MiB/s, 0 for no limit).
pub fn validate_mbps(mbps: i64) -> Result<u32, ParamError> {
    let v = in_range(
        "mbps",
        mbps,
        0,
        crate::throttle::MAX_MBPS.into(),
        "from 0 (no limit) to 40960 (MiB/s)",
    )?;
    Ok(v as u32)
}

/// Why text written for a number was refused, as C's `kstrto*()` say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KstrtoxError {
    /// `EINVAL`: not a number in the accepted form.
    Invalid,
    /// `ERANGE`: a number out of the type's range.
    Range,
}

/// What C code reads of `s`: the bytes before the first NUL, if any (C
/// null_blk reads the configfs page as a string; configfs ends it with a
/// NUL after what was written).
fn c_string(s: &[u8]) -> &[u8] {
    s.split(|&c| c == 0).next().unwrap_or(s)
}

/// C's `_kstrtoull(s, 0)`: no sign; `0x` or `0X` and a hex digit for hex, a
/// leading `0` for octal, else decimal; then one `\n` at most.
fn kstrtoull_digits(s: &[u8]) -> Result<u64, KstrtoxError> {
    // `_parse_integer_fixup_radix()`: "0x" not followed by a hex digit is
    // octal 0 and a stray "x"
    let (digits, radix) = match s {
        [b'0', b'x' | b'X', rest @ ..] if rest.first().is_some_and(u8::is_ascii_hexdigit) => {
            (rest, 16)
        }
        [b'0', ..] => (s, 8),
        _ => (s, 10),
    };
    // `_parse_integer()`: every digit of the radix there is; an overflow
    // is reported before anything after the digits is looked at
    let mut value: u64 = 0;
    let mut len = 0;
    let mut overflow = false;
    for &c in digits {
        let Some(d) = char::from(c).to_digit(radix) else {
            break;
        };
        match value
            .checked_mul(radix.into())
            .and_then(|v| v.checked_add(d.into()))
        {
            Some(v) => value = v,
            None => overflow = true,
        }
        len += 1;
    }
    if overflow {
        return Err(KstrtoxError::Range);
    }
    if len == 0 {
        return Err(KstrtoxError::Invalid);
    }
    match digits.get(len..).unwrap_or_default() {
        b"" | b"\n" => Ok(value),
        _ => Err(KstrtoxError::Invalid),
    }
}

/// `kstrtoul(s, 0)` (on 64-bit, `kstrtoull(s, 0)`), as C null_blk's
/// configfs stores of `unsigned long` attributes parse: an optional `+`,
/// then `0x` hex, `0` octal or decimal digits, then one `\n` at most.
/// Nothing else, not even white space.
pub fn kstrtoul(s: &[u8]) -> Result<u64, KstrtoxError> {
    let s = c_string(s);
    kstrtoull_digits(s.strip_prefix(b"+").unwrap_or(s))
}

/// `kstrtouint(s, 0)`: [`kstrtoul`] within `u32`.
pub fn kstrtouint(s: &[u8]) -> Result<u32, KstrtoxError> {
    u32::try_from(kstrtoul(s)?).map_err(|_| KstrtoxError::Range)
}

/// `kstrtoll(s, 0)`: [`kstrtoul`] within `i64`, or a `-` and the digits
/// (then no `+`).
pub fn kstrtoll(s: &[u8]) -> Result<i64, KstrtoxError> {
    let s = c_string(s);
    match s.strip_prefix(b"-") {
        Some(digits) => 0i64
            .checked_sub_unsigned(kstrtoull_digits(digits)?)
            .ok_or(KstrtoxError::Range),
        None => i64::try_from(kstrtoul(s)?).map_err(|_| KstrtoxError::Range),
    }
}

/// `kstrtoint(s, 0)`: [`kstrtoll`] within `i32`.
pub fn kstrtoint(s: &[u8]) -> Result<i32, KstrtoxError> {
    i32::try_from(kstrtoll(s)?).map_err(|_| KstrtoxError::Range)
}

/// One unsigned number as `kstrtoull(s, 0)` ([`kstrtoul`]), `None` for
/// anything it refuses.
pub fn kstrtoull(s: &str) -> Option<u64> {
    kstrtoul(s.as_bytes()).ok()
}

/// A number type and the `kstrto*()` function, base 0, that C uses for it.
pub trait Kstrtox: Sized {
    /// The C type, for messages.
    const C_TYPE: &'static str;

    /// Parse `s` as the C function does.
    fn kstrtox(s: &[u8]) -> Result<Self, KstrtoxError>;
}

impl Kstrtox for u32 {
    const C_TYPE: &'static str = "unsigned int";

    fn kstrtox(s: &[u8]) -> Result<Self, KstrtoxError> {
        kstrtouint(s)
    }
}

impl Kstrtox for u64 {
    const C_TYPE: &'static str = "unsigned long";

    fn kstrtox(s: &[u8]) -> Result<Self, KstrtoxError> {
        kstrtoul(s)
    }
}

impl Kstrtox for i32 {
    const C_TYPE: &'static str = "int";

    fn kstrtox(s: &[u8]) -> Result<Self, KstrtoxError> {
        kstrtoint(s)
    }
}

impl Kstrtox for i64 {
    const C_TYPE: &'static str = "long long";

    fn kstrtox(s: &[u8]) -> Result<Self, KstrtoxError> {
        kstrtoll(s)
    }
}

/// `kstrtobool(s)`, as C null_blk's configfs stores of `bool` attributes
/// parse: only the first character counts, or the first two for `on` and
/// `off`. `1`, `y`, `t`, `e` (either case) and `on` are true; `0`, `n`, `f`,
/// `d` and `of` false; so `yes`, `true`, `10` and `off` parse too. `None`
/// for anything else, the empty string included.
pub fn kstrtobool(s: &[u8]) -> Option<bool> {
    match c_string(s) {
        [b'1' | b'y' | b'Y' | b't' | b'T' | b'e' | b'E', ..] => Some(true),
        [b'0' | b'n' | b'N' | b'f' | b'F' | b'd' | b'D', ..] => Some(false),
        [b'o' | b'O', b'n' | b'N', ..] => Some(true),
        [b'o' | b'O', b'f' | b'F', ..] => Some(false),
        _ => None,
    }
}

/// Validate a fault injection parameter (`timeout`, `requeue`, `init_hctx`).
pub fn validate_fault(name: &'static str, s: &[u8]) -> Result<FaultConfig, ParamError> {
    FaultConfig::parse(s).ok_or(ParamError {
        name,
        value: Value::Text,
        expected: "<interval>,<probability>,<space>,<times>",
    })
}

/// Validate `discard` against `memory_backed`.
pub fn validate_discard(discard: bool, memory_backed: bool) -> Result<bool, ParamError> {
    if discard && !memory_backed {
        return Err(ParamError {
            name: "discard",
            value: Value::Bool(true),
            expected: "0 unless memory_backed=1",
        });
    }
    Ok(discard)
}

/// Validate `nr_devices`.
pub fn validate_nr_devices(n: u32) -> Result<u32, ParamError> {
    in_range(
        "nr_devices",
        n as i64,
        0,
        MAX_DEVICES as i64,
        "from 0 to 1024",
    )
    .map(|v| v as u32)
}

/// What C null_blk makes of `submit_queues` `q` (`None`: it keeps it) and
/// of a zoned device in bio mode (`true`: blk-mq), each change reported.
fn c_adjust(
    q: i64,
    zoned_bio: bool,
    nr_cpus: u32,
    mut report: impl FnMut(Adjusted),
) -> (Option<i64>, bool) {
    let queues = if q > i64::from(nr_cpus) {
        Some(nr_cpus.into())
    } else if q == 0 {
        Some(1)
    } else {
        None
    };
    if let Some(to) = queues {
        report(Adjusted {
            name: "submit_queues",
            from: q,
            to,
        });
    }
    if zoned_bio {
        report(Adjusted {
            name: "queue_mode",
            from: 0,
            to: 2,
        });
    }
    (queues, zoned_bio)
}

/// A parameter value C null_blk adjusts rather than refuses, and what it
/// became (see [`RawParams::adjust_like_c`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Adjusted {
    /// The parameter.
    pub name: &'static str,
    /// The value given.
    pub from: i64,
    /// The value used.
    pub to: i64,
}

impl RawParams<'_> {
    /// For the `null_blk.ko` build only, whose point is to behave as C
    /// null_blk for tools written against it: the adjustments C makes
    /// instead of refusing a value. `submit_queues` above the possible CPUs
    /// becomes their number, 0 becomes 1; a zoned device is blk-mq
    /// (`queue_mode=0` becomes 2: C 7.3 has no bio mode at all, rnull_split
    /// has one, but not zoned). Each adjustment goes to `report`, which the
    /// caller logs: nothing is changed silently. `rnull_split.ko` refuses
    /// these values.
    pub fn adjust_like_c(&mut self, nr_cpus: u32, report: impl FnMut(Adjusted)) {
        let zoned_bio = self.zoned && self.queue_mode == 0;
        let (queues, to_mq) = c_adjust(self.submit_queues.into(), zoned_bio, nr_cpus, report);
        if let Some(q) = queues {
            self.submit_queues = q as i32;
        }
        if to_mq {
            self.queue_mode = 2;
        }
    }

    /// Validate every parameter; the first bad one is reported.
    ///
    /// Returns the configuration shared by the `nr_devices` devices and their
    /// number.
    pub fn validate(&self, nr_cpus: u32) -> Result<(DeviceConfig, u32), ParamError> {
        let nr_devices = validate_nr_devices(self.nr_devices)?;
        let block_size = validate_bs(self.bs as i64)?;
        let config = DeviceConfig {
            capacity_sectors: validate_gb(self.gb as i64)?,
            block_size,
            submit_queues: validate_submit_queues(self.submit_queues as i64, nr_cpus)?,
            poll_queues: validate_poll_queues(self.poll_queues as i64, nr_cpus)?,
            hw_queue_depth: validate_hw_queue_depth(self.hw_queue_depth as i64)?,
            max_sectors: validate_max_sectors(self.max_sectors as i64, block_size)?,
            queue_mode: validate_queue_mode(self.queue_mode as i64)?,
            irqmode: validate_irqmode(self.irqmode as i64)?,
            completion_nsec: validate_completion_nsec(self.completion_nsec)?,
            memory_backed: self.memory_backed,
            discard: validate_discard(self.discard, self.memory_backed)?,
            blocking: self.blocking,
            shared_tags: self.shared_tags,
            shared_tag_bitmap: self.shared_tag_bitmap,
            no_sched: self.no_sched,
            rotational: self.rotational,
            split_clone: validate_split_clone(self.split_clone)?,
            timeout_inject: validate_fault("timeout", self.timeout)?,
            requeue_inject: validate_fault("requeue", self.requeue)?,
            init_hctx_inject: validate_fault("init_hctx", self.init_hctx)?,
            mbps: validate_mbps(self.mbps.into())?,
            cache_size_mb: validate_cache_size(self.cache_size)?,
            fua: self.fua,
            // configfs attributes only, as in C null_blk
            badblocks_once: false,
            badblocks_partial_io: false,
            zoned: self.zoned,
            zone: self.zone,
        };
        config.validate_zoned()?;
        config.validate_mbps_mode()?;
        config.validate_cache()?;
        Ok((config, nr_devices))
    }
}

/// Largest configfs `size`, in MiB (the same 1 PiB as [`MAX_GB`]).
pub const MAX_SIZE_MB: u64 = (MAX_GB as u64) << 10;

/// Validate the configfs `size` (MiB, C null_blk's unit there) and return the
/// capacity in sectors.
pub fn validate_size_mb(mb: u64) -> Result<u64, ParamError> {
    if mb == 0 || mb > MAX_SIZE_MB {
        return Err(ParamError {
            name: "size",
            value: Value::UInt(mb),
            expected: "from 1 to 1073741824 (MiB)",
        });
    }
    Ok(mb_to_sectors(mb))
}

/// The configfs attribute that sets module parameter `param`: the same name
/// except `gb` (configfs `size`, in MiB) and `bs` (`blocksize`), as in C
/// null_blk.
pub fn configfs_name(param: &'static str) -> &'static str {
    match param {
        "gb" => "size",
        "bs" => "blocksize",
        other => other,
    }
}

impl ParamError {
    /// The same error, naming the configfs attribute instead of the module
    /// parameter.
    pub fn for_configfs(self) -> Self {
        Self {
            name: configfs_name(self.name),
            ..self
        }
    }
}

impl DeviceConfig {
    /// Check a configuration edited one configfs attribute at a time before
    /// it becomes a disk: every field again, and the rules between fields
    /// (`max_sectors` a multiple of the block size, `discard` only with
    /// `memory_backed`, `submit_queues` and `poll_queues` at most `nr_cpus`). Errors name the
    /// module parameter; see [`ParamError::for_configfs`].
    pub fn validate(&self, nr_cpus: u32) -> Result<(), ParamError> {
        let bs = validate_bs(self.block_size as i64)?;
        if self.capacity_sectors == 0 || self.capacity_sectors > gb_to_sectors(MAX_GB as u64) {
            return Err(ParamError {
                name: "size",
                value: Value::Int((self.capacity_sectors / mb_to_sectors(1)) as i64),
                expected: "from 1 to 1073741824 (MiB)",
            });
        }
        validate_max_sectors(self.max_sectors as i64, bs)?;
        validate_submit_queues(self.submit_queues as i64, nr_cpus)?;
        validate_poll_queues(self.poll_queues as i64, nr_cpus)?;
        validate_hw_queue_depth(self.hw_queue_depth as i64)?;
        validate_completion_nsec(self.completion_nsec)?;
        validate_discard(self.discard, self.memory_backed)?;
        validate_mbps(self.mbps.into())?;
        validate_cache_size(self.cache_size_mb)?;
        self.validate_zoned()?;
        self.validate_mbps_mode()?;
        self.validate_cache()?;
        Ok(())
    }

    /// A cache needs a memory-backed blk-mq device (C null_blk drops it on
    /// other devices; we refuse).
    pub fn validate_cache(&self) -> Result<(), ParamError> {
        if self.cache_size_mb == 0 {
            return Ok(());
        }
        let expected = if !self.memory_backed {
            "0 unless memory_backed=1"
        } else if self.queue_mode != QueueMode::Mq {
            "0 unless queue_mode=2"
        } else {
            return Ok(());
        };
        Err(ParamError {
            name: "cache_size",
            value: Value::UInt(self.cache_size_mb),
            expected,
        })
    }

    /// `mbps` needs blk-mq (C null_blk throttles in `queue_rq` only).
    pub fn validate_mbps_mode(&self) -> Result<(), ParamError> {
        if self.mbps != 0 && self.queue_mode != QueueMode::Mq {
            return Err(ParamError {
                name: "mbps",
                value: Value::UInt(self.mbps.into()),
                expected: "0 unless queue_mode=2",
            });
        }
        Ok(())
    }

    /// [`RawParams::adjust_like_c`] for a configfs device, at `power=1`;
    /// also C's `poll_queues` above the module's `poll_queues` parameter,
    /// `module_poll_queues`, which becomes that (`null_validate_conf`).
    pub fn adjust_like_c(
        &mut self,
        nr_cpus: u32,
        module_poll_queues: u32,
        mut report: impl FnMut(Adjusted),
    ) {
        let zoned_bio = self.zoned && self.queue_mode == QueueMode::Bio;
        let (queues, to_mq) = c_adjust(self.submit_queues.into(), zoned_bio, nr_cpus, &mut report);
        if let Some(q) = queues {
            self.submit_queues = q as u32;
        }
        if to_mq {
            self.queue_mode = QueueMode::Mq;
        }
        if self.poll_queues > module_poll_queues {
            report(Adjusted {
                name: "poll_queues",
                from: self.poll_queues.into(),
                to: module_poll_queues.into(),
            });
            self.poll_queues = module_poll_queues;
        }
    }

    /// The values in force once the disk exists, which configfs shows from
    /// then on, as C null_blk writes them back at `power=1`: a
    /// memory-backed disk blocks (`null_validate_conf`), and so does a
    /// zoned one here (its zones are under a mutex).
    pub fn in_force(&mut self) {
        if self.memory_backed || self.zoned {
            self.blocking = true;
        }
    }

    /// Check the zone parameters of a zoned configuration against its size
    /// and block size, and that it is blk-mq.
    pub fn validate_zoned(&self) -> Result<(), ParamError> {
        if !self.zoned {
            return Ok(());
        }
        if self.queue_mode != QueueMode::Mq {
            return Err(ParamError {
                name: "zoned",
                value: Value::Bool(true),
                expected: "0 unless queue_mode=2",
            });
        }
        self.zone
            .layout(self.capacity_sectors, self.block_size)
            .map(|_| ())
            .map_err(|e: LayoutError| {
                let (name, expected) = e.explain();
                let z = &self.zone;
                let value = match name {
                    "zone_size" => z.zone_size_mb,
                    "zone_capacity" => z.zone_capacity_mb,
                    "zone_nr_conv" => z.nr_conv.into(),
                    _ => z.max_open.into(),
                };
                ParamError {
                    name,
                    value: Value::UInt(value),
                    expected,
                }
            })
    }
}

/// Whether `name` is the name of a load-time device (`<prefix>0` ..
/// `<prefix><nr_devices - 1>`, e.g. `rnullb0`), which a configfs directory
/// must not take (C null_blk refuses such a `mkdir` with `EEXIST`).
pub fn is_load_time_name(name: &[u8], prefix: &str, nr_devices: u32) -> bool {
    let Some(index) = name.strip_prefix(prefix.as_bytes()) else {
        return false;
    };
    // the prefix followed by the decimal index as `format!("{}")` writes it
    if index.is_empty() || index.len() > 10 || (index.len() > 1 && index[0] == b'0') {
        return false;
    }
    let mut n: u64 = 0;
    for &c in index {
        if !c.is_ascii_digit() {
            return false;
        }
        n = n * 10 + (c - b'0') as u64;
    }
    n < nr_devices as u64
}
