//! The modules' pure logic, compiled for the host so `cargo test` can check
//! it. Each file is included unchanged by the kernel module that uses it.

#[path = "../../common/params.rs"]
pub mod params;

#[path = "../../common/sg_plan.rs"]
pub mod sg_plan;

#[path = "../../common/split.rs"]
pub mod split;

#[path = "../../common/fault.rs"]
pub mod fault;

#[path = "../../common/zoned.rs"]
pub mod zoned;

#[path = "../../common/throttle.rs"]
pub mod throttle;

#[path = "../../common/badblocks.rs"]
pub mod badblocks;

#[path = "../../common/tags.rs"]
pub mod tags;

#[path = "../../common/page_table.rs"]
pub mod page_table;
