// SPDX-License-Identifier: GPL-2.0

//! Runtime devices through configfs, like C null_blk's `nullb` directory.
//!
//! ```text
//! cd /sys/kernel/config/rnull_split
//! mkdir disk0               # a device config, defaults from the module parameters
//! echo 1024 > disk0/size    # MiB; also blocksize, max_sectors, queue_mode, ...
//! echo 1 > disk0/power      # validate the whole config, create /dev/disk0
//! echo 0 > disk0/power      # remove the disk (rmdir disk0 also does)
//! ```
//!
//! The model, step by step:
//!
//! 1. The crate root embeds the [`configfs::Subsystem`] that [`subsystem`]
//!    initialises: the directory `rnull_split`, whose data is a [`Config`]
//!    (the module parameters' values and the number of load-time disks).
//!    Its `make_group` ([`configfs::GroupOperations`]) lets `mkdir` create
//!    a [`configfs::Group`] holding a [`DeviceDir`]: the parameters'
//!    [`DeviceConfig`] and no disk. Names of load-time disks (`rnullb0`, ...)
//!    are refused with `EEXIST`. The subsystem directory's read-only
//!    `features` lists the attribute names, as C null_blk's does.
//! 2. Each attribute ([`Attr`], C null_blk's names) shows its value and a
//!    newline; a store parses the text as C null_blk's does (`kstrtobool()`,
//!    `kstrtouint(.., 0)`, `kstrtoul(.., 0)`), checks it with the validator
//!    of the module parameter of the same meaning (`common/params.rs`) and
//!    refuses bad values with `EINVAL` and a message naming the attribute
//!    and the value. While the disk exists every store fails with `EBUSY`
//!    but `power`'s and those of `submit_queues` and `poll_queues`, which
//!    change the live disk's hardware queues as C null_blk's do
//!    (`NullDevice::update_hw_queues`).
//! 3. `power=1` checks the whole configuration again (rules between
//!    attributes, e.g. `max_sectors` against `blocksize`) and creates the
//!    [`NullDevice`] named after the directory; `power=0` drops it, which
//!    removes the disk. `rmdir` drops configfs's references to the
//!    directory; the last one (or that of an attribute file still open)
//!    frees the [`DeviceDir`], and with it the disk. (C null_blk removes the
//!    disk in `drop_item`; `kernel::configfs` hands `drop_item` no way to
//!    reach the child's data.)
//! 4. Every directory holds a reference on this module (configfs takes one
//!    for the item type's owner, which [`configfs_attrs!`] sets to this
//!    module), so `rmmod` waits for `rmdir` of every directory; module exit
//!    then unregisters the subsystem.
//!
//! All of configfs's C interface is behind `kernel::configfs`; this file is
//! safe code over a locked [`DirState`].

use crate::{
    bad_sectors::BadSectors,
    device::{self, DeviceFaults, NullDevice, Shared},
    fault::Fault,
    params::{self, DeviceConfig, IrqMode, Kstrtox, KstrtoxError, ParamError, QueueMode},
    zoned::Cond,
};
use kernel::{
    configfs::{self, AttributeOperations},
    configfs_attrs,
    fmt::{self, Write},
    new_mutex,
    page::PAGE_SIZE,
    prelude::*,
    str::{CString, Formatter},
    sync::{Arc, Mutex},
};

/// The configfs subsystem `rnull_split` (`nullb` for `null_blk.ko`), for the crate root to embed: new
/// directories get `defaults` and may not be named like the `nr_devices`
/// load-time disks; their disks share `shared` (debugfs, the shared tag set).
pub(crate) fn subsystem(
    defaults: DeviceConfig,
    nr_devices: u32,
    shared: Shared,
) -> impl PinInit<configfs::Subsystem<Config>, Error> {
    let item_type = configfs_attrs! {
        container: configfs::Subsystem<Config>,
        data: Config,
        child: DeviceDir,
        attributes: [
            features: 0,
        ],
    };
    configfs::Subsystem::new(
        crate::names::CONFIGFS,
        item_type,
        try_pin_init!(Config {
            defaults,
            nr_devices,
            shared,
        }),
    )
}

