// what: a disk number is one disk's: DiskNumber is neither Clone nor Copy, so two disks cannot be given the same minors of a major (device_add() would fail with a sysfs warning)
// expect: error\[E0382\]: use of moved value: `n`
use kernel::block::{major::Major, mq::gen_disk::GenDiskBuilder};
use kernel::sync::Arc;

fn misuse(major: &Arc<Major>) -> Result {
    let n = major.index(None)?;
    let _a = GenDiskBuilder::new().number(n);
    let _b = GenDiskBuilder::new().number(n);
    Ok(())
}
