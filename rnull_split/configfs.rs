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
//! 1. At load, [`Subsystem::register`] registers the configfs subsystem
//!    `rnull_split`; its `make_group` callback lets `mkdir` create a
//!    [`DeviceDir`] holding a [`DeviceConfig`] (the module parameters'
//!    values) and no disk. Names of load-time disks (`rnullb0`, ...) are
//!    refused with `EEXIST`. The subsystem directory's read-only `features`
//!    lists the attribute names, as C null_blk's does.
//! 2. Each attribute ([`Attr`], C null_blk's names) shows its value and a
//!    newline; a store parses the text, checks it with the validator of the
//!    module parameter of the same meaning (`common/params.rs`) and refuses
//!    bad values with `EINVAL` and a message naming the attribute. While the
//!    disk exists every store but `power`'s fails with `EBUSY`.
//! 3. `power=1` checks the whole configuration again (rules between
//!    attributes, e.g. `max_sectors` against `blocksize`) and creates the
//!    [`NullDevice`] named after the directory; `power=0` drops it, which
//!    removes the disk. `rmdir` (`drop_item`) drops it too.
//! 4. Every directory holds a reference on this module (configfs takes one
//!    for the item type's owner), so `rmmod` waits for `rmdir` of every
//!    directory; module exit then unregisters the subsystem.
//!
//! 6.12's kernel crate has no configfs abstraction, so this file is one: all
//! calls into configfs and every `unsafe` block of the feature are here, in
//! the `extern "C"` callbacks and the two wrapper types [`Subsystem`] and
//! [`DeviceDir`]. The attributes themselves are safe code over a locked
//! [`DirState`].

use crate::{
    device::{self, NullDevice},
    params::{self, DeviceConfig, IrqMode, ParamError, QueueMode},
};
use core::{
    fmt::{self, Write},
    pin::Pin,
    ptr::{self, NonNull},
    str::FromStr,
};
use kernel::{
    bindings, c_str, ffi::c_char, new_mutex, page::PAGE_SIZE, prelude::*, str::CStr, sync::Mutex,
    types::Opaque, ThisModule,
};

/// The configfs subsystem's directory name.
const SUBSYSTEM_NAME: &CStr = c_str!("rnull_split");

// --- attributes -------------------------------------------------------------

/// An attribute file of a device directory. Names are C null_blk's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Attr {
    Size,
    Blocksize,
    MaxSectors,
    QueueMode,
    Irqmode,
    CompletionNsec,
    MemoryBacked,
    Discard,
    SubmitQueues,
    HwQueueDepth,
    SplitClone,
    Power,
}

/// Number of attributes of a device directory.
const NR_ATTRS: usize = 12;

/// Every attribute, in the order of the configfs attribute table.
const ATTRS: [Attr; NR_ATTRS] = [
    Attr::Size,
    Attr::Blocksize,
    Attr::MaxSectors,
    Attr::QueueMode,
    Attr::Irqmode,
    Attr::CompletionNsec,
    Attr::MemoryBacked,
    Attr::Discard,
    Attr::SubmitQueues,
    Attr::HwQueueDepth,
    Attr::SplitClone,
    Attr::Power,
];

/// `features` of the subsystem directory: the attribute names a directory
/// has, comma-separated, as C null_blk's `features` lists its own.
fn features(out: &mut impl Write) -> fmt::Result {
    for (i, attr) in ATTRS.iter().enumerate() {
        let sep = if i + 1 == ATTRS.len() { "\n" } else { "," };
        write!(out, "{}{}", attr.name(), sep)?;
    }
    Ok(())
}

/// A device directory's configuration and, while powered, its disk.
struct DirState {
    config: DeviceConfig,
    /// `Some` exactly while `power` reads 1.
    disk: Option<NullDevice>,
}