/// The data of the subsystem directory: what `mkdir` needs.
#[pin_data]
pub(crate) struct Config {
    /// Configuration of a new directory: the module parameters'.
    defaults: DeviceConfig,
    /// Load-time disks, whose names `mkdir` refuses.
    nr_devices: u32,
    /// What the module's disks share, for the directories' disks.
    shared: Shared,
}

/// `features`: the attribute names a directory has, comma-separated, as C
/// null_blk's `features` lists its own.
#[vtable]
impl AttributeOperations<0> for Config {
    type Data = Config;

    fn show(_config: &Config, page: &mut [u8; PAGE_SIZE]) -> Result<usize> {
        let mut out = Formatter::new(page);
        for (i, attr) in ATTRS.iter().enumerate() {
            let sep = if i + 1 == ATTRS.len() { "\n" } else { "," };
            write!(out, "{}{}", attr.name(), sep)?;
        }
        Ok(out.bytes_written())
    }
}

#[vtable]
impl configfs::GroupOperations for Config {
    type Child = DeviceDir;

    /// `mkdir`: a directory with the module parameters' configuration and
    /// no disk.
    fn make_group(&self, name: &CStr) -> Result<impl PinInit<configfs::Group<DeviceDir>, Error>> {
        if params::is_load_time_name(name.to_bytes(), crate::names::DISK, self.nr_devices) {
            pr_err!("{}: name of a load-time device\n", name);
            return Err(EEXIST);
        }
        let defaults = self.defaults;
        let shared = self.shared.clone();
        let badblocks = BadSectors::new()?;
        // As C null_blk: the directory's fault points start as the module
        // parameters' and are its own from then on, across power cycles.
        let faults = DeviceFaults::new(&defaults, name)?;
        let mut fault_dirs = KVec::with_capacity(3, GFP_KERNEL)?;
        for (dir_name, fault) in [
            (c"timeout_inject", &faults.timeout),
            (c"requeue_inject", &faults.requeue),
            (c"init_hctx_fault_inject", &faults.init_hctx),
        ] {
            let path = CString::try_from_fmt(fmt!("{}/{}", name, dir_name))?;
            let (dir, _) = configfs::DefaultGroup::new(
                dir_name.try_into()?,
                fault_item_type(),
                try_pin_init!(FaultDir {
                    path,
                    fault: fault.clone(),
                }),
            )?;
            fault_dirs.push(dir, GFP_KERNEL)?;
        }
        Ok(configfs::Group::new_with_default_groups(
            name.try_into()?,
            device_item_type(),
            try_pin_init!(DeviceDir {
                name: name.try_into()?,
                shared,
                faults,
                state <- new_mutex!(DirState {
                    config: defaults,
                    disk: None,
                    badblocks,
                    kept: None,
                    index: 0,
                }),
            }),
            fault_dirs,
        ))
    }
}

// --- one directory ------------------------------------------------------------

/// One directory under `/sys/kernel/config/rnull_split/`.
#[pin_data]
pub(crate) struct DeviceDir {
    /// The directory's name, which names the disk too.
    name: CString,
    /// What the disk shares with the module's other disks.
    shared: Shared,
    /// The fault points the directory's fault injection directories set.
    faults: DeviceFaults,
    #[pin]
    state: Mutex<DirState>,
}

/// A device directory's configuration and, while powered, its disk.
struct DirState {
    config: DeviceConfig,
    /// `Some` exactly while `power` reads 1.
    disk: Option<NullDevice>,
    /// `badblocks`, which changes while the disk runs, and the disk checks.
    badblocks: Arc<BadSectors>,
    /// A memory-backed disk's stored pages while it is powered off (C
    /// null_blk keeps them until `rmdir`).
    kept: Option<device::KeptData>,
    /// `index`: what was written, then the disk's index (its minor) from
    /// `power=1` on, as C null_blk shows it (writing does not choose it).
    index: u32,
}

impl DeviceDir {
    /// Write `attr`'s value and a newline into the page configfs reads.
    fn show(&self, attr: Attr, page: &mut [u8; PAGE_SIZE]) -> Result<usize> {
        let mut out = Formatter::new(page);
        attr.show(&self.state.lock(), &mut out)?;
        Ok(out.bytes_written())
    }

