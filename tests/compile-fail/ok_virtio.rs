// what: the legal virtio config and queue uses compile: fields every device has, guarded fields with their feature, the byte order kept for later, the reset that gives back unused buffers, the virtqueues deleted and created again in a bus callback
// expect: -
use kernel::{
    device::{Bound, Core},
    uapi::{virtio_blk_config as C, VIRTIO_BLK_F_DISCARD, VIRTIO_BLK_F_GEOMETRY},
    virtio::{self, QueueHandler, Virtqueues},
    virtio_config_field,
};

fn ok(dev: &virtio::Device<Bound>) -> (u64, Option<u32>, Option<u16>, u32) {
    let order = dev.byte_order();
    (
        dev.read(virtio_config_field!(C, capacity)),
        dev.read_feature(virtio_config_field!(C, max_discard_seg, VIRTIO_BLK_F_DISCARD)),
        dev.read_feature(virtio_config_field!(C, geometry.cylinders, VIRTIO_BLK_F_GEOMETRY)),
        order.cpu_to_virtio32(1),
    )
}

fn ok_reset<T: QueueHandler>(dev: &virtio::Device<Core<'_>>, vqs: &Virtqueues<'_, T>) -> Result {
    vqs.reset_and_detach_unused(dev, |_q, token| drop(token))
}

fn ok_freeze<T: QueueHandler>(dev: &virtio::Device<Core<'_>>, vqs: &Virtqueues<'_, T>) -> Result {
    vqs.delete(dev, |_q, token| drop(token))?;
    vqs.recreate(dev)
}
