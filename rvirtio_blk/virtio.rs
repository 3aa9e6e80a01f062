// SPDX-License-Identifier: GPL-2.0

//! Thin wrappers over the C virtio API: the device, its config space, its
//! virtqueues and the driver registration.
//!
//! The 7.3 kernel crate has no virtio abstraction, so this module (and its
//! sibling [`crate::blk`] for blk-mq) is where the raw `bindings::` calls of
//! the driver live. The rest of the driver uses the types below.

use core::{cell::UnsafeCell, ffi::c_void, ptr::NonNull};
use kernel::{bindings, error::to_result, prelude::*, static_lock_class, types::Opaque};

/// A virtio device bound to this driver.
///
/// # Invariants
///
/// `self.0` points to a live `struct virtio_device` from the start of
/// `probe` until `remove` returns; the driver drops every copy before that.
#[derive(Clone, Copy)]
pub(crate) struct VirtioDevice(NonNull<bindings::virtio_device>);

// SAFETY: the C virtio core allows config-space and virtqueue calls from any
// thread; the driver serialises what needs it (virtqueue locks).
unsafe impl Send for VirtioDevice {}
// SAFETY: see `Send`.
unsafe impl Sync for VirtioDevice {}

impl VirtioDevice {
    /// Wraps the device handed to a driver callback.
    ///
    /// # Safety
    ///
    /// `ptr` must be a live virtio device bound to this driver, and stay so
    /// while the returned value is used.
    pub(crate) unsafe fn from_raw(ptr: *mut bindings::virtio_device) -> Self {
        // INVARIANT: guaranteed by the caller.
        // SAFETY: C passes non-null devices to driver callbacks.
        Self(unsafe { NonNull::new_unchecked(ptr) })
    }

    /// The raw pointer.
    pub(crate) fn as_ptr(self) -> *mut bindings::virtio_device {
        self.0.as_ptr()
    }

    /// `&vdev->dev`, the parent of the disk.
    pub(crate) fn device(self) -> *mut bindings::device {
        // SAFETY: `self.0` is live (type invariant); only the address is taken.
        unsafe { &raw mut (*self.as_ptr()).dev }
    }

    /// `vdev->priv`.
    pub(crate) fn drvdata(self) -> *mut c_void {
        // SAFETY: `self.0` is live (type invariant).
        unsafe { (*self.as_ptr()).priv_ }
    }

    /// Sets `vdev->priv`.
    pub(crate) fn set_drvdata(self, data: *mut c_void) {
        // SAFETY: `self.0` is live; `priv` belongs to the bound driver.
        unsafe { (*self.as_ptr()).priv_ = data };
    }

    /// `virtio_has_feature()`.
    pub(crate) fn has_feature(self, fbit: u32) -> bool {
        // SAFETY: `self.0` is live (type invariant).
        unsafe { bindings::virtio_has_feature(self.as_ptr(), fbit) }
    }

    /// Whether the transport can read the device-specific config space.
    pub(crate) fn has_config_access(self) -> bool {
        // SAFETY: `self.0` is live (type invariant).
        unsafe { bindings::virtio_has_config_get(self.as_ptr()) }
    }

    /// `virtio_cread8()` at byte offset `off` of the device config.
    pub(crate) fn cread8(self, off: usize) -> u8 {
        // SAFETY: `self.0` is live; the transport bounds-checks `off`.
        unsafe { bindings::virtio_cread8(self.as_ptr(), off as u32) }
    }

    /// `virtio_cread16()`.
    pub(crate) fn cread16(self, off: usize) -> u16 {
        // SAFETY: as for `cread8`.
        unsafe { bindings::virtio_cread16(self.as_ptr(), off as u32) }
    }

    /// `virtio_cread32()`.
    pub(crate) fn cread32(self, off: usize) -> u32 {
        // SAFETY: as for `cread8`.
        unsafe { bindings::virtio_cread32(self.as_ptr(), off as u32) }
    }

    /// `virtio_cread64()`.
    pub(crate) fn cread64(self, off: usize) -> u64 {
        // SAFETY: as for `cread8`.
        unsafe { bindings::virtio_cread64(self.as_ptr(), off as u32) }
    }

    /// `virtio_cwrite8()`.
    pub(crate) fn cwrite8(self, off: usize, val: u8) {
        // SAFETY: as for `cread8`.
        unsafe { bindings::virtio_cwrite8(self.as_ptr(), off as u32, val) }
    }

    /// `virtio_cread_feature()`: `read()` if `fbit` was negotiated.
    pub(crate) fn cread_feature<T>(self, fbit: u32, read: impl FnOnce(Self) -> T) -> Option<T> {
        if self.has_feature(fbit) {
            Some(read(self))
        } else {
            None
        }
    }