    /// Store into `attr` the bytes written to its file.
    fn store(&self, attr: Attr, bytes: &[u8]) -> Result {
        attr.store(self, &mut self.state.lock(), bytes)
    }
}

// --- attributes -------------------------------------------------------------

/// What a device directory is to configfs: its attributes and owner.
type DeviceItemType = configfs::ItemType<configfs::Group<DeviceDir>, DeviceDir>;

/// Declares the attributes of a device directory, each once: its
/// [`AttributeOperations`] ID, file name (C null_blk's) and [`Attr`]
/// variant. Defines [`Attr`], [`ATTRS`] (in this order, which `features`
/// lists), [`Attr::name`], the operations of each ID and the directory's
/// item type.
macro_rules! device_attributes {
    ($($id:literal $name:ident $variant:ident $($write_only:ident)?,)*) => {
        /// An attribute file of a device directory.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        enum Attr {
            $($variant,)*
        }

        /// Every attribute, in the order of the configfs attribute table.
        const ATTRS: &[Attr] = &[$(Attr::$variant,)*];

        impl Attr {
            /// The file name.
            fn name(self) -> &'static str {
                match self {
                    $(Self::$variant => stringify!($name),)*
                }
            }
        }

        $(attribute_operations!($id $variant $($write_only)?);)*

        /// The item type of a device directory: its attributes, and this
        /// module as the owner every directory pins.
        fn device_item_type() -> &'static DeviceItemType {
            configfs_attrs! {
                container: configfs::Group<DeviceDir>,
                data: DeviceDir,
                attributes: [
                    $($name: $id,)*
                ],
            }
        }
    };
}

/// The [`AttributeOperations`] of attribute `$id`: show and store, or
/// store only for a `write_only` one (mode 0200, as C's
/// `CONFIGFS_ATTR_WO()`).
macro_rules! attribute_operations {
    ($id:literal $variant:ident) => {
        #[vtable]
        impl AttributeOperations<$id> for DeviceDir {
            type Data = DeviceDir;

            fn show(dir: &DeviceDir, page: &mut [u8; PAGE_SIZE]) -> Result<usize> {
                dir.show(Attr::$variant, page)
            }

            fn store(dir: &DeviceDir, page: &[u8]) -> Result {
                dir.store(Attr::$variant, page)
            }
        }
    };
    ($id:literal $variant:ident write_only) => {
        #[vtable]
        impl AttributeOperations<$id> for DeviceDir {
            type Data = DeviceDir;

            fn store(dir: &DeviceDir, page: &[u8]) -> Result {
                dir.store(Attr::$variant, page)
            }
        }
    };
}

device_attributes! {
    0 size Size,
    1 blocksize Blocksize,
    2 max_sectors MaxSectors,
    3 queue_mode QueueMode,
    4 irqmode Irqmode,
    5 completion_nsec CompletionNsec,
    6 memory_backed MemoryBacked,
    7 discard Discard,
    8 submit_queues SubmitQueues,
    9 hw_queue_depth HwQueueDepth,
    10 split_clone SplitClone,
    11 power Power,
    12 poll_queues PollQueues,
    13 blocking Blocking,
    14 shared_tags SharedTags,
    15 shared_tag_bitmap SharedTagBitmap,
    16 no_sched NoSched,
    17 zoned Zoned,
    18 zone_size ZoneSize,
    19 zone_capacity ZoneCapacity,
    20 zone_nr_conv ZoneNrConv,
    21 zone_max_open ZoneMaxOpen,
    22 zone_max_active ZoneMaxActive,
    23 zone_append_max_sectors ZoneAppendMaxSectors,
    24 zone_full ZoneFull,
    25 badblocks Badblocks,
    26 badblocks_once BadblocksOnce,
    27 badblocks_partial_io BadblocksPartialIo,
    28 zone_readonly ZoneReadonly write_only,
    29 zone_offline ZoneOffline write_only,
    30 mbps Mbps,
    31 cache_size CacheSize,
    32 fua Fua,
    33 rotational Rotational,
    34 index Index,
}

