#!/bin/bash
# rvirtio_blk and C virtio_blk across a suspend with pm_test=devices (see
# tests/host/virtio_pm.sh): both drivers' freeze and restore run, nothing is
# powered down.
#  1. rvirtio_blk takes rpm-rust, C virtio_blk rpm-c; each disk gets the
#     host's 8 MiB pattern, read back.
#  2. fio crc32c randwrite with a verify backlog runs on both disks from
#     16 MiB on, through the suspend; the suspend returns 0.
#  3. After it: fio ended with status 0 (its verifies passed), the pattern
#     reads back on both, nothing is in flight, a new write reads back, and
#     the kernel logged no report.
# The suspend resets the 9p devices under their driver (it has no
# freeze/restore), so everything after it runs from tmpfs with busybox,
# reports on the console ("PMTAP " lines) and powers the guest off.
. "$REPO/tests/lib.sh"
. "$REPO/tests/badlog.sh"
KO=$MODDIR/rvirtio_blk/rvirtio_blk.ko
CKO=$KDIR/drivers/block/virtio_blk.ko
PM=/run/pm

die_here() { not_ok "$1"; finish; exit 1; }
[[ -w /sys/power/pm_test ]] || die_here "/sys/power/pm_test exists (CONFIG_PM_DEBUG, CONFIG_SUSPEND)"
ok "/sys/power/pm_test: $(cat /sys/power/pm_test); states: $(cat /sys/power/state)"
insmod "$KO" || die_here "insmod rvirtio_blk"
RUST=$(disk_by_serial rpm-rust); VC=$(disk_by_serial rpm-c)
[[ -n $RUST && -n $VC ]] || die_here "rvirtio_blk took both disks"
vdev=$(basename "$(readlink -f /sys/block/$VC/device)")
echo "$vdev" > /sys/bus/virtio/drivers/rvirtio_blk/unbind
insmod "$CKO" || die_here "insmod C virtio_blk ($CKO)"
C=$(ls /sys/bus/virtio/devices/$vdev/block 2>/dev/null | head -n 1)
[[ -n $C ]] || die_here "C virtio_blk took $vdev"
ok "disks: rvirtio_blk $RUST, C virtio_blk $C"
for d in "rust $RUST" "c $C"; do
    set -- $d
    check "$1 ($2): the 8 MiB pattern written" \
        dd if="$OUT/$1.pat" of=/dev/$2 bs=1M oflag=direct status=none
    expect_eq "$1 ($2): ... and read back" \
        "$(dd if=/dev/$2 bs=1M count=8 iflag=direct status=none | md5sum)" "$(md5sum < "$OUT/$1.pat")"
done

# Everything the rest needs, in tmpfs.
mkdir -p $PM
cp /bin/busybox $PM/busybox
# (busybox's sh runs commands from PATH, which must not be 9p)
mkdir -p $PM/bin
for a in sh dd md5sum cat tail sed tr grep sleep dmesg sync cut ls ps; do ln -s ../busybox $PM/bin/$a; done
cp "$OUT/rust.pat" "$OUT/c.pat" $PM/
for d in rust c; do md5sum < $PM/$d.pat | cut -d' ' -f1 > $PM/$d.md5; done
state=freeze
grep -qw mem /sys/power/state && state=mem
cat > $PM/after.sh <<SH
# Runs from tmpfs with busybox only. \$1: the number of the last TAP line.
export PATH=$PM/bin
n=\$1
t() { n=\$((n + 1)); echo "PMTAP \$1 \$n - \$2" > /dev/console; }
echo "PMTAP # after the suspend: waiting for fio" > /dev/console
for f in rust:$RUST c:$C; do
    w=\${f%%:*}; d=\${f#*:}
    i=0
    while [ ! -f $PM/\$w.rc ] && [ \$i -lt 180 ]; do
        sleep 1; i=\$((i + 1))
        [ \$((i % 20)) = 0 ] && echo "PMTAP # \$i s: inflight \$(cat /sys/block/$RUST/inflight) / \$(cat /sys/block/$C/inflight); \$(ls $PM)" > /dev/console
    done
    rc=\$(cat $PM/\$w.rc 2>/dev/null || echo none)
    [ "\$rc" = 0 ] && t ok "\$w (\$d): fio randwrite + crc32c verify through the suspend (status 0)" \
        || { t "not ok" "\$w (\$d): fio randwrite + crc32c verify through the suspend (status \$rc)"; tail -n 15 $PM/\$w.fio | sed 's/^/PMTAP # fio: /' > /dev/console; }
    sum=\$(dd if=/dev/\$d bs=1M count=8 iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1)
    [ "\$sum" = "\$(cat $PM/\$w.md5)" ] && t ok "\$w (\$d): the pattern written before the suspend reads back" \
        || t "not ok" "\$w (\$d): the pattern written before the suspend reads back (md5 \$sum)"
    fl=\$(cat /sys/block/\$d/inflight | tr -s ' ')
    [ "\$fl" = " 0 0" ] && t ok "\$w (\$d): nothing in flight" || t "not ok" "\$w (\$d): nothing in flight ('\$fl')"
    dd if=/dev/urandom of=$PM/\$w.new bs=64k count=16 2>/dev/null
    dd if=$PM/\$w.new of=/dev/\$d bs=64k seek=160 oflag=direct 2>/dev/null
    [ "\$(dd if=/dev/\$d bs=64k skip=160 count=16 iflag=direct 2>/dev/null | md5sum)" = "\$(md5sum < $PM/\$w.new)" ] \
        && t ok "\$w (\$d): a 1 MiB write after the resume reads back" \
        || t "not ok" "\$w (\$d): a 1 MiB write after the resume reads back"
done
bad=\$(dmesg | grep -m1 -E '$BAD_LOG')
[ -z "\$bad" ] && t ok "no kernel report (BUG, WARNING, lockdep, KASAN, hung task...)" \
    || t "not ok" "no kernel report: \$bad"
dmesg | grep -E 'PM: |virtio|rvirtio|suspend' | tail -n 20 | sed 's/^/PMTAP # kernel: /' > /dev/console
echo PMTAP-END > /dev/console
sync
echo o > /proc/sysrq-trigger
SH

for d in "rust $RUST" "c $C"; do
    set -- $d
    ( fio --name=pm --filename=/dev/$2 --allow_file_create=0 --direct=1 --ioengine=libaio --iodepth=16 \
        --rw=randwrite --bsrange=4k-64k --offset=16M --size=32M --time_based --runtime=25 \
        --verify=crc32c --verify_backlog=256 --verify_fatal=1 --randrepeat=0 > $PM/$1.fio 2>&1
      echo $? > $PM/$1.rc ) &
done
sleep 3
echo devices > /sys/power/pm_test
diag "suspending ($state, pm_test=devices) with fio running on $RUST and $C"
echo "virtio_pm: suspend" > /dev/kmsg
# From here on $OUT and the repo (9p) may never answer again.
cd $PM
n=$_n
if echo $state > /sys/power/state 2> $PM/state.err; then
    echo "PMTAP ok $((n + 1)) - echo $state > /sys/power/state (pm_test=devices) returned 0" > /dev/console
else
    echo "PMTAP not ok $((n + 1)) - echo $state > /sys/power/state (pm_test=devices): $(< $PM/state.err)" > /dev/console
fi
# (Not exec: that would close this script's file, and closing a 9p file
# waits for the device.)
$PM/busybox sh $PM/after.sh $((n + 1))
sleep 3600
