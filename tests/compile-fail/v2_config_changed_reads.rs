// what: V2: config_changed (atomic context) gets a device without the bound context, which cannot read the config space (that may sleep)
// expect: error\[E0599\]: no method named `read` found for reference `&kernel::virtio::Device`
use kernel::{uapi::virtio_blk_config as C, virtio, virtio_config_field};

fn config_changed(dev: &virtio::Device) -> u64 {
    dev.read(virtio_config_field!(C, capacity))
}