impl Attr {
    /// Write the value and a newline.
    fn show(self, state: &DirState, out: &mut impl Write) -> fmt::Result {
        let c = &state.config;
        match self {
            Self::Size => writeln!(out, "{}", c.capacity_sectors / params::mb_to_sectors(1)),
            Self::Blocksize => writeln!(out, "{}", c.block_size),
            Self::MaxSectors => writeln!(out, "{}", c.max_sectors),
            Self::QueueMode => writeln!(out, "{}", queue_mode_number(c.queue_mode)),
            Self::Irqmode => writeln!(out, "{}", irqmode_number(c.irqmode)),
            Self::CompletionNsec => writeln!(out, "{}", c.completion_nsec),
            Self::MemoryBacked => writeln!(out, "{}", u8::from(c.memory_backed)),
            Self::Discard => writeln!(out, "{}", u8::from(c.discard)),
            Self::Blocking => writeln!(out, "{}", u8::from(c.blocking)),
            Self::SharedTags => writeln!(out, "{}", u8::from(c.shared_tags)),
            Self::SharedTagBitmap => writeln!(out, "{}", u8::from(c.shared_tag_bitmap)),
            Self::NoSched => writeln!(out, "{}", u8::from(c.no_sched)),
            Self::Zoned => writeln!(out, "{}", u8::from(c.zoned)),
            Self::ZoneSize => writeln!(out, "{}", c.zone.zone_size_mb),
            Self::ZoneCapacity => writeln!(out, "{}", c.zone.zone_capacity_mb),
            Self::ZoneNrConv => writeln!(out, "{}", c.zone.nr_conv),
            Self::ZoneMaxOpen => writeln!(out, "{}", c.zone.max_open),
            Self::ZoneMaxActive => writeln!(out, "{}", c.zone.max_active),
            Self::ZoneAppendMaxSectors => writeln!(out, "{}", c.zone.append_max_sectors),
            Self::ZoneFull => writeln!(out, "{}", u8::from(c.zone.full)),
            Self::SubmitQueues => writeln!(out, "{}", c.submit_queues),
            Self::PollQueues => writeln!(out, "{}", c.poll_queues),
            Self::HwQueueDepth => writeln!(out, "{}", c.hw_queue_depth),
            Self::SplitClone => writeln!(out, "{}", c.split_clone.name()),
            Self::Power => writeln!(out, "{}", u8::from(state.disk.is_some())),
            Self::Badblocks => {
                state.badblocks.show(out);
                Ok(())
            }
            Self::BadblocksOnce => writeln!(out, "{}", u8::from(c.badblocks_once)),
            Self::BadblocksPartialIo => writeln!(out, "{}", u8::from(c.badblocks_partial_io)),
            Self::Mbps => writeln!(out, "{}", c.mbps),
            Self::CacheSize => writeln!(out, "{}", c.cache_size_mb),
            Self::Fua => writeln!(out, "{}", u8::from(c.fua)),
            Self::Rotational => writeln!(out, "{}", u8::from(c.rotational)),
            Self::Index => writeln!(out, "{}", state.index),
            // Write-only: configfs never asks.
            Self::ZoneReadonly | Self::ZoneOffline => Ok(()),
        }
    }

