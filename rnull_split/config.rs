// SPDX-License-Identifier: GPL-2.0

//! Module parameters (declared in the crate root's `module!`, named and
//! defaulted as C null_blk's) and their validation into a [`DeviceConfig`].

use crate::{
    module_parameters as p,
    params::{DeviceConfig, ParamError, RawParams},
    zoned::ZonedConfig,
};
use kernel::{module_param::ModuleParam, prelude::*, str::BStr};

/// The text of a string parameter, kept as given, up to `N` bytes (C's
/// `module_param_string` keeps a buffer of its own too).
///
/// It is checked with the other parameters in [`from_module_params`], so a
/// bad value gets the same message as a bad number; a longer text is kept
/// as too long and refused there.
#[derive(Clone, Copy)]
pub(crate) struct TextArg<const N: usize> {
    /// `None` if the text did not fit.
    len: Option<usize>,
    buf: [u8; N],
}

/// `split_clone`: 15 bytes hold every valid value.
pub(crate) type SplitCloneArg = TextArg<15>;
/// `timeout`, `requeue`, `init_hctx`: C null_blk's 80-byte buffers hold 79
/// bytes.
pub(crate) type FaultArg = TextArg<79>;

impl SplitCloneArg {
    /// The default, `fast`.
    pub(crate) const FAST: Self = Self::new(b"fast");
}

impl<const N: usize> TextArg<N> {
    /// No text.
    pub(crate) const EMPTY: Self = Self::new(b"");

    const fn new(s: &[u8]) -> Self {
        let mut buf = [0u8; N];
        if s.len() > N {
            return Self { len: None, buf };
        }
        let mut i = 0;
        while i < s.len() {
            buf[i] = s[i];
            i += 1;
        }
        Self { len: Some(i), buf }
    }

    /// The text, or one no validator accepts if it was too long.
    fn as_bytes(&self) -> &[u8] {
        match self.len {
            Some(len) => self.buf.get(..len).unwrap_or(&[]),
            None => b"\xff(too long)",
        }
    }
}

impl<const N: usize> ModuleParam for TextArg<N> {
    fn try_from_param_arg(arg: &BStr) -> Result<Self> {
        Ok(Self::new(arg))
    }

    /// The text as given, as C's `module_param_string` shows it.
    fn show(&self, out: &mut impl core::fmt::Write) -> core::fmt::Result {
        match core::str::from_utf8(self.as_bytes()) {
            Ok(text) => out.write_str(text),
            Err(_) => out.write_str("(not UTF-8)"),
        }
    }
}

/// Read and validate the module parameters.
///
/// Returns the configuration of every load-time device and their number, or
/// `EINVAL` after logging which parameter is wrong and what it accepts.
pub(crate) fn from_module_params() -> Result<(DeviceConfig, u32)> {
    let split_clone = p::split_clone.value();
    let timeout = p::timeout.value();
    let requeue = p::requeue.value();
    let init_hctx = p::init_hctx.value();
    let raw = RawParams {
        gb: p::gb.value(),
        bs: p::bs.value(),
        nr_devices: p::nr_devices.value(),
        submit_queues: p::submit_queues.value(),
        poll_queues: p::poll_queues.value(),
        hw_queue_depth: p::hw_queue_depth.value(),
        max_sectors: p::max_sectors.value(),
        queue_mode: p::queue_mode.value(),
        irqmode: p::irqmode.value(),
        completion_nsec: p::completion_nsec.value(),
        memory_backed: p::memory_backed.value(),
        discard: p::discard.value(),
        blocking: p::blocking.value(),
        shared_tags: p::shared_tags.value(),
        shared_tag_bitmap: p::shared_tag_bitmap.value(),
        no_sched: p::no_sched.value(),
        rotational: p::rotational.value(),
        split_clone: split_clone.as_bytes(),
        timeout: timeout.as_bytes(),
        requeue: requeue.as_bytes(),
        init_hctx: init_hctx.as_bytes(),
        mbps: p::mbps.value(),
        cache_size: p::cache_size.value(),
        fua: p::fua.value(),
        zoned: p::zoned.value(),
        zone: ZonedConfig {
            zone_size_mb: p::zone_size.value(),
            zone_capacity_mb: p::zone_capacity.value(),
            nr_conv: p::zone_nr_conv.value(),
            max_open: p::zone_max_open.value(),
            max_active: p::zone_max_active.value(),
            append_max_sectors: p::zone_append_max_sectors.value(),
            full: p::zone_full.value(),
        },
    };
    let nr_cpus = kernel::cpu::nr_cpu_ids();
    let mut raw = raw;
    if cfg!(null_blk) {
        raw.adjust_like_c(nr_cpus, |a| {
            pr_warn!(
                "{}={} adjusted to {}, as C null_blk does\n",
                a.name,
                a.from,
                a.to
            );
        });
    }
    let (config, n) = raw.validate(nr_cpus).map_err(|e| {
        pr_err!("{}\n", e);
        EINVAL
    })?;
    Ok((config, n))
}

impl kernel::fmt::Display for ParamError {
    fn fmt(&self, f: &mut kernel::fmt::Formatter<'_>) -> kernel::fmt::Result {
        core::fmt::Display::fmt(self, f)
    }
}
