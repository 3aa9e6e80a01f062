#!/bin/bash
# rvirtio_blk and C virtio_blk across a suspend with pm_test=devices (see
# tests/host/virtio_pm.sh): both drivers' freeze and restore run, nothing is
# powered down.
#  1. rvirtio_blk takes rpm-rust, C virtio_blk rpm-c; each disk gets the
#     host's 8 MiB pattern, read back.
#  2. fio crc32c randwrite + verify on both, before the suspend.
#  3. A busybox loop on each disk writes 1 MiB chunks (two contents,
#     alternating per pass over 16 positions, so a lost write shows) and
#     reads each back, from before the suspend until after it; the suspend
#     returns 0.
#  4. After it: the loops went on after the resume and never read back
#     other data, the pattern reads back on both, nothing is in flight, a
#     new write reads back, and the kernel logged no report.
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
    check "$1 ($2): fio crc32c randwrite + verify before the suspend" \
        fio --name=pm --filename=/dev/$2 --allow_file_create=0 --direct=1 --ioengine=libaio \
        --iodepth=16 --rw=randwrite --bsrange=4k-64k --offset=16M --size=16M --verify=crc32c \
        --do_verify=1 --verify_fatal=1 --randrepeat=0 --output=/dev/null
done

# Everything the rest needs, in tmpfs; busybox's sh runs commands from PATH,
# which must not reach 9p.
mkdir -p $PM/bin
cp /bin/busybox $PM/busybox
for a in sh dd md5sum cat tail sed tr grep sleep dmesg sync cut head touch; do
    ln -s ../busybox $PM/bin/$a
done
for d in rust c; do md5sum < "$OUT/$d.pat" | cut -d' ' -f1 > $PM/$d.md5; done
state=freeze
grep -qw mem /sys/power/state && state=mem

# The loop of item 3 (busybox sh): $1 the name, $2 the disk.
cat > $PM/loop.sh <<'SH'
export PATH=/run/pm/bin
P=/run/pm w=$1 d=$2 i=0
dd if=/dev/urandom of=$P/$w.a bs=64k count=16 2>/dev/null
dd if=/dev/urandom of=$P/$w.b bs=64k count=16 2>/dev/null
a=$(md5sum < $P/$w.a | cut -d' ' -f1); b=$(md5sum < $P/$w.b | cut -d' ' -f1)
while [ ! -f $P/stop ]; do
    off=$((768 + (i % 16) * 16))   # 64 KiB blocks: 48 MiB + (i % 16) MiB
    if [ $(((i / 16) % 2)) = 0 ]; then f=$P/$w.a want=$a; else f=$P/$w.b want=$b; fi
    dd if=$f of=/dev/$d bs=64k seek=$off oflag=direct 2>/dev/null || echo "pass $i: write failed" >> $P/$w.bad
    got=$(dd if=/dev/$d bs=64k skip=$off count=16 iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1)
    [ "$got" = "$want" ] || echo "pass $i: read $got, want $want" >> $P/$w.bad
    i=$((i + 1)); echo $i > $P/$w.n
done
echo $i > $P/$w.done
SH

# After the suspend (busybox sh): $1 the number of the last TAP line.
cat > $PM/after.sh <<SH
export PATH=$PM/bin
n=\$1
t() { n=\$((n + 1)); echo "PMTAP \$1 \$n - \$2" > /dev/console; }
n0r=\$(cat $PM/rust.n); n0c=\$(cat $PM/c.n)
sleep 5
touch $PM/stop
for f in rust:$RUST:\$n0r c:$C:\$n0c; do
    w=\${f%%:*}; r=\${f#*:}; d=\${r%%:*}; n0=\${r#*:}
    i=0
    while [ ! -f $PM/\$w.done ] && [ \$i -lt 120 ]; do sleep 1; i=\$((i + 1)); done
    n1=\$(cat $PM/\$w.done 2>/dev/null || echo 0)
    [ "\$n1" -gt "\$n0" ] \
        && t ok "\$w (\$d): the write+read loop went on after the resume (pass \$n0 at the resume, \$n1 at the end)" \
        || t "not ok" "\$w (\$d): the write+read loop went on after the resume (pass \$n0 at the resume, \$n1 at the end)"
    [ ! -f $PM/\$w.bad ] && t ok "\$w (\$d): every pass read back what it wrote, across the suspend" \
        || t "not ok" "\$w (\$d): every pass read back what it wrote: \$(head -n 3 $PM/\$w.bad)"
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
    $PM/busybox sh $PM/loop.sh $1 $2 &
done
sleep 3
echo devices > /sys/power/pm_test
diag "suspending ($state, pm_test=devices) with the loops at pass $(cat $PM/rust.n) ($RUST) and $(cat $PM/c.n) ($C)"
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
