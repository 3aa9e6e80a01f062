// what: only the owner of a disk stops its queue: GenDisk::quiesce takes &mut, so a shared GenDisk (or the Disk it derefs to) cannot quiesce it under its owner
// expect: error\[E0596\]: cannot borrow `\*disk` as mutable, as it is behind a `&` reference
use kernel::block::mq::gen_disk::GenDisk;

fn misuse(disk: &GenDisk<D>) {
    disk.quiesce();
}