impl Attr {
    /// The file name.
    fn name(self) -> &'static CStr {
        match self {
            Self::Size => c_str!("size"),
            Self::Blocksize => c_str!("blocksize"),
            Self::MaxSectors => c_str!("max_sectors"),
            Self::QueueMode => c_str!("queue_mode"),
            Self::Irqmode => c_str!("irqmode"),
            Self::CompletionNsec => c_str!("completion_nsec"),
            Self::MemoryBacked => c_str!("memory_backed"),
            Self::Discard => c_str!("discard"),
            Self::SubmitQueues => c_str!("submit_queues"),
            Self::HwQueueDepth => c_str!("hw_queue_depth"),
            Self::SplitClone => c_str!("split_clone"),
            Self::Power => c_str!("power"),
        }
    }

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
            Self::SubmitQueues => writeln!(out, "{}", c.submit_queues),
            Self::HwQueueDepth => writeln!(out, "{}", c.hw_queue_depth),
            Self::SplitClone => writeln!(out, "{}", c.split_clone.name()),
            Self::Power => writeln!(out, "{}", u8::from(state.disk.is_some())),
        }
    }

    /// Set the attribute of directory `dir` from `text` (surrounding white
    /// space already trimmed).
    fn store(self, dir: &CStr, state: &mut DirState, text: &str) -> Result {
        // Like C null_blk: the configuration is frozen while the disk exists.
        if self != Self::Power && state.disk.is_some() {
            return Err(EBUSY);
        }
        let c = &mut state.config;
        match self {
            Self::Power => return power(dir, state, parse_bool(dir, self, text)?),
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
            Self::SubmitQueues => {
                let v: u32 = parse(dir, self, text)?;
                c.submit_queues = checked(
                    dir,
                    params::validate_submit_queues(v.into(), device::nr_cpu_ids()),
                )?;
            }
            Self::HwQueueDepth => {
                let v: u32 = parse(dir, self, text)?;
                c.hw_queue_depth = checked(dir, params::validate_hw_queue_depth(v.into()))?;
            }
            Self::SplitClone => {
                c.split_clone = checked(dir, params::validate_split_clone(text.as_bytes()))?
            }
        }
        Ok(())
    }
}

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

/// Parse a decimal number, like upstream rnull's configfs.
fn parse<T: FromStr>(dir: &CStr, attr: Attr, text: &str) -> Result<T> {
    text.parse::<T>().map_err(|_| {
        pr_err!(
            "{}: invalid {}: not a decimal number in range\n",
            dir,
            attr.name()
        );
        EINVAL
    })
}

/// Parse `0` or `1`.
fn parse_bool(dir: &CStr, attr: Attr, text: &str) -> Result<bool> {
    match text {
        "0" => Ok(false),
        "1" => Ok(true),
        _ => {
            pr_err!("{}: invalid {}: must be 0 or 1\n", dir, attr.name());
            Err(EINVAL)
        }
    }
}

/// Turn a validator's error into `EINVAL` and a message naming the attribute.
fn checked<T>(dir: &CStr, r: core::result::Result<T, ParamError>) -> Result<T> {
    r.map_err(|e| {
        pr_err!("{}: {}\n", dir, e.for_configfs());
        EINVAL
    })
}

/// `power`: create the disk (`on`, if not already there) or remove it.
fn power(dir: &CStr, state: &mut DirState, on: bool) -> Result {
    if !on {
        state.disk = None;
        return Ok(());
    }
    if state.disk.is_some() {
        return Ok(());
    }
    let config = &state.config;
    checked(dir, config.validate(device::nr_cpu_ids()))?;
    crate::config::not_yet(config)?;
    let disk = NullDevice::new(format_args!("{}", dir), config).inspect_err(|e| {
        pr_err!("{}: cannot create the disk: {:?}\n", dir, e);
    })?;
    state.disk = Some(disk);
    Ok(())
}

/// Formats into the page configfs hands to `show`, like `sysfs_emit`.
struct PageWriter<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl Write for PageWriter<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len.checked_add(s.len()).ok_or(fmt::Error)?;
        self.buf
            .get_mut(self.len..end)
            .ok_or(fmt::Error)?
            .copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

// --- one directory ------------------------------------------------------------

/// One directory under `/sys/kernel/config/rnull_split/`.
///
/// # Invariants
///
/// - `group` is initialised (`config_group_init_type_name`) with the
///   directory's name and the device item type of the [`Subsystem`] whose
///   `make_group` made it.
/// - A `DeviceDir` lives in a [`KBox`] that `make_group` leaks to configfs
///   and `release` (the last `config_item_put`) frees; it does not move in
///   between.
#[pin_data]
#[repr(C)]
struct DeviceDir {
    #[pin]
    group: Opaque<bindings::config_group>,
    #[pin]
    state: Mutex<DirState>,
}

