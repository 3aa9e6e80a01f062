// SPDX-License-Identifier: GPL-2.0

//! Module parameters (read at probe; set them with `insmod rvirtio_blk.ko
//! name=value`).

use crate::virtio::module_param_uint;

module_param_uint!(
    NUM_QUEUES,
    "num_queues",
    0,
    "Limit the number of request queues (0: one per virtqueue, at most one per CPU)"
);
module_param_uint!(
    QUEUE_DEPTH,
    "queue_depth",
    0,
    "Tags per hardware queue (0: fill the virtqueue)"
);
module_param_uint!(
    SG_PREALLOC,
    "sg_prealloc",
    0,
    "1: preallocate seg_max scatterlist entries per request (pre-2021 design); 0: two inline, chain beyond"
);