    /// `cpu_to_virtio32()`.
    pub(crate) fn cpu_to_virtio32(self, v: u32) -> u32 {
        // SAFETY: `self.0` is live (type invariant).
        unsafe { bindings::cpu_to_virtio32(self.as_ptr(), v) }
    }

    /// `cpu_to_virtio64()`.
    pub(crate) fn cpu_to_virtio64(self, v: u64) -> u64 {
        // SAFETY: `self.0` is live (type invariant).
        unsafe { bindings::cpu_to_virtio64(self.as_ptr(), v) }
    }

    /// `virtio_max_dma_size()`.
    pub(crate) fn max_dma_size(self) -> u64 {
        // SAFETY: `self.0` is live (type invariant).
        unsafe { bindings::virtio_max_dma_size(self.as_ptr()) as u64 }
    }

    /// `virtio_find_vqs()` with one callback for every queue, named after
    /// `names` (NUL-terminated, kept alive by the caller until `del_vqs`).
    pub(crate) fn find_vqs(
        self,
        names: &[[u8; 16]],
        callback: unsafe extern "C" fn(*mut bindings::virtqueue),
        out: &mut KVec<Virtqueue>,
    ) -> Result {
        let n = names.len();
        let mut infos = KVec::with_capacity(n, GFP_KERNEL)?;
        let mut vqs: KVec<*mut bindings::virtqueue> = KVec::with_capacity(n, GFP_KERNEL)?;
        for name in names {
            infos.push(
                bindings::virtqueue_info {
                    name: name.as_ptr().cast(),
                    callback: Some(callback),
                    ctx: false,
                },
                GFP_KERNEL,
            )?;
            vqs.push(core::ptr::null_mut(), GFP_KERNEL)?;
        }
        // An empty `irq_affinity` (as C's `struct irq_affinity desc = { 0, }`)
        // asks the transport to spread the queue interrupts over the CPUs, so
        // a request completes on the CPU that submitted it (no IPI); a null
        // one would leave every vector on the boot CPU.
        // SAFETY: all-zero is the documented default of `irq_affinity`.
        let mut desc: bindings::irq_affinity = unsafe { core::mem::zeroed() };
        // SAFETY: `infos` and `vqs` hold `n` entries each; the names outlive
        // the virtqueues (caller); `desc` is only read during the call.
        to_result(unsafe {
            bindings::virtio_find_vqs(
                self.as_ptr(),
                n as u32,
                vqs.as_mut_ptr(),
                infos.as_mut_ptr(),
                &mut desc,
            )
        })?;
        for vq in vqs.iter() {
            // INVARIANT: `find_vqs` succeeded, so every entry is a live queue
            // until `del_vqs`.
            out.push(Virtqueue(NonNull::new(*vq).ok_or(EINVAL)?), GFP_KERNEL)?;
        }
        Ok(())
    }

    /// `vdev->config->del_vqs()`. Every [`Virtqueue`] is dead afterwards.
    pub(crate) fn del_vqs(self) {
        // SAFETY: `self.0` is live; the caller stopped using the queues.
        unsafe { bindings::virtio_del_vqs(self.as_ptr()) }
    }

    /// `virtio_device_ready()`: the queues may be used from now on.
    pub(crate) fn device_ready(self) {
        // SAFETY: `self.0` is live (type invariant).
        unsafe { bindings::virtio_device_ready(self.as_ptr()) }
    }

    /// `virtio_synchronize_cbs()`: waits for running virtqueue callbacks.
    pub(crate) fn synchronize_cbs(self) {
        // SAFETY: `self.0` is live; `config` is set by the transport.
        let sync = unsafe { (*(*self.as_ptr()).config).synchronize_cbs };
        match sync {
            // SAFETY: the transport's own callback for this device.
            Some(f) => unsafe { f(self.as_ptr()) },
            // SAFETY: always callable from process context.
            None => unsafe { bindings::synchronize_rcu() },
        }
    }

    /// `virtio_reset_device()`: stops the device and its interrupts.
    pub(crate) fn reset(self) {
        // SAFETY: `self.0` is live (type invariant).
        unsafe { bindings::virtio_reset_device(self.as_ptr()) }
    }
}

/// One virtqueue of a [`VirtioDevice`].
///
/// # Invariants
///
/// `self.0` is a live virtqueue between `find_vqs` and `del_vqs`. Calls that
/// change the ring (`add_sgs`, `kick_prepare`, `get_buf`, callbacks control)
/// are made with the queue's [`IrqSpinLock`] held, as the C API requires.
#[derive(Clone, Copy)]
pub(crate) struct Virtqueue(NonNull<bindings::virtqueue>);

