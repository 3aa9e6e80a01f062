// what: V1: a queue's unused buffers come back only from a reset device (Virtqueues::reset_and_detach_unused); the ring guard has no detach_unused_buf
// expect: error\[E0599\]: no method named `detach_unused_buf`
use kernel::virtio::{Queue, QueueHandler};

fn misuse<T: QueueHandler>(q: &Queue<T>) {
    while let Some(t) = q.lock().detach_unused_buf() {
        drop(t);
    }
}
