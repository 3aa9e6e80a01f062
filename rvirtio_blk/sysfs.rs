// SPDX-License-Identifier: GPL-2.0

//! Disk attributes: `serial` (from GET_ID, read at probe) and `cache_type`
//! (writable when the device offers `VIRTIO_BLK_F_CONFIG_WCE`), as in C
//! virtio_blk. `queue/write_cache` is the block layer's own attribute.

use crate::{device, device::VirtioBlk, sg_plan};
use core::{cell::UnsafeCell, mem::offset_of};
use kernel::ffi::c_char;
use kernel::{bindings, prelude::*};

/// A `struct device_attribute` in static storage.
#[repr(transparent)]
pub(crate) struct DevAttr(UnsafeCell<bindings::device_attribute>);

// SAFETY: sysfs only reads the attribute after registration.
unsafe impl Sync for DevAttr {}

impl DevAttr {
    const fn new(
        name: &'static core::ffi::CStr,
        mode: u16,
        show: unsafe extern "C" fn(
            *mut bindings::device,
            *mut bindings::device_attribute,
            *mut c_char,
        ) -> isize,
        store: Option<
            unsafe extern "C" fn(
                *mut bindings::device,
                *mut bindings::device_attribute,
                *const c_char,
                usize,
            ) -> isize,
        >,
    ) -> Self {
        // SAFETY: all-zero is a valid attribute (null name, no callbacks).
        let mut a: bindings::device_attribute = unsafe { core::mem::zeroed() };
        a.attr.name = kernel::str::as_char_ptr_in_const_context(name);
        a.attr.mode = mode;
        a.__bindgen_anon_1.show = Some(show);
        a.__bindgen_anon_2.store = store;
        Self(UnsafeCell::new(a))
    }

    const fn attr(&self) -> *mut bindings::attribute {
        // `attr` is the first field of `struct device_attribute`.
        self.0.get().cast()
    }
}

/// A NULL-terminated table of pointers, in static storage.
#[repr(transparent)]
pub(crate) struct PtrTable<T, const N: usize>(UnsafeCell<[*mut T; N]>);

// SAFETY: only read by sysfs after registration.
unsafe impl<T, const N: usize> Sync for PtrTable<T, N> {}

impl<T, const N: usize> PtrTable<T, N> {
    /// The table as C sees it.
    pub(crate) const fn as_ptr(&self) -> *mut *mut T {
        self.0.get().cast()
    }
}

/// A `struct attribute_group` in static storage.
#[repr(transparent)]
pub(crate) struct AttrGroup(UnsafeCell<bindings::attribute_group>);

// SAFETY: only read by sysfs after registration.
unsafe impl Sync for AttrGroup {}

static SERIAL: DevAttr = DevAttr::new(c"serial", 0o444, serial_show, None);
static CACHE_TYPE: DevAttr = DevAttr::new(
    c"cache_type",
    0o644,
    cache_type_show,
    Some(cache_type_store),
);
static ATTRS: PtrTable<bindings::attribute, 3> = PtrTable(UnsafeCell::new([
    SERIAL.attr(),
    CACHE_TYPE.attr(),
    core::ptr::null_mut(),
]));
static GROUP: AttrGroup = AttrGroup(UnsafeCell::new(bindings::attribute_group {
    name: core::ptr::null(),
    __bindgen_anon_1: bindings::attribute_group__bindgen_ty_1 {
        is_visible: Some(virtblk_attrs_are_visible),
    },
    is_bin_visible: None,
    bin_size: None,
    __bindgen_anon_2: bindings::attribute_group__bindgen_ty_2 {
        attrs: ATTRS.as_ptr(),
    },
    bin_attrs: core::ptr::null(),
}));

/// The groups passed to `device_add_disk`.
pub(crate) static GROUPS: PtrTable<bindings::attribute_group, 2> =
    PtrTable(UnsafeCell::new([GROUP.0.get(), core::ptr::null_mut()]));

impl PtrTable<bindings::attribute_group, 2> {
    /// As `device_add_disk` wants it.
    pub(crate) fn as_groups(&self) -> *mut *const bindings::attribute_group {
        self.as_ptr().cast()
    }
}

/// The driver state of the disk behind a sysfs `dev`.
///
/// # Safety
///
/// `dev` is the device of one of our disks (sysfs keeps it alive).
unsafe fn vblk_of<'a>(dev: *mut bindings::device) -> &'a VirtioBlk {
    // SAFETY: per the caller.
    unsafe { VirtioBlk::from_disk(bindings::dev_to_disk(dev)) }
}