    /// Set the attribute of `device_dir` (whose `state` is locked) from the
    /// bytes written, `text`: numbers and booleans exactly as C null_blk
    /// parses them, `badblocks` and `split_clone` without the white space
    /// around them.
    fn store(self, device_dir: &DeviceDir, state: &mut DirState, text: &[u8]) -> Result {
        // Like C null_blk: the configuration is frozen while the disk
        // exists, but for its queues, which change on the live disk.
        // And for `badblocks`, which a running disk checks each request
        // against.
        // And for the zone conditions, which act on the running disk only.
        let live = matches!(
            self,
            Self::SubmitQueues
                | Self::PollQueues
                | Self::Badblocks
                | Self::Power
                | Self::ZoneReadonly
                | Self::ZoneOffline
        );
        if !live && state.disk.is_some() {
            return Err(EBUSY);
        }
        let dir: &CStr = &device_dir.name;
        let c = &mut state.config;
        match self {
            Self::Power => return power(device_dir, state, parse_bool(dir, self, text)?),
            Self::Size => {
                c.capacity_sectors =
                    checked(dir, params::validate_size_mb(parse(dir, self, text)?))?
            }
            Self::Blocksize => {
                let bs: u32 = parse(dir, self, text)?;
                c.block_size = checked(dir, params::validate_bs(bs.into()))?;
            }
            Self::MaxSectors => {
                // Against the block size again at power=1, whichever is set first.
                let v: u32 = parse(dir, self, text)?;
                c.max_sectors = checked(dir, params::validate_max_sectors(v.into(), 512))?;
            }
            Self::QueueMode => {
                let v: u32 = parse(dir, self, text)?;
                c.queue_mode = checked(dir, params::validate_queue_mode(v.into()))?;
            }
            Self::Irqmode => {
                let v: u32 = parse(dir, self, text)?;
                c.irqmode = checked(dir, params::validate_irqmode(v.into()))?;
            }
            Self::CompletionNsec => {
                c.completion_nsec = checked(
                    dir,
                    params::validate_completion_nsec(parse(dir, self, text)?),
                )?
            }
            Self::MemoryBacked => c.memory_backed = parse_bool(dir, self, text)?,
            // Against memory_backed at power=1.
            Self::Discard => c.discard = parse_bool(dir, self, text)?,
            Self::Blocking => c.blocking = parse_bool(dir, self, text)?,
            Self::SharedTags => c.shared_tags = parse_bool(dir, self, text)?,
            Self::SharedTagBitmap => c.shared_tag_bitmap = parse_bool(dir, self, text)?,
            Self::NoSched => c.no_sched = parse_bool(dir, self, text)?,
            // The zone parameters are checked together at power=1, against
            // the size and block size.
            Self::Zoned => c.zoned = parse_bool(dir, self, text)?,
            Self::ZoneSize => c.zone.zone_size_mb = parse(dir, self, text)?,
            Self::ZoneCapacity => c.zone.zone_capacity_mb = parse(dir, self, text)?,
            Self::ZoneNrConv => c.zone.nr_conv = parse(dir, self, text)?,
            Self::ZoneMaxOpen => c.zone.max_open = parse(dir, self, text)?,
            Self::ZoneMaxActive => c.zone.max_active = parse(dir, self, text)?,
            Self::ZoneAppendMaxSectors => c.zone.append_max_sectors = parse(dir, self, text)?,
            Self::ZoneFull => c.zone.full = parse_bool(dir, self, text)?,
            Self::Badblocks => {
                let text = trimmed_text(dir, self, text)?;
                return state.badblocks.change(text).inspect_err(|_| {
                    pr_err!(
                        "{}: invalid badblocks '{}': must be +START-END or -START-END \
                         (sectors, START <= END), within room for 512 ranges\n",
                        dir,
                        text
                    );
                });
            }
            Self::BadblocksOnce => c.badblocks_once = parse_bool(dir, self, text)?,
            Self::Mbps => {
                let v: u32 = parse(dir, self, text)?;
                c.mbps = checked(dir, params::validate_mbps(v.into()))?;
            }
            // Against memory_backed and queue_mode at power=1.
            Self::CacheSize => {
                c.cache_size_mb =
                    checked(dir, params::validate_cache_size(parse(dir, self, text)?))?
            }
            Self::Fua => c.fua = parse_bool(dir, self, text)?,
            Self::Rotational => c.rotational = parse_bool(dir, self, text)?,
            // Kept, and shown, until `power=1` gives the disk its index.
            Self::Index => state.index = parse(dir, self, text)?,
            Self::ZoneReadonly | Self::ZoneOffline => {
                let cond = if self == Self::ZoneReadonly {
                    Cond::ReadOnly
                } else {
                    Cond::Offline
                };
                // C: kstrtoull(page, 0)
                let sector: u64 = parse(dir, self, text)?;
                let Some(disk) = &state.disk else {
                    pr_err!("{}: {}: the disk is not powered\n", dir, self.name());
                    return Err(EINVAL);
                };
                return disk.set_zone_cond(dir, sector, cond);
            }
            Self::BadblocksPartialIo => c.badblocks_partial_io = parse_bool(dir, self, text)?,
            Self::SubmitQueues => {
                let v: u32 = parse(dir, self, text)?;
                let v = checked(
                    dir,
                    params::validate_submit_queues(v.into(), device::nr_cpu_ids()),
                )?;
                if let Some(disk) = &state.disk {
                    disk.update_hw_queues(dir, v, c.poll_queues)?;
                }
                c.submit_queues = v;
            }
            Self::PollQueues => {
                let v: u32 = parse(dir, self, text)?;
                let v = checked(
                    dir,
                    params::validate_poll_queues(v.into(), device::nr_cpu_ids()),
                )?;
                if let Some(disk) = &state.disk {
                    disk.update_hw_queues(dir, c.submit_queues, v)?;
                }
                c.poll_queues = v;
            }
            Self::HwQueueDepth => {
                let v: u32 = parse(dir, self, text)?;
                c.hw_queue_depth = checked(dir, params::validate_hw_queue_depth(v.into()))?;
            }
            Self::SplitClone => {
                let text = trimmed_text(dir, self, text)?;
                c.split_clone = checked(dir, params::validate_split_clone(text.as_bytes()))?
            }
        }
        Ok(())
    }
}

