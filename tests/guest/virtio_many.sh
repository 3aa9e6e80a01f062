#!/bin/bash
# $MANY virtio-blk devices (tests/host/virtio_many.sh): rvirtio_blk makes a
# disk for each (indices past 63, as C virtio_blk's IDA gives), names them as
# C does (rvda..rvdz, rvdaa..), frees the indices at unbind and reuses the
# lowest; C virtio_blk on the same devices makes as many disks.
. "$REPO/tests/lib.sh"
KO=$MODDIR/rvirtio_blk/rvirtio_blk.ko
CKO=$KDIR/drivers/block/virtio_blk.ko
n_rvd() { ls -d /sys/block/rvd* 2>/dev/null | wc -l; }
# The disk's device number, with the major's name from /proc/devices.
devnum() { # DISK MAJOR-NAME
    local maj
    maj=$(awk -v n="$2" '$2 == n {print $1}' /proc/devices)
    sed "s/^$maj:/$2:/" "/sys/block/$1/dev"
}
check "insmod rvirtio_blk" insmod "$KO"
udevadm settle 2>/dev/null
expect_eq "a disk for each of the $MANY devices" "$(n_rvd)" "$MANY"
# Indices are given lowest first, in probe order: 0..MANY-1, rvda..rvdbr.
expect_eq "the 65th and 70th disks are rvdbm and rvdbr" \
    "$(ls -d /sys/block/rvdbm /sys/block/rvdbr 2>/dev/null | wc -l)" 2
# Its own major, 16 minors a disk, as C virtio_blk's (patch 0066).
expect_eq "rvdbr is rvirtblk:1104 (index 69, 16 minors a disk)" "$(devnum rvdbr rvirtblk)" rvirtblk:1104
check "rvdbr (index 69) reads" dd if=/dev/rvdbr of=/dev/null bs=4k count=16 iflag=direct status=none
v=$(basename "$(readlink -f /sys/block/rvdc/device)")
echo "$v" > /sys/bus/virtio/drivers/rvirtio_blk/unbind
check "unbind frees rvdc" test ! -e /sys/block/rvdc
echo "$v" > /sys/bus/virtio/drivers/rvirtio_blk/bind
check "bind takes the lowest free index again: rvdc" test -e /sys/block/rvdc
expect_eq "... and its number again: rvirtblk:32" "$(devnum rvdc rvirtblk)" rvirtblk:32
check "rmmod rvirtio_blk" rmmod rvirtio_blk
expect_eq "no rvd* disk left" "$(n_rvd)" 0
expect_eq "rmmod unregisters the major" "$(grep -c ' rvirtblk$' /proc/devices)" 0
dmesg_clean "rvirtio_blk with $MANY disks"
check "insmod C virtio_blk" insmod "$CKO"
udevadm settle 2>/dev/null
expect_eq "C virtio_blk: a disk for each of the $MANY devices" "$(ls -d /sys/block/vd* 2>/dev/null | wc -l)" "$MANY"
check "C virtio_blk names them the same way: vdbr" test -e /sys/block/vdbr
expect_eq "C virtio_blk numbers it the same way: virtblk:1104" "$(devnum vdbr virtblk)" virtblk:1104
check "rmmod C virtio_blk" rmmod virtio_blk
dmesg_clean "C virtio_blk with $MANY disks"
finish