impl DeviceDir {
    /// Allocate the directory `name` with configuration `defaults` and
    /// return its group for configfs, which then owns it.
    fn create(
        name: &CStr,
        defaults: DeviceConfig,
        item_type: *const bindings::config_item_type,
    ) -> Result<*mut bindings::config_group> {
        let dir = KBox::pin_init(
            pin_init!(Self {
                group <- Opaque::ffi_init(|slot: *mut bindings::config_group| {
                    // SAFETY: `slot` is valid for writes of a `config_group`;
                    // all zeroes is its unlinked state (a static in C).
                    unsafe { ptr::write_bytes(slot, 0, 1) };
                    // `item_type` lives as long as the module (`Subsystem`'s invariants).
                    // SAFETY: `slot`: zeroed, pinned `config_group`; `name`: NUL-terminated, copied.
                    unsafe {
                        bindings::config_group_init_type_name(slot, name.as_char_ptr(), item_type)
                    };
                }),
                state <- new_mutex!(DirState {
                    config: defaults,
                    disk: None,
                }),
            }),
            GFP_KERNEL,
        )?;
        // SAFETY: the allocation is handed to configfs as a raw pointer and
        // never moved until `release` frees it in place.
        let dir = KBox::into_raw(unsafe { Pin::into_inner_unchecked(dir) });
        // SAFETY: `dir` is valid: it was just allocated.
        // INVARIANT: `group` was initialised above; configfs now owns `dir`.
        Ok(unsafe { (*dir).group.get() })
    }

    /// The directory of `item`.
    ///
    /// # Safety
    ///
    /// `item` is the `cg_item` of a [`DeviceDir`]'s group and stays valid
    /// for `'a` (configfs holds a reference during every callback).
    unsafe fn from_item<'a>(item: *mut bindings::config_item) -> &'a Self {
        // SAFETY: `to_config_group()`: by the safety requirements `item` is
        // the `cg_item` of a group.
        let group = unsafe { kernel::container_of!(item, bindings::config_group, cg_item) };
        // SAFETY: by the safety requirements, `group` is the `group` field
        // of a `DeviceDir` (`Opaque` is transparent).
        let dir = unsafe {
            kernel::container_of!(group.cast::<Opaque<bindings::config_group>>(), Self, group)
        };
        // SAFETY: `dir` is valid for `'a` by the safety requirements.
        unsafe { &*dir }
    }

    /// The directory's name, which names the disk too.
    fn name(&self) -> &CStr {
        // SAFETY: `group` is initialised (type invariants), so `ci_name` is the
        // NUL-terminated name, which lives as long as the item.
        unsafe { CStr::from_char_ptr((*self.group.get()).cg_item.ci_name) }
    }

    /// Store into `attr` the bytes written to its file.
    fn store(&self, attr: Attr, bytes: &[u8]) -> Result {
        let Ok(text) = core::str::from_utf8(bytes) else {
            pr_err!("{}: invalid {}: not text\n", self.name(), attr.name());
            return Err(EINVAL);
        };
        attr.store(self.name(), &mut self.state.lock(), text.trim())
    }
}

// --- configfs callbacks ---------------------------------------------------------

/// `ct_group_ops->make_group` of the subsystem: `mkdir`.
///
/// # Safety
///
/// Called by configfs with the subsystem's group (the only group with these
/// operations) and the new directory's NUL-terminated name.
unsafe extern "C" fn make_group(
    group: *mut bindings::config_group,
    name: *const c_char,
) -> *mut bindings::config_group {
    // SAFETY: `group` is our subsystem's group, per the safety requirements.
    let tables = unsafe { Tables::from_group(group) };
    // SAFETY: `name` is NUL-terminated and valid during the call.
    let name = unsafe { CStr::from_char_ptr(name) };
    if params::is_load_time_name(name.as_bytes(), tables.nr_devices) {
        pr_err!("{}: name of a load-time device\n", name);
        return EEXIST.to_ptr();
    }
    DeviceDir::create(name, tables.defaults, &tables.dev_type).unwrap_or_else(|e| e.to_ptr())
}