/// Copies `s` into the sysfs page `buf`; returns the length.
///
/// # Safety
///
/// `buf` is a sysfs buffer (PAGE_SIZE bytes).
unsafe fn emit(buf: *mut c_char, s: &[u8]) -> isize {
    let n = s.len().min(4095);
    // SAFETY: `buf` has room for a page.
    unsafe { core::ptr::copy_nonoverlapping(s.as_ptr(), buf.cast::<u8>(), n) };
    n as isize
}

/// `serial` show: the GET_ID answer, without newline (as C).
unsafe extern "C" fn serial_show(
    dev: *mut bindings::device,
    _attr: *mut bindings::device_attribute,
    buf: *mut c_char,
) -> isize {
    // SAFETY: sysfs calls us for our disk's device.
    let vblk = unsafe { vblk_of(dev) };
    let serial = vblk.serial();
    let len = sg_plan::serial_len(serial);
    // SAFETY: a sysfs buffer.
    unsafe { emit(buf, &serial[..len]) }
}

/// `cache_type` show.
unsafe extern "C" fn cache_type_show(
    dev: *mut bindings::device,
    _attr: *mut bindings::device_attribute,
    buf: *mut c_char,
) -> isize {
    // SAFETY: sysfs calls us for our disk's device.
    let vblk = unsafe { vblk_of(dev) };
    // SAFETY: the attribute exists only while the disk is added, between
    // probe and remove (`del_gendisk` drains running attribute calls).
    let wb = device::virtblk_get_cache_mode(unsafe { vblk.bound_vdev() }) as usize;
    let s = sg_plan::CACHE_TYPES[wb];
    // SAFETY: a sysfs buffer.
    unsafe {
        let n = emit(buf, s.as_bytes());
        *buf.add(n as usize) = b'\n' as c_char;
        n + 1
    }
}

/// `cache_type` store: writes `wce` and updates `BLK_FEAT_WRITE_CACHE`.
unsafe extern "C" fn cache_type_store(
    dev: *mut bindings::device,
    _attr: *mut bindings::device_attribute,
    buf: *const c_char,
    count: usize,
) -> isize {
    // SAFETY: sysfs calls us for our disk's device.
    let vblk = unsafe { vblk_of(dev) };
    // SAFETY: as in `cache_type_show`.
    let vdev = unsafe { vblk.bound_vdev() };
    if !vdev.has_feature(bindings::VIRTIO_BLK_F_CONFIG_WCE) {
        return EINVAL.to_errno() as isize;
    }
    // SAFETY: sysfs passes `count` readable bytes.
    let input = unsafe { core::slice::from_raw_parts(buf.cast::<u8>(), count) };
    let Some(wb) = sg_plan::parse_cache_type(input) else {
        return EINVAL.to_errno() as isize;
    };
    device::virtblk_set_cache_mode(vdev, wb);
    let q = vblk.queue();
    // SAFETY: the queue is live while the attribute exists; start/commit
    // take and release `q->limits_lock`.
    let err = unsafe {
        let mut lim = bindings::queue_limits_start_update(q);
        if device::virtblk_get_cache_mode(vdev) != 0 {
            lim.features |= bindings::BLK_FEAT_WRITE_CACHE;
        } else {
            lim.features &= !bindings::BLK_FEAT_WRITE_CACHE;
        }
        bindings::queue_limits_commit_update_frozen(q, &mut lim)
    };
    if err != 0 {
        return err as isize;
    }
    count as isize
}

/// `is_visible`: `cache_type` is read-only without `CONFIG_WCE`.
unsafe extern "C" fn virtblk_attrs_are_visible(
    kobj: *mut bindings::kobject,
    a: *mut bindings::attribute,
    _n: core::ffi::c_int,
) -> bindings::umode_t {
    // SAFETY: `kobj` is embedded in the disk's `struct device`.
    let dev = unsafe { kobj.cast::<u8>().sub(offset_of!(bindings::device, kobj)) }
        .cast::<bindings::device>();
    // SAFETY: our disk's device, during `device_add_disk`.
    let vblk = unsafe { vblk_of(dev) };
    if a == CACHE_TYPE.attr() && !vblk.vdev().has_feature(bindings::VIRTIO_BLK_F_CONFIG_WCE) {
        return 0o444;
    }
    // SAFETY: `a` is one of our attributes.
    unsafe { (*a).mode }
}
