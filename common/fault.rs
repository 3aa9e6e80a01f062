// SPDX-License-Identifier: GPL-2.0

//! Fault injection as the kernel's `fault_attr` does it (lib/fault-inject.c),
//! for C null_blk's `timeout` and `requeue` parameters: the text
//! `<interval>,<probability>,<space>,<times>` ([`FaultConfig::parse`]) and
//! the decision of `should_fail()` ([`Fault::should_fail`]).
//!
//! - `probability`: percent of the eligible calls that fail (0 never; 100
//!   and more always);
//! - `interval`: only every `interval`-th call is eligible (0 and 1: all);
//! - `space`: the first `space` units (here: calls of size 1) never fail;
//! - `times`: how many failures at most, -1 for no limit.
//!
//! No kernel dependencies: the host unit tests compile this file.

use core::sync::atomic::{AtomicI32, AtomicU64, Ordering};

/// A parsed fault configuration. The default never fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FaultConfig {
    /// Every `interval`-th eligible call may fail (0 and 1: every call).
    pub interval: u64,
    /// Percent of eligible calls that fail.
    pub probability: u64,
    /// Size (here: calls) that passes before any call may fail.
    pub space: i32,
    /// Failures left, -1 for no limit.
    pub times: i32,
}

impl Default for FaultConfig {
    /// C's `FAULT_ATTR_INITIALIZER`: probability 0 (never fails), interval
    /// 1, space 0, times 1.
    fn default() -> Self {
        Self {
            interval: 1,
            probability: 0,
            space: 0,
            times: 1,
        }
    }
}

/// Parse one unsigned decimal number as C's `%lu` (leading `+` or
/// white space allowed, no sign).
fn parse_u64(s: &str) -> Option<u64> {
    let s = s.trim_start();
    let s = s.strip_prefix('+').unwrap_or(s);
    if s.is_empty() || !s.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Parse one signed decimal number as C's `%d`.
fn parse_i32(s: &str) -> Option<i32> {
    let s = s.trim_start();
    let (neg, digits) = match s.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let v: i64 = digits.parse().ok()?;
    i32::try_from(if neg { -v } else { v }).ok()
}

impl FaultConfig {
    /// Parse `<interval>,<probability>,<space>,<times>`; an empty text (the
    /// parameter's default) is no fault injection. `None` for anything
    /// else, which C null_blk refuses at load time with `EINVAL` (after
    /// "FAULT_INJECTION: failed to parse arguments").
    ///
    /// C's `sscanf()` ignores what follows the fourth number; so does this,
    /// if it starts with white space (a trailing newline from configfs or
    /// `echo`), and refuses other trailing text, which `sscanf()` would
    /// silently drop.
    pub fn parse(text: &[u8]) -> Option<Self> {
        let text = core::str::from_utf8(text).ok()?;
        if text.is_empty() {
            return Some(Self::default());
        }
        let mut fields = text.trim_end().splitn(4, ',');
        let interval = parse_u64(fields.next()?)?;
        let probability = parse_u64(fields.next()?)?;
        let space = parse_i32(fields.next()?)?;
        let times = parse_i32(fields.next()?)?;
        Some(Self {
            interval,
            probability,
            space,
            times,
        })
    }

    /// Whether this configuration can ever fail a call.
    pub fn enabled(&self) -> bool {
        self.probability > 0 && self.times != 0
    }
}

/// The state of one fault point: a [`FaultConfig`] and its counters. Its
/// settings can change while it is in use, as C's `fault_config`
/// attributes do (configfs `timeout_inject/probability`, ...).
#[derive(Debug)]
pub struct Fault {
    interval: AtomicU64,
    probability: AtomicU64,
    /// C's `verbose` (2 at first, as C's): kept and shown; this
    /// implementation logs nothing.
    verbose: AtomicU64,
    space: AtomicI32,
    times: AtomicI32,
    count: AtomicU64,
    /// xorshift64* state for the probability draw.
    random: AtomicU64,
}

impl Fault {
    /// A fault point configured by `config`, its random draws seeded by
    /// `seed` (any value; e.g. a clock).
    pub fn new(config: FaultConfig, seed: u64) -> Self {
        Self {
            interval: AtomicU64::new(config.interval),
            probability: AtomicU64::new(config.probability),
            // C's `FAULT_ATTR_INITIALIZER`
            verbose: AtomicU64::new(2),
            space: AtomicI32::new(config.space),
            times: AtomicI32::new(config.times),
            count: AtomicU64::new(0),
            // xorshift must not start at 0
            random: AtomicU64::new(seed | 1),
        }
    }

    /// A number below 100, uniformly enough for fault injection.
    fn below_100(&self) -> u64 {
        let mut x = self.random.load(Ordering::Relaxed);
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        // Racing callers may draw the same number; that is harmless here.
        self.random.store(x, Ordering::Relaxed);
        (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) % 100
    }

    /// Whether this call fails: C's `should_fail(attr, 1)`.
    #[inline]
    pub fn should_fail(&self) -> bool {
        if self.probability.load(Ordering::Relaxed) == 0 || self.times.load(Ordering::Relaxed) == 0
        {
            return false;
        }
        self.should_fail_slow()
    }

    /// `probability`: percent of the eligible calls that fail.
    pub fn probability(&self) -> u64 {
        self.probability.load(Ordering::Relaxed)
    }

    /// Set `probability`.
    pub fn set_probability(&self, v: u64) {
        self.probability.store(v, Ordering::Relaxed);
    }

    /// `interval`: every `interval`-th call is eligible.
    pub fn interval(&self) -> u64 {
        self.interval.load(Ordering::Relaxed)
    }

    /// Set `interval`.
    pub fn set_interval(&self, v: u64) {
        self.interval.store(v, Ordering::Relaxed);
    }

    /// `times`: failures left, -1 for no limit.
    pub fn times(&self) -> i32 {
        self.times.load(Ordering::Relaxed)
    }

    /// Set `times`.
    pub fn set_times(&self, v: i32) {
        self.times.store(v, Ordering::Relaxed);
    }

    /// `space`: calls left that pass before any may fail.
    pub fn space(&self) -> i32 {
        self.space.load(Ordering::Relaxed)
    }

    /// Set `space`.
    pub fn set_space(&self, v: i32) {
        self.space.store(v, Ordering::Relaxed);
    }

    /// `verbose`.
    pub fn verbose(&self) -> u64 {
        self.verbose.load(Ordering::Relaxed)
    }

    /// Set `verbose`.
    pub fn set_verbose(&self, v: u64) {
        self.verbose.store(v, Ordering::Relaxed);
    }

    fn should_fail_slow(&self) -> bool {
        if self.space.load(Ordering::Relaxed) > 1 {
            self.space.fetch_sub(1, Ordering::Relaxed);
            return false;
        }
        let interval = self.interval.load(Ordering::Relaxed);
        if interval > 1 {
            let count = self.count.fetch_add(1, Ordering::Relaxed) + 1;
            if count % interval != 0 {
                return false;
            }
        }
        if self.probability.load(Ordering::Relaxed) <= self.below_100() {
            return false;
        }
        // Count down a limited number of failures, not below 0.
        let _ = self
            .times
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |t| match t {
                -1 | 0 => None,
                t => Some(t - 1),
            });
        true
    }
}