// SAFETY: virtqueue calls are serialised by the driver's per-queue lock.
unsafe impl Send for Virtqueue {}
// SAFETY: see `Send`.
unsafe impl Sync for Virtqueue {}

impl Virtqueue {
    /// Wraps the queue handed to a virtqueue callback.
    ///
    /// # Safety
    ///
    /// `ptr` must be a live virtqueue.
    pub(crate) unsafe fn from_raw(ptr: *mut bindings::virtqueue) -> Self {
        // SAFETY: callbacks get non-null queues; liveness from the caller.
        Self(unsafe { NonNull::new_unchecked(ptr) })
    }

    /// `vq->index`.
    pub(crate) fn index(self) -> usize {
        // SAFETY: `self.0` is live (type invariant).
        unsafe { (*self.0.as_ptr()).index as usize }
    }

    /// `vq->num_free`.
    pub(crate) fn num_free(self) -> u32 {
        // SAFETY: `self.0` is live (type invariant).
        unsafe { (*self.0.as_ptr()).num_free }
    }

    /// `vq->vdev`.
    pub(crate) fn vdev(self) -> VirtioDevice {
        // SAFETY: a live queue's device is live and bound to us.
        unsafe { VirtioDevice::from_raw((*self.0.as_ptr()).vdev) }
    }

    /// `virtqueue_add_sgs(vq, sgs, out, in, data, GFP_ATOMIC)`.
    ///
    /// # Safety
    ///
    /// The lock of this queue is held; `sgs` holds `out + in` valid,
    /// terminated scatterlists whose buffers stay alive and DMA-able until
    /// [`Virtqueue::get_buf`] returns `data`.
    pub(crate) unsafe fn add_sgs(
        self,
        sgs: &mut [*mut bindings::scatterlist],
        out: u32,
        in_: u32,
        data: *mut c_void,
    ) -> Result {
        // SAFETY: guaranteed by the caller.
        to_result(unsafe {
            bindings::virtqueue_add_sgs(
                self.0.as_ptr(),
                sgs.as_mut_ptr(),
                out,
                in_,
                data,
                bindings::GFP_ATOMIC,
            )
        })
    }

    /// `virtqueue_kick_prepare()`; call with the queue lock held.
    pub(crate) fn kick_prepare(self) -> bool {
        // SAFETY: `self.0` is live; the caller holds the queue lock.
        unsafe { bindings::virtqueue_kick_prepare(self.0.as_ptr()) }
    }

    /// `virtqueue_notify()`; may be called without the lock.
    pub(crate) fn notify(self) -> bool {
        // SAFETY: `self.0` is live (type invariant).
        unsafe { bindings::virtqueue_notify(self.0.as_ptr()) }
    }

    /// `virtqueue_kick()`; call with the queue lock held.
    pub(crate) fn kick(self) -> bool {
        // SAFETY: `self.0` is live; the caller holds the queue lock.
        unsafe { bindings::virtqueue_kick(self.0.as_ptr()) }
    }

    /// `virtqueue_get_buf()`: the `data` of a completed buffer.
    pub(crate) fn get_buf(self) -> Option<NonNull<c_void>> {
        let mut len = 0u32;
        // SAFETY: `self.0` is live; the caller holds the queue lock.
        NonNull::new(unsafe { bindings::virtqueue_get_buf(self.0.as_ptr(), &mut len) })
    }

    /// `virtqueue_is_broken()`: the device is gone (surprise removal) or
    /// misbehaved; it will not return buffers anymore.
    pub(crate) fn is_broken(self) -> bool {
        // SAFETY: `self.0` is live (type invariant).
        unsafe { bindings::virtqueue_is_broken(self.0.as_ptr()) }
    }

    /// `virtqueue_disable_cb()`.
    pub(crate) fn disable_cb(self) {
        // SAFETY: `self.0` is live (type invariant).
        unsafe { bindings::virtqueue_disable_cb(self.0.as_ptr()) }
    }

    /// `virtqueue_enable_cb()`: false if buffers arrived meanwhile.
    pub(crate) fn enable_cb(self) -> bool {
        // SAFETY: `self.0` is live (type invariant).
        unsafe { bindings::virtqueue_enable_cb(self.0.as_ptr()) }
    }
}

/// An interrupt-safe spinlock, for state shared with the virtqueue interrupt
/// callback.
///
/// It is taken with `spin_lock_irq_disable()`, the primitive under 7.3's
/// `SpinLockIrq`: like C's `spin_lock_irqsave()` it may be taken with
/// interrupts on or off (the virtqueue callback runs in hard interrupt
/// context) and restores the previous interrupt state on unlock, keeping
/// that state in a per-CPU count instead of a `flags` variable.
///
/// # Invariants
///
/// The lock is initialised by [`IrqSpinLock::init`] before first use and
/// does not move afterwards.
pub(crate) struct IrqSpinLock(Opaque<bindings::spinlock_t>);

