// SPDX-License-Identifier: GPL-2.0

//! Disk attributes: `serial` (GET_ID, asked on each read, as C) and `cache_type`
//! (writable when the device offers `VIRTIO_BLK_F_CONFIG_WCE`), as in C
//! virtio_blk. `queue/write_cache` is the block layer's own attribute.
//!
//! The attributes are removed by `del_gendisk` in remove, which waits for
//! the callbacks running: they run while the device is bound.

use crate::{device, request::VirtioMq, sg_plan};
use kernel::{
    block::mq::{
        attribute::{Attribute, AttributeOperations},
        gen_disk::Disk,
    },
    page::PAGE_SIZE,
    prelude::*,
};

/// `serial`.
static SERIAL: Attribute<VirtioMq> = Attribute::new::<0>(c"serial");
/// `cache_type`.
static CACHE_TYPE: Attribute<VirtioMq> = Attribute::new::<1>(c"cache_type");

kernel::disk_attribute_group!(pub(crate) static GROUPS: VirtioMq = [SERIAL, CACHE_TYPE]);

/// Copies `s` into `page`; returns its length.
fn emit(page: &mut [u8; PAGE_SIZE], s: &[u8]) -> usize {
    let n = s.len().min(PAGE_SIZE);
    page[..n].copy_from_slice(&s[..n]);
    n
}

#[vtable]
impl AttributeOperations<0> for VirtioMq {
    /// The serial, without a newline, asked of the device on each read, as
    /// C `serial_show`: empty if the device does not support GET_ID (`EIO`).
    fn show(disk: &Disk<Self>, page: &mut [u8; PAGE_SIZE]) -> Result<usize> {
        match device::virtblk_get_id(&disk.queue_data(), disk) {
            Ok(serial) => Ok(emit(page, &serial[..sg_plan::serial_len(&serial)])),
            Err(e) if e == EIO => Ok(0),
            Err(e) => Err(e),
        }
    }
}

#[vtable]
impl AttributeOperations<1> for VirtioMq {
    /// `write back` or `write through`.
    fn show(disk: &Disk<Self>, page: &mut [u8; PAGE_SIZE]) -> Result<usize> {
        // (The attribute goes before the unbind: the device is bound.)
        let wb = disk
            .queue_data()
            .with_bound(device::virtblk_get_cache_mode)? as usize;
        let s = sg_plan::CACHE_TYPES[wb].as_bytes();
        page[..s.len()].copy_from_slice(s);
        page[s.len()] = b'\n';
        Ok(s.len() + 1)
    }

    /// Switches the device's cache mode, and the disk's write cache with it.
    fn store(disk: &Disk<Self>, input: &[u8]) -> Result {
        let vblk = disk.queue_data();
        if !vblk.config_wce {
            return Err(EINVAL);
        }
        let wb = sg_plan::parse_cache_type(input).ok_or(EINVAL)?;
        let on = vblk.with_bound(|vdev| {
            device::virtblk_set_cache_mode(vdev, wb)?;
            Ok::<_, Error>(device::virtblk_get_cache_mode(vdev) != 0)
        })??;
        disk.set_write_cache(on)
    }

    /// Read-only without `CONFIG_WCE`, as C `virtblk_attrs_are_visible`.
    fn is_writable(disk: &Disk<Self>) -> bool {
        disk.queue_data().config_wce
    }
}