/// `ct_group_ops->drop_item` of the subsystem: `rmdir`. Removes the disk,
/// then drops the reference `make_group` returned, like C null_blk's
/// `nullb_group_drop_item`.
///
/// # Safety
///
/// Called by configfs with one of the subsystem's children, all made by
/// [`make_group`].
unsafe extern "C" fn drop_item(
    _group: *mut bindings::config_group,
    item: *mut bindings::config_item,
) {
    {
        // SAFETY: `item` is a `DeviceDir`'s, valid during the call.
        let dir = unsafe { DeviceDir::from_item(item) };
        let disk = dir.state.lock().disk.take();
        drop(disk);
    }
    // SAFETY: `item` holds the reference `make_group` gave configfs, which
    // `drop_item` must put.
    unsafe { bindings::config_item_put(item) };
}

/// `ct_item_ops->release` of a device directory: its last reference is gone.
///
/// # Safety
///
/// Called once by configfs with a `DeviceDir`'s item nobody uses any more.
unsafe extern "C" fn release(item: *mut bindings::config_item) {
    // SAFETY: `item` is a `DeviceDir`'s, valid during the call.
    let dir: *const DeviceDir = unsafe { DeviceDir::from_item(item) };
    // SAFETY: by the type invariants `dir` came from `KBox::into_raw` in
    // `DeviceDir::create`; this is the last use.
    drop(unsafe { KBox::from_raw(dir.cast_mut()) });
}

/// `show` of attribute `ATTRS[N]`.
///
/// # Safety
///
/// Called by configfs with a `DeviceDir`'s item and a `PAGE_SIZE` buffer.
unsafe extern "C" fn show<const N: usize>(
    item: *mut bindings::config_item,
    page: *mut c_char,
) -> isize {
    // SAFETY: `item` is a `DeviceDir`'s, valid during the call.
    let dir = unsafe { DeviceDir::from_item(item) };
    // SAFETY: configfs's `fill_read_buffer` passes a page of its own,
    // writable and not aliased during the call.
    let buf = unsafe { core::slice::from_raw_parts_mut(page.cast::<u8>(), PAGE_SIZE) };
    let mut out = PageWriter { buf, len: 0 };
    match ATTRS[N].show(&dir.state.lock(), &mut out) {
        Ok(()) => out.len as isize,
        Err(_) => EINVAL.to_errno() as isize,
    }
}

/// `store` of attribute `ATTRS[N]`.
///
/// # Safety
///
/// Called by configfs with a `DeviceDir`'s item and the `count` bytes that
/// were written.
unsafe extern "C" fn store<const N: usize>(
    item: *mut bindings::config_item,
    page: *const c_char,
    count: usize,
) -> isize {
    // SAFETY: `item` is a `DeviceDir`'s, valid during the call.
    let dir = unsafe { DeviceDir::from_item(item) };
    // SAFETY: configfs's `fill_write_buffer` copied `count` bytes into `page`.
    let bytes = unsafe { core::slice::from_raw_parts(page.cast::<u8>(), count) };
    match dir.store(ATTRS[N], bytes) {
        Ok(()) => count as isize,
        Err(e) => e.to_errno() as isize,
    }
}

type ShowFn = unsafe extern "C" fn(*mut bindings::config_item, *mut c_char) -> isize;
type StoreFn = unsafe extern "C" fn(*mut bindings::config_item, *const c_char, usize) -> isize;

macro_rules! attr_callbacks {
    ($($n:literal)*) => { [$((show::<$n> as ShowFn, store::<$n> as StoreFn)),*] };
}

/// `show` and `store` of each attribute of [`ATTRS`] (configfs passes no
/// attribute to them, so each is its own function).
const CALLBACKS: [(ShowFn, StoreFn); NR_ATTRS] = attr_callbacks!(0 1 2 3 4 5 6 7 8 9 10 11);

/// `show` of the subsystem's read-only `features`.
///
/// # Safety
///
/// Called by configfs with a `PAGE_SIZE` buffer.
unsafe extern "C" fn features_show(_item: *mut bindings::config_item, page: *mut c_char) -> isize {
    // SAFETY: configfs's `fill_read_buffer` passes a page of its own,
    // writable and not aliased during the call.
    let buf = unsafe { core::slice::from_raw_parts_mut(page.cast::<u8>(), PAGE_SIZE) };
    let mut out = PageWriter { buf, len: 0 };
    match features(&mut out) {
        Ok(()) => out.len as isize,
        Err(_) => EINVAL.to_errno() as isize,
    }
}

// --- the subsystem ----------------------------------------------------------------

