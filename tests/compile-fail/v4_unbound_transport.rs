// what: V4: a device that may be unbound (an ARef kept in a work item) cannot reach its transport: max_dma_size, config_generation, has_feature need the bound context
// expect: error\[E0599\]: no method named `max_dma_size` found
use kernel::{sync::aref::ARef, virtio};

fn misuse(dev: ARef<virtio::Device>) -> usize {
    dev.max_dma_size()
}