// --- fault injection directories ----------------------------------------------

/// A device directory's `timeout_inject/`, `requeue_inject/` or
/// `init_hctx_fault_inject/`: the attributes of C's `fault_config` over one
/// of the device's fault points, which take effect at once, on a powered
/// disk too. (C's `verbose_ratelimit_*`, `task-filter` and stack trace
/// filters are not there.)
#[pin_data]
pub(crate) struct FaultDir {
    /// `<device>/<directory>`, for messages.
    path: CString,
    fault: Arc<Fault>,
}

type FaultItemType = configfs::ItemType<configfs::Group<FaultDir>, FaultDir>;

/// The item type of the fault injection directories.
fn fault_item_type() -> &'static FaultItemType {
    configfs_attrs! {
        container: configfs::Group<FaultDir>,
        data: FaultDir,
        attributes: [
            probability: 0,
            interval: 1,
            times: 2,
            space: 3,
            verbose: 4,
        ],
    }
}

/// Parse a fault attribute as C's `kstrtoul(.., 0)` (`probability`,
/// `interval`, `verbose`) or `kstrtoint(.., 0)` (`times`, `space`), with
/// their `EINVAL` or `ERANGE`.
fn parse_fault_value<T: Kstrtox>(bytes: &[u8]) -> Result<T> {
    T::kstrtox(bytes).map_err(|e| match e {
        KstrtoxError::Invalid => EINVAL,
        KstrtoxError::Range => ERANGE,
    })
}

/// Declares the show and store of fault attribute `$id`: the getter and
/// setter of [`Fault`] and the type the value is parsed as.
macro_rules! fault_attribute {
    ($id:literal $get:ident $set:ident $ty:ty) => {
        #[vtable]
        impl AttributeOperations<$id> for FaultDir {
            type Data = FaultDir;

            fn show(dir: &FaultDir, page: &mut [u8; PAGE_SIZE]) -> Result<usize> {
                let mut out = Formatter::new(page);
                writeln!(out, "{}", dir.fault.$get())?;
                Ok(out.bytes_written())
            }

            fn store(dir: &FaultDir, page: &[u8]) -> Result {
                let v = parse_fault_value::<$ty>(page).inspect_err(|_| {
                    pr_err!(
                        "{}: invalid {}: not a number of type {}\n",
                        &*dir.path,
                        stringify!($get),
                        stringify!($ty)
                    );
                })?;
                dir.fault.$set(v);
                Ok(())
            }
        }
    };
}

fault_attribute!(0 probability set_probability u64);
fault_attribute!(1 interval set_interval u64);
fault_attribute!(2 times set_times i32);
fault_attribute!(3 space set_space i32);
fault_attribute!(4 verbose set_verbose u64);

/// `queue_mode`'s number.
fn queue_mode_number(mode: QueueMode) -> u32 {
    match mode {
        QueueMode::Bio => 0,
        QueueMode::Mq => 2,
    }
}