/// The lockdep class of the subsystem's `su_mutex`, the static key
/// `mutex_init()` defines at its call site.
struct LockKey(Opaque<bindings::lock_class_key>);

// SAFETY: lockdep does its own synchronisation on keys; Rust never touches it.
unsafe impl Sync for LockKey {}

static SU_MUTEX_KEY: LockKey = LockKey(Opaque::uninit());

/// Everything configfs points into: the subsystem, the item types, their
/// operations and attribute tables; and what `make_group` needs.
#[repr(C)]
struct Tables {
    subsys: Opaque<bindings::configfs_subsystem>,
    subsys_type: bindings::config_item_type,
    /// `features`, and NULL: `subsys_type.ct_attrs`.
    subsys_attr: bindings::configfs_attribute,
    subsys_attr_ptrs: [*mut bindings::configfs_attribute; 2],
    group_ops: bindings::configfs_group_operations,
    dev_type: bindings::config_item_type,
    dev_item_ops: bindings::configfs_item_operations,
    attrs: [bindings::configfs_attribute; NR_ATTRS],
    /// `attrs`, NULL-terminated: `dev_type.ct_attrs`.
    attr_ptrs: [*mut bindings::configfs_attribute; NR_ATTRS + 1],
    /// Configuration of a new directory: the module parameters'.
    defaults: DeviceConfig,
    /// Load-time devices, whose names `mkdir` refuses.
    nr_devices: u32,
}

/// All-zero C structure.
///
/// # Safety
///
/// All zeroes must be a valid `T` (true of the bindgen structs used here:
/// integers, raw pointers and `Option`s of function pointers).
unsafe fn zeroed<T>() -> T {
    // SAFETY: by the safety requirements.
    unsafe { core::mem::MaybeUninit::zeroed().assume_init() }
}

impl Tables {
    /// The tables of the subsystem whose group is `group`.
    ///
    /// # Safety
    ///
    /// `group` is the `su_group` of a registered [`Subsystem`]'s tables.
    unsafe fn from_group<'a>(group: *mut bindings::config_group) -> &'a Self {
        let subsys =
            // SAFETY: `to_configfs_subsystem()`: by the safety requirements
            // `group` is the `su_group` of a subsystem.
            unsafe { kernel::container_of!(group, bindings::configfs_subsystem, su_group) };
        // SAFETY: `subsys` is the `subsys` field of a `Tables` (`Opaque` is
        // transparent).
        let tables = unsafe {
            kernel::container_of!(
                subsys.cast::<Opaque<bindings::configfs_subsystem>>(),
                Self,
                subsys
            )
        };
        // SAFETY: a registered subsystem's tables live until it is
        // unregistered, after every callback.
        unsafe { &*tables }
    }
}

/// The registered configfs subsystem `rnull_split`.
///
/// # Invariants
///
/// - `tables` comes from [`KBox::into_raw`], is registered with configfs
///   (`subsys`) and linked (every pointer inside points into itself) until
///   [`Drop`] unregisters and frees it; it never moves.
/// - Every directory holds a reference on the module (`ct_owner`), so none
///   is left when the module (and this) drops.
pub(crate) struct Subsystem {
    tables: NonNull<Tables>,
}

// SAFETY: Rust only reads `defaults` and `nr_devices`, written before
// registration; configfs serialises its own use of the tables.
unsafe impl Send for Subsystem {}
// SAFETY: as for `Send`; `&Subsystem` gives access to nothing.
unsafe impl Sync for Subsystem {}

