// what: V3: a field that exists only with a feature cannot be named without it
// expect: this field exists only with a feature
use kernel::{device::Bound, uapi::virtio_blk_config as C, virtio, virtio_config_field};

fn misuse(dev: &virtio::Device<Bound>) -> u32 {
    dev.read(virtio_config_field!(C, max_discard_seg))
}
