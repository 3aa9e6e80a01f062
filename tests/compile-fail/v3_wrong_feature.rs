// what: V3: a field named with another feature than the one it needs does not compile
// expect: this field does not need this feature
use kernel::{
    device::Bound, uapi::virtio_blk_config as C, uapi::VIRTIO_BLK_F_SEG_MAX, virtio,
    virtio_config_field,
};

fn misuse(dev: &virtio::Device<Bound>) -> Option<u32> {
    dev.read_feature(virtio_config_field!(C, max_discard_seg, VIRTIO_BLK_F_SEG_MAX))
}