impl IrqSpinLock {
    /// An uninitialised lock; call [`IrqSpinLock::init`] once it is in place.
    pub(crate) fn new() -> Self {
        Self(Opaque::uninit())
    }

    /// `spin_lock_init()`: every queue lock shares one lockdep class, as
    /// the single `spin_lock_init` call site of C `init_vq` gives them.
    ///
    /// # Safety
    ///
    /// Called once, before any `lock`, with `self` at its final address.
    pub(crate) unsafe fn init(&self) {
        // The name is a static string and the class key is static, as
        // lockdep requires.
        // SAFETY: `self.0` is valid memory for a spinlock, not in use yet
        // (caller).
        unsafe {
            bindings::__spin_lock_init(
                self.0.get(),
                c"VirtBlkVq::lock".as_char_ptr(),
                static_lock_class!().as_ptr(),
            )
        }
    }

    /// `spin_lock_irq_disable()`; unlocked (and the interrupt state
    /// restored) when the guard drops.
    pub(crate) fn lock(&self) -> IrqSpinLockGuard<'_> {
        // SAFETY: initialised (type invariant).
        unsafe { bindings::spin_lock_irq_disable(self.0.get()) };
        // INVARIANT: the lock is held from here until the guard drops.
        IrqSpinLockGuard { lock: self }
    }
}

/// Holds an [`IrqSpinLock`]; restores interrupts when dropped.
///
/// # Invariants
///
/// `self.lock` is held by this guard, taken with `spin_lock_irq_disable()`.
pub(crate) struct IrqSpinLockGuard<'a> {
    lock: &'a IrqSpinLock,
}

impl Drop for IrqSpinLockGuard<'_> {
    fn drop(&mut self) {
        // SAFETY: the lock is held with `spin_lock_irq_disable()` (type
        // invariant), and released once, here.
        unsafe { bindings::spin_unlock_irq_enable(self.lock.0.get()) }
    }
}

/// Callbacks of a virtio driver, in C ABI.
pub(crate) struct DriverOps {
    /// `probe`.
    pub(crate) probe: unsafe extern "C" fn(*mut bindings::virtio_device) -> core::ffi::c_int,
    /// `remove`.
    pub(crate) remove: unsafe extern "C" fn(*mut bindings::virtio_device),
    /// `config_changed`.
    pub(crate) config_changed: unsafe extern "C" fn(*mut bindings::virtio_device),
}

/// A `struct virtio_driver` in static storage, registered by
/// [`VirtioDriver::register`].
///
/// # Invariants
///
/// After a successful `register`, the C struct is owned by the driver core
/// until `unregister`; Rust never touches it in between.
pub(crate) struct VirtioDriver(UnsafeCell<bindings::virtio_driver>);

// SAFETY: the C struct is only written before registration (single-threaded
// module init) and by the driver core afterwards.
unsafe impl Sync for VirtioDriver {}

impl VirtioDriver {
    /// A driver for `id_table` (zero-terminated), offering `features`.
    pub(crate) const fn new(
        name: &'static CStr,
        id_table: &'static [bindings::virtio_device_id],
        features: &'static [u32],
        ops: DriverOps,
    ) -> Self {
        // SAFETY: all-zero is a valid `virtio_driver` (null pointers, no ops).
        let mut drv: bindings::virtio_driver = unsafe { core::mem::zeroed() };
        drv.driver.name = kernel::str::as_char_ptr_in_const_context(name);
        drv.id_table = id_table.as_ptr();
        drv.feature_table = features.as_ptr();
        drv.feature_table_size = features.len() as u32;
        drv.feature_table_legacy = features.as_ptr();
        drv.feature_table_size_legacy = features.len() as u32;
        drv.probe = Some(ops.probe);
        drv.remove = Some(ops.remove);
        drv.config_changed = Some(ops.config_changed);
        Self(UnsafeCell::new(drv))
    }

    /// `register_virtio_driver()`.
    ///
    /// # Safety
    ///
    /// Called once from module init; [`VirtioDriver::unregister`] must run
    /// before the module goes away.
    pub(crate) unsafe fn register(&'static self, module: &'static ThisModule) -> Result {
        // SAFETY: `self.0` is static and not otherwise in use.
        to_result(unsafe { bindings::__register_virtio_driver(self.0.get(), module.as_ptr()) })
    }

    /// `unregister_virtio_driver()`: removes every bound device.
    ///
    /// # Safety
    ///
    /// Only after a successful [`VirtioDriver::register`].
    pub(crate) unsafe fn unregister(&'static self) {
        // SAFETY: registered, per the caller.
        unsafe { bindings::unregister_virtio_driver(self.0.get()) }
    }
}