/// `irqmode`'s number.
fn irqmode_number(mode: IrqMode) -> u32 {
    match mode {
        IrqMode::None => 0,
        IrqMode::Softirq => 1,
        IrqMode::Timer => 2,
    }
}

/// The bytes written, for messages: the text without its trailing newline.
fn shown(bytes: &[u8]) -> &str {
    core::str::from_utf8(params::trim_newline(bytes)).unwrap_or("(not text)")
}

/// Parse a number as C null_blk's stores do: `kstrtouint(.., 0)` for a
/// `u32`, `kstrtoul(.., 0)` for a `u64` (an optional `+`, `0x` hex, `0`
/// octal or decimal, one trailing newline). C's `ERANGE` for a number too
/// large for the type is `EINVAL` here, as every other bad value.
fn parse<T: Kstrtox>(dir: &CStr, attr: Attr, text: &[u8]) -> Result<T> {
    T::kstrtox(text).map_err(|e| {
        let (why, forms) = match e {
            KstrtoxError::Invalid => ("not a number of type", " (decimal, 0x hex or 0 octal)"),
            KstrtoxError::Range => ("out of range for type", ""),
        };
        pr_err!(
            "{}: invalid {} '{}': {} {}{}\n",
            dir,
            attr.name(),
            shown(text),
            why,
            T::C_TYPE,
            forms
        );
        EINVAL
    })
}

/// Parse a boolean as C null_blk's stores do (`kstrtobool()`: `1`, `y`,
/// `t`, `e`, `on`; `0`, `n`, `f`, `d`, `off`; only the first one or two
/// characters count).
fn parse_bool(dir: &CStr, attr: Attr, text: &[u8]) -> Result<bool> {
    params::kstrtobool(text).ok_or_else(|| {
        pr_err!(
            "{}: invalid {} '{}': must be 1/y/t/e/on or 0/n/f/d/off\n",
            dir,
            attr.name(),
            shown(text)
        );
        EINVAL
    })
}

/// The bytes written as text, without the white space around them (C
/// null_blk's `badblocks` strips it too).
fn trimmed_text<'a>(dir: &CStr, attr: Attr, bytes: &'a [u8]) -> Result<&'a str> {
    let Ok(text) = core::str::from_utf8(bytes) else {
        pr_err!("{}: invalid {}: not text\n", dir, attr.name());
        return Err(EINVAL);
    };
    Ok(text.trim())
}

/// Turn a validator's error into `EINVAL` and a message naming the attribute.
fn checked<T>(dir: &CStr, r: core::result::Result<T, ParamError>) -> Result<T> {
    r.map_err(|e| {
        pr_err!("{}: {}\n", dir, e.for_configfs());
        EINVAL
    })
}

/// `power` of `device_dir` (whose `state` is locked): create the disk (`on`,
/// if not already there) or remove it.
fn power(device_dir: &DeviceDir, state: &mut DirState, on: bool) -> Result {
    if !on {
        if let Some(disk) = state.disk.take() {
            if let Some(data) = disk.remove() {
                state.kept = Some(data);
            }
        }
        return Ok(());
    }
    if state.disk.is_some() {
        return Ok(());
    }
    let dir: &CStr = &device_dir.name;
    if cfg!(null_blk) {
        let module_poll_queues = crate::module_parameters::poll_queues.value().max(0) as u32;
        state
            .config
            .adjust_like_c(device::nr_cpu_ids(), module_poll_queues, |a| {
                pr_warn!(
                    "{}: {}={} adjusted to {}, as C null_blk does\n",
                    dir,
                    a.name,
                    a.from,
                    a.to
                );
            });
    }
    checked(dir, state.config.validate(device::nr_cpu_ids()))?;
    let disk = NullDevice::new(
        fmt!("{}", dir),
        &state.config,
        &device_dir.shared,
        Some(device::DirParts {
            faults: &device_dir.faults,
            badblocks: &state.badblocks,
            kept: &mut state.kept,
        }),
    )
    .inspect_err(|e| {
        pr_err!("{}: cannot create the disk: {:?}\n", dir, e);
    })?;
    state.index = disk.index();
    state.disk = Some(disk);
    state.config.in_force();
    Ok(())
}
