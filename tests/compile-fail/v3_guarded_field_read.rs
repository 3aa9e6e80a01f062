// what: V3: a field that exists only with a feature is read only through read_feature, which checks the feature
// expect: error\[E0308\]: mismatched types
use kernel::{
    device::Bound, uapi::virtio_blk_config as C, uapi::VIRTIO_BLK_F_DISCARD, virtio,
    virtio_config_field,
};

fn misuse(dev: &virtio::Device<Bound>) -> u32 {
    dev.read(virtio_config_field!(C, max_discard_seg, VIRTIO_BLK_F_DISCARD))
}