impl Subsystem {
    /// Register `/sys/kernel/config/rnull_split`; new directories get
    /// `defaults` and may not be named like the `nr_devices` load-time
    /// devices.
    pub(crate) fn register(
        module: &'static ThisModule,
        defaults: &DeviceConfig,
        nr_devices: u32,
    ) -> Result<Self> {
        let mut attrs: [bindings::configfs_attribute; NR_ATTRS] =
            // SAFETY: a zeroed `configfs_attribute` is valid (see `zeroed`).
            unsafe { zeroed() };
        for ((attr, c), &(show, store)) in attrs.iter_mut().zip(ATTRS).zip(CALLBACKS.iter()) {
            attr.ca_name = c.name().as_char_ptr();
            attr.ca_owner = module.as_ptr();
            attr.ca_mode = 0o644;
            attr.show = Some(show);
            attr.store = Some(store);
        }
        let tables = KBox::new(
            Tables {
                // SAFETY: zeroed is a valid, unregistered subsystem (a
                // static in C).
                subsys: Opaque::new(unsafe { zeroed() }),
                // SAFETY: a zeroed `config_item_type` is valid.
                subsys_type: unsafe { zeroed() },
                subsys_attr: bindings::configfs_attribute {
                    ca_name: c_str!("features").as_char_ptr(),
                    ca_owner: module.as_ptr(),
                    ca_mode: 0o444,
                    show: Some(features_show),
                    store: None,
                },
                subsys_attr_ptrs: [ptr::null_mut(); 2],
                group_ops: bindings::configfs_group_operations {
                    make_group: Some(make_group),
                    drop_item: Some(drop_item),
                    // SAFETY: a zeroed `configfs_group_operations` is valid.
                    ..unsafe { zeroed() }
                },
                // SAFETY: a zeroed `config_item_type` is valid.
                dev_type: unsafe { zeroed() },
                dev_item_ops: bindings::configfs_item_operations {
                    release: Some(release),
                    // SAFETY: a zeroed `configfs_item_operations` is valid.
                    ..unsafe { zeroed() }
                },
                attrs,
                attr_ptrs: [ptr::null_mut(); NR_ATTRS + 1],
                defaults: *defaults,
                nr_devices,
            },
            GFP_KERNEL,
        )?;
        let tables = KBox::into_raw(tables);
        // SAFETY: `tables` was just allocated and nothing else refers to it.
        let t = unsafe { &mut *tables };
        // Link the tables to themselves, now that they no longer move.
        for (p, attr) in t.attr_ptrs.iter_mut().zip(t.attrs.iter_mut()) {
            *p = attr;
        }
        t.dev_type.ct_owner = module.as_ptr();
        t.dev_type.ct_item_ops = &mut t.dev_item_ops;
        t.dev_type.ct_attrs = t.attr_ptrs.as_mut_ptr();
        t.subsys_type.ct_owner = module.as_ptr();
        t.subsys_type.ct_group_ops = &mut t.group_ops;
        t.subsys_attr_ptrs[0] = &mut t.subsys_attr;
        t.subsys_type.ct_attrs = t.subsys_attr_ptrs.as_mut_ptr();
        let subsys = t.subsys.get();
        // SAFETY: `subsys` is a zeroed subsystem that no longer moves;
        // `SUBSYSTEM_NAME` is NUL-terminated and `subsys_type` lives with it.
        unsafe {
            bindings::config_group_init_type_name(
                &raw mut (*subsys).su_group,
                SUBSYSTEM_NAME.as_char_ptr(),
                &t.subsys_type,
            )
        };
        // SAFETY: `su_mutex` is zeroed and does not move; the key is static,
        // as lockdep requires.
        unsafe {
            bindings::__mutex_init(
                &raw mut (*subsys).su_mutex,
                c_str!("rnull_split_subsys").as_char_ptr(),
                SU_MUTEX_KEY.0.get(),
            )
        };
        // SAFETY: `subsys` is initialised as configfs requires and stays
        // valid until unregistered in `drop`.
        let ret = unsafe { bindings::configfs_register_subsystem(subsys) };
        if ret != 0 {
            // SAFETY: `tables` came from `KBox::into_raw` and configfs
            // refused it, so nothing refers to it.
            drop(unsafe { KBox::from_raw(tables) });
            pr_err!("cannot register configfs subsystem: {}\n", ret);
            return Err(Error::from_errno(ret));
        }
        // INVARIANT: registered and linked above; `tables` is from `into_raw`.
        Ok(Self {
            // SAFETY: `KBox::into_raw` does not return NULL.
            tables: unsafe { NonNull::new_unchecked(tables) },
        })
    }
}

impl Drop for Subsystem {
    fn drop(&mut self) {
        let tables = self.tables.as_ptr();
        // SAFETY: `tables` is valid and registered (type invariants).
        let subsys = unsafe { (*tables).subsys.get() };
        // SAFETY: registered in `register`; no directory is left (type
        // invariants), so configfs refers to nothing else in `tables` after.
        unsafe { bindings::configfs_unregister_subsystem(subsys) };
        // SAFETY: `tables` came from `KBox::into_raw` and is unused now.
        drop(unsafe { KBox::from_raw(tables) });
    }
}
