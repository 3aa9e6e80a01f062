// what: V7: the virtqueues are deleted (and created again) only in a bus callback, with the device lock held (Device<Core>): a merely bound device, from a work item or sysfs, cannot
// expect: error\[E0308\]: mismatched types
use kernel::{
    device::Bound,
    virtio::{self, QueueHandler, Virtqueues},
};

fn misuse<T: QueueHandler>(dev: &virtio::Device<Bound>, vqs: &Virtqueues<'_, T>) -> Result {
    vqs.delete(dev, |_q, token| drop(token))
}
