#!/bin/bash
# rvirtio_blk on five QEMU virtio-blk-pci disks (see tests/host/virtio.sh):
# probe and naming, serial, exact reads of a host pattern, writes + flush,
# fio verify=crc32c at 1, 2, 3 and many segments with the chained-table
# counter moving only beyond two, a seg_max=6 device, sg_prealloc=1, ext4,
# read-only, discard and write zeroes, EIO injection, two queues, write
# cache, resize, unbind/bind and rmmod with I/O in flight, poll queues
# (io_uring --hipri completes on them), and modprobe by
# a virtio disk's modalias (the alias modpost writes from the ID table).
. "$REPO/tests/lib.sh"
KO=$MODDIR/rvirtio_blk/rvirtio_blk.ko
DBG=/sys/kernel/debug/rvirtio_blk
PATTERN_HEAD() { printf '%016x rvirtio pattern ' "$1"; }

loaded() { grep -q '^rvirtio_blk ' /proc/modules; }
ctr() { cat "$DBG/$1/$2"; }
# fio_verify DEV BS SIZE OFFSET [EXTRA...]: write + crc32c verify
fio_verify() {
    local dev=$1 bs=$2 size=$3 off=$4; shift 4
    # (timeout: a lost request fails this check instead of hanging the suite)
    timeout -k 10 300 fio --name=v --filename=/dev/$dev --allow_file_create=0 --direct=1 --ioengine=libaio --iodepth=8 \
        --rw=randwrite --bs="$bs" --size="$size" --offset="$off" --verify=crc32c \
        --do_verify=1 --verify_fatal=1 --randrepeat=0 "$@" >/tmp/fio.out 2>&1
    local rc=$?
    [[ $rc == 0 ]] || sed 's/^/# fio: /' /tmp/fio.out | tail -n 15
    return $rc
}

# --- probe -----------------------------------------------------------------------
if ! insmod "$KO"; then
    not_ok "insmod rvirtio_blk"
    finish; exit 1
fi
ok "insmod rvirtio_blk"
udevadm settle 2>/dev/null; sleep 1
DATA=$(disk_by_serial rvt-data); RO=$(disk_by_serial rvt-ro)
SMALL=$(disk_by_serial rvt-small); ERR=$(disk_by_serial rvt-err); FS=$(disk_by_serial rvt-fs)
diag "disks: data=$DATA ro=$RO small=$SMALL err=$ERR fs=$FS"
expect_eq "five rvd* disks, found by serial" \
    "$(ls -d /sys/block/rvd* | wc -l) ${DATA:+d}${RO:+r}${SMALL:+s}${ERR:+e}${FS:+f}" "5 drsef"
check "disk names do not collide with C virtio_blk (no vd*)" bash -c '! ls -d /sys/block/vd* 2>/dev/null'
check "the disk is a block device node" test -b "/dev/$DATA"
expect_eq "data disk size is 64 MiB" "$(blockdev --getsize64 /dev/$DATA)" $((64 << 20))
expect_eq "serial attribute (GET_ID)" "$(cat /sys/block/$DATA/serial)" rvt-data
# As C: each read of `serial` asks the device (a GET_ID request), so a
# device that never answers cannot hang the probe.
vq_sum() { cat $DBG/$1/vq*_requests | awk '{ s += $1 } END { print s + 0 }'; }
n0=$(vq_sum $DATA)
for _ in 1 2 3; do cat /sys/block/$DATA/serial > /dev/null; done
n1=$(vq_sum $DATA)
check "serial: each read is a GET_ID request ($((n1 - n0)) requests for 3 reads)" \
    test $((n1 - n0)) -ge 3
expect_eq "two hardware queues on num-queues=2" "$(ls /sys/block/$DATA/mq | wc -l)" 2
expect_eq "max_segments = seg_max (queue-size 256 - 2)" "$(sysblk $DATA queue/max_segments)" 254
expect_eq "small device: max_segments = seg_max 6" "$(sysblk $SMALL queue/max_segments)" 6
expect_eq "small device without indirect descriptors: depth = ring / 2" "$(ctr $SMALL queue_depth)" 4
expect_eq "inline SG entries per request: 2" "$(ctr $DATA inline_sg)" 2
diag "pdu_bytes=$(ctr $DATA pdu_bytes) tagset_sg_bytes=$(ctr $DATA tagset_sg_bytes) queue_depth=$(ctr $DATA queue_depth) nr_hw_queues=$(ctr $DATA nr_hw_queues)"
dmesg_clean "probe"

# --- the host's pattern reads back exactly ----------------------------------------
want=$(cat "$OUT/data.sha256")
got=$(dd if=/dev/$DATA bs=64k iflag=direct status=none | sha256sum | cut -d' ' -f1)
expect_eq "64 MiB direct read (64 KiB) matches the host's pattern" "$got" "$want"
got=$(dd if=/dev/$DATA bs=1M status=none | sha256sum | cut -d' ' -f1)
expect_eq "64 MiB buffered read (page cache, readahead) matches" "$got" "$want"
ok_sect=1
for s in 0 1 7 4095 65535 131071; do
    got=$(dd if=/dev/$DATA bs=512 skip=$s count=1 iflag=direct status=none | head -c 40)
    [[ $got == "$(PATTERN_HEAD $s)$(PATTERN_HEAD $s | head -c 7)" ]] || { ok_sect=0; diag "sector $s: '$got'"; }
done
check "single 512-byte sectors hold their own number" test $ok_sect == 1
dmesg_clean "pattern reads"

# --- guest writes, flush, host checks after power-off -----------------------------
head -c $((16 << 20)) /dev/urandom > /tmp/w.bin
sha256sum < /tmp/w.bin | cut -d' ' -f1 > "$OUT/written.sha256"
if dd if=/tmp/w.bin of=/dev/$DATA bs=256k seek=128 oflag=direct conv=fsync status=none; then
    ok "wrote 16 MiB at 32 MiB with O_DIRECT and fsync (flush)"
else
    not_ok "write 16 MiB at 32 MiB"
fi
got=$(dd if=/dev/$DATA bs=1M skip=32 count=16 iflag=direct status=none | sha256sum | cut -d' ' -f1)
expect_eq "the written 16 MiB read back" "$got" "$(cat "$OUT/written.sha256")"
dmesg_clean "writes"

# --- segments: fio verify, chained counter only beyond 2 segments ------------------
# The data region 48..64 MiB is scratch for fio (the host checks 32..48).
seg_case() { # seg_case DEV DESC BS EXPECT(none|some) [fio args]
    local dev=$1 desc=$2 bs=$3 expect=$4; shift 4
    local r0 c0 r1 c1
    # (A fio that outlives its disk must not leave a regular file in /dev.)
    check "/dev/$dev is the block device" test -b /dev/$dev
    r0=$(ctr $dev requests); c0=$(ctr $dev chained)
    if fio_verify $dev $bs 2M 48M "$@"; then
        ok "fio verify=crc32c bs=$bs on $desc"
    else
        not_ok "fio verify=crc32c bs=$bs on $desc"
    fi
    r1=$(ctr $dev requests); c1=$(ctr $dev chained)
    diag "bs=$bs: requests +$((r1 - r0)), chained +$((c1 - c0)) ($dev: $r0 -> $r1, $(ls $DBG | tr '\n' ' '))"
    if [[ $bs != 512 && $bs != 4k && $bs != 8k ]]; then
        # fio's few buffers may happen to be physically contiguous (then a
        # big I/O is one segment). Page-cache writeback of fresh pages
        # reliably gives multi-segment requests; check its data too.
        local w
        w=$(head -c $((4 << 20)) /dev/urandom | tee /tmp/wb.bin | sha256sum | cut -d' ' -f1)
        echo 0 > /sys/block/$dev/queue/nomerges   # let page bios merge
        dd if=/tmp/wb.bin of=/dev/$dev bs=1M seek=52 conv=fsync status=none
        echo 2 > /sys/block/$dev/queue/nomerges
        echo 1 > /proc/sys/vm/drop_caches
        expect_eq "buffered 4 MiB write-back on $desc reads back" \
            "$(dd if=/dev/$dev bs=1M skip=52 count=4 iflag=direct status=none | sha256sum | cut -d' ' -f1)" "$w"
        r1=$(ctr $dev requests); c1=$(ctr $dev chained)
        diag "bs=$bs + write-back: requests +$((r1 - r0)), chained +$((c1 - c0))"
    fi
    if [[ $expect == none ]]; then
        expect_eq "bs=$bs ($desc): no chained SG table" $((c1 - c0)) 0
    else
        check "bs=$bs ($desc): chained SG tables used (+$((c1 - c0)))" test $((c1 - c0)) -gt 0
    fi
    check "bs=$bs: requests counter moved (+$((r1 - r0)))" test $((r1 - r0)) -ge $((2048 * 1024 / $(numfmt --from=iec ${bs^^})))
}
# No merging, so a request has exactly the segments of one fio I/O.
echo 2 > /sys/block/$DATA/queue/nomerges; echo 2 > /sys/block/$SMALL/queue/nomerges
seg_case $DATA "1 segment" 512 none
seg_case $DATA "1 segment" 4k none
seg_case $DATA "2 segments" 8k none
seg_case $DATA "3 segments" 12k some
seg_case $DATA "many segments" 256k some
seg_case $SMALL "seg_max=6 device" 64k some
expect_eq "no SG pool bytes held when idle" "$(ctr $DATA sg_bytes)" 0
check "peak SG pool bytes recorded" test "$(ctr $DATA sg_bytes_peak)" -gt 0
diag "data: sg_bytes_peak=$(ctr $DATA sg_bytes_peak) small: sg_bytes_peak=$(ctr $SMALL sg_bytes_peak)"
dmesg_clean "segments"

# --- two queues both used ---------------------------------------------------------
q0=$(ctr $DATA vq0_requests); q1=$(ctr $DATA vq1_requests)
fio --name=q --allow_file_create=0 --filename=/dev/$DATA --direct=1 --ioengine=libaio --iodepth=4 --rw=randread \
    --bs=4k --size=4M --offset=0 --numjobs=2 --cpus_allowed=0,1 --cpus_allowed_policy=split \
    >/dev/null 2>&1
q0b=$(ctr $DATA vq0_requests); q1b=$(ctr $DATA vq1_requests)
diag "vq0 +$((q0b - q0)) vq1 +$((q1b - q1))"
check "both virtqueues carried requests (jobs on CPU 0 and 1)" \
    test $((q0b - q0)) -gt 0 -a $((q1b - q1)) -gt 0
dmesg_clean "queues"

# --- read-only device -----------------------------------------------------------------
expect_eq "read-only device: ro=1" "$(sysblk $RO ro)" 1
check "writes to the read-only device fail" \
    bash -c "! dd if=/dev/zero of=/dev/$RO bs=4k count=1 oflag=direct status=none 2>/dev/null"
got=$(dd if=/dev/$RO bs=64k iflag=direct status=none | sha256sum | cut -d' ' -f1)
expect_eq "read-only device reads its content" "$got" "$(cat "$OUT/ro.sha256")"
dmesg_clean "read-only"

# --- discard and write zeroes ----------------------------------------------------------
check "discard advertised (discard_max_bytes > 0)" test "$(sysblk $DATA queue/discard_max_bytes)" -gt 0
check "write zeroes advertised" test "$(sysblk $DATA queue/write_zeroes_max_bytes)" -gt 0
zero_sha=$(head -c $((1 << 20)) /dev/zero | sha256sum | cut -d' ' -f1)
region_sha() { dd if=/dev/$DATA bs=1M skip=$1 count=1 iflag=direct status=none | sha256sum | cut -d' ' -f1; }
if blkdiscard -o $((60 << 20)) -l $((1 << 20)) /dev/$DATA; then
    ok "blkdiscard 1 MiB"
    expect_eq "discarded range reads zeroes (raw image, discard=unmap)" "$(region_sha 60)" "$zero_sha"
else
    not_ok "blkdiscard 1 MiB"
fi
dd if=/dev/urandom of=/dev/$DATA bs=1M seek=61 count=1 oflag=direct status=none
if blkdiscard -z -o $((61 << 20)) -l $((1 << 20)) /dev/$DATA; then
    ok "blkdiscard -z (write zeroes) 1 MiB"
    expect_eq "zeroed range reads zeroes" "$(region_sha 61)" "$zero_sha"
else
    not_ok "blkdiscard -z (write zeroes) 1 MiB"
fi
dmesg_clean "discard"

# --- error injection: EIO, then the disk keeps working ----------------------------------
err=$(dd if=/dev/$ERR of=/dev/null bs=512 skip=4096 count=1 iflag=direct 2>&1)
rc=$?
check "read of the injected sector fails" test $rc -ne 0
check "... with EIO (Input/output error)" grep -q "Input/output error" <<<"$err"
check "other sectors still read" dd if=/dev/$ERR of=/dev/null bs=4k count=256 iflag=direct status=none
check "writes still work after the error" \
    dd if=/dev/zero of=/dev/$ERR bs=4k seek=8 count=4 oflag=direct status=none
# The expected I/O error lines are not kernel bugs; reset the mark.
dmesg_clean "error injection"

# --- write cache --------------------------------------------------------------------------
expect_eq "queue/write_cache starts as write back" "$(sysblk $DATA queue/write_cache)" "write back"
expect_eq "cache_type shows write back" "$(sysblk $DATA cache_type)" "write back"
echo "write through" > /sys/block/$DATA/cache_type
expect_eq "cache_type write through reaches the device" "$(sysblk $DATA cache_type)" "write through"
expect_eq "... and queue/write_cache" "$(sysblk $DATA queue/write_cache)" "write through"
echo "write back" > /sys/block/$DATA/cache_type
expect_eq "cache_type back to write back" "$(sysblk $DATA queue/write_cache)" "write back"
echo "write through" > /sys/block/$DATA/queue/write_cache
expect_eq "queue/write_cache is writable" "$(sysblk $DATA queue/write_cache)" "write through"
echo "write back" > /sys/block/$DATA/queue/write_cache
dmesg_clean "write cache"

# --- ext4 --------------------------------------------------------------------------------
if mkfs.ext4 -q -F /dev/$FS && mkdir -p /tmp/mnt && mount /dev/$FS /tmp/mnt; then
    ok "mkfs.ext4 and mount"
    for i in $(seq 1 20); do head -c $((i * 37000)) /dev/urandom > /tmp/mnt/f$i; done
    cp -r /tmp/mnt /tmp/copy 2>/dev/null
    (cd /tmp/mnt && sha256sum f* > /tmp/sums)
    umount /tmp/mnt && mount /dev/$FS /tmp/mnt
    check "20 files read back after remount" bash -c "cd /tmp/mnt && sha256sum -c --quiet /tmp/sums"
    umount /tmp/mnt
    check "e2fsck -fn clean in the guest" e2fsck -fn /dev/$FS
    touch "$OUT/fs.done"
else
    not_ok "mkfs.ext4 and mount"
fi
dmesg_clean "ext4"

# --- resize (config change interrupt) -------------------------------------------------------
rm -f "$OUT/resize.done"; touch "$OUT/resize.req"
for i in $(seq 1 150); do
    [[ $(sysblk $DATA size) == $((96 << 11)) ]] && break; sleep 0.2
done
expect_eq "capacity follows block_resize to 96 MiB" "$(sysblk $DATA size)" $((96 << 11))
check "resize logged as new size" bash -c "dmesg | grep -q '\[$DATA\] new size'"
dmesg_clean "resize"

# --- unbind / bind with I/O in flight -----------------------------------------------------------
VDEV=$(basename "$(readlink -f /sys/block/$SMALL/device)")
diag "small disk is $VDEV"
fio --name=u --allow_file_create=0 --filename=/dev/$SMALL --direct=1 --ioengine=libaio --iodepth=32 --rw=randread \
    --bs=4k --size=32M --time_based --runtime=30 >/dev/null 2>&1 &
fpid=$!
sleep 3
t0=$SECONDS
timeout 120 bash -c "echo $VDEV > /sys/bus/virtio/drivers/rvirtio_blk/unbind"
check "unbind with I/O in flight returns (within 120 s)" test $? == 0
timeout 60 tail --pid=$fpid -f /dev/null
check "fio ends (its requests ended) after unbind, within 60 s" bash -c "! kill -0 $fpid 2>/dev/null"
check "unbind removed the disk" test ! -e /sys/block/$SMALL
echo "$VDEV" > /sys/bus/virtio/drivers/rvirtio_blk/bind
sleep 1
SMALL2=$(disk_by_serial rvt-small)
check "bind brings the disk back ($SMALL2)" test -n "$SMALL2"
check "... and it reads" dd if=/dev/$SMALL2 of=/dev/null bs=64k count=16 iflag=direct status=none
dmesg_clean "unbind/bind"

# --- rmmod with I/O in flight, then idle -----------------------------------------------------------
fio --name=m --allow_file_create=0 --filename=/dev/$DATA --direct=1 --ioengine=libaio --iodepth=32 --rw=randread \
    --bs=4k --size=32M --time_based --runtime=5 >/dev/null 2>&1 &
fpid=$!
sleep 2
timeout 30 rmmod rvirtio_blk 2>/dev/null
rc=$?
check "rmmod with I/O in flight returns (busy or done, no hang)" test $rc -ne 124
timeout 60 tail --pid=$fpid -f /dev/null
check "fio ends after the rmmod attempt, within 60 s" bash -c "! kill -0 $fpid 2>/dev/null"
loaded && timeout 60 rmmod rvirtio_blk
check "rmmod once idle" bash -c '! grep -q "^rvirtio_blk " /proc/modules'
check "no rvd* disk left" bash -c '! ls -d /sys/block/rvd* 2>/dev/null'
dmesg_clean "rmmod"

# --- sg_prealloc=1: the pre-2021 design ------------------------------------------------------------
if insmod "$KO" sg_prealloc=1; then
    ok "insmod sg_prealloc=1"
    sleep 1
    DATA=$(disk_by_serial rvt-data); SMALL=$(disk_by_serial rvt-small)
    expect_eq "prealloc: inline SG entries = seg_max" "$(ctr $DATA inline_sg)" 254
    diag "prealloc: pdu_bytes=$(ctr $DATA pdu_bytes) tagset_sg_bytes=$(ctr $DATA tagset_sg_bytes)"
    echo 2 > /sys/block/$DATA/queue/nomerges; echo 2 > /sys/block/$SMALL/queue/nomerges
    seg_case $DATA "prealloc, many segments" 256k none
    seg_case $SMALL "prealloc, seg_max=6" 64k none
    timeout 60 rmmod rvirtio_blk
    check "rmmod (prealloc)" bash -c '! grep -q "^rvirtio_blk " /proc/modules'
else
    not_ok "insmod sg_prealloc=1"
fi
dmesg_clean "sg_prealloc"

# --- num_request_queues=1 caps the queues; queue_depth=32 overfills an 8-entry ring -----------------------------
# The small device has no indirect descriptors: a request takes 3..8 of its
# 8 descriptors, so 32 tags keep hitting a full ring (ENOSPC: the hardware
# queue stops and restarts on completion).
if insmod "$KO" num_request_queues=1 queue_depth=32; then
    ok "insmod num_request_queues=1 queue_depth=32"
    sleep 1
    DATA=$(disk_by_serial rvt-data); SMALL=$(disk_by_serial rvt-small)
    expect_eq "num_request_queues=1 caps hardware queues" "$(ls /sys/block/$DATA/mq | wc -l)" 1
    expect_eq "queue_depth=32 sets the tags" "$(ctr $SMALL queue_depth)" 32
    # C's names and format, read-only (C's num_request_queues and
    # poll_queues are 0644; ours cannot be written yet: docs/rvirtio_blk.md)
    expect_eq "/sys/module/rvirtio_blk/parameters show the values given" \
        "$(cd /sys/module/rvirtio_blk/parameters && grep -H . num_request_queues queue_depth poll_queues | tr '\n' ' ')" \
        "num_request_queues:1 queue_depth:32 poll_queues:0 "
    check "fio verify at iodepth 32 through a full ring (stop/restart)" \
        timeout 300 bash -c "$(declare -f fio_verify); fio_verify $SMALL 16k 4M 48M --iodepth=32"
    check "the ring was full at times (ring_full $(ctr $SMALL ring_full) > 0)" test "$(ctr $SMALL ring_full)" -gt 0
    # A plugged batch goes through queue_rqs; the data must survive it too.
    check "fio verify, io_uring batches of 16 (queue_rqs)" timeout 300 bash -c \
        "$(declare -f fio_verify); fio_verify $DATA 4k 4M 48M --ioengine=io_uring --iodepth=32 --iodepth_batch_submit=16"
    timeout 60 rmmod rvirtio_blk
else
    not_ok "insmod num_request_queues=1 queue_depth=32"
fi
dmesg_clean "num_request_queues, full ring"

# --- poll queues: poll_queues=1 turns the data disk's second virtqueue into a ---------
# --- poll queue (no interrupts); io_uring's IOPOLL (fio --hipri) completes there -------
if insmod "$KO" poll_queues=1; then
    ok "insmod poll_queues=1"
    udevadm settle 2>/dev/null; sleep 1
    DATA=$(disk_by_serial rvt-data); SMALL=$(disk_by_serial rvt-small)
    expect_eq "two hardware queues on num-queues=2" "$(ls /sys/block/$DATA/mq | wc -l)" 2
    expect_eq "hardware queue 0 has type default" "$(cat /sys/kernel/debug/block/$DATA/hctx0/type 2>&1)" default
    expect_eq "hardware queue 1 has type poll" "$(cat /sys/kernel/debug/block/$DATA/hctx1/type 2>&1)" poll
    expect_eq "polling is on (io_poll 1)" "$(sysblk $DATA queue/io_poll)" 1
    expect_eq "no polled completions before polled I/O" "$(ctr $DATA polled)" 0
    check "fio verify, io_uring --hipri (polled) at iodepth 8" timeout 300 bash -c \
        "$(declare -f fio_verify); fio_verify $DATA 4k 4M 48M --ioengine=io_uring --hipri=1"
    p1=$(ctr $DATA polled)
    diag "polled completions: $p1; requests per virtqueue: $(ctr $DATA vq0_requests) $(ctr $DATA vq1_requests)"
    # 1024 writes + 1024 verify reads of 4 KiB, all polled.
    check "polled completions happened (polled $p1 >= 2048)" test "$p1" -ge 2048
    check "they went to the poll virtqueue (vq1_requests >= 2048)" test "$(ctr $DATA vq1_requests)" -ge 2048
    dd if=/dev/$DATA of=/dev/null bs=4k count=256 iflag=direct status=none
    expect_eq "I/O without --hipri is not polled" "$(ctr $DATA polled)" "$p1"
    timeout 60 rmmod rvirtio_blk
    check "rmmod (poll queues)" bash -c '! grep -q "^rvirtio_blk " /proc/modules'
else
    not_ok "insmod poll_queues=1"
fi
dmesg_clean "poll queues"

# --- surprise removal: a broken device never answers; remove ends the requests ---------------------------
# `break_device` does what the PCI core does on surprise removal
# (virtio_break_device); the requests in flight then only end because
# remove cancels them (EIO) instead of waiting forever in del_gendisk.
if insmod "$KO"; then
    sleep 1
    SMALL=$(disk_by_serial rvt-small)
    VDEV=$(basename "$(readlink -f /sys/block/$SMALL/device)")
    # The host brings rvt-small down to 1 IOPS: the requests in its ring
    # then stay at the host for about a second each, so the break below
    # finds them there (at 200 IOPS all of them could complete between the
    # check and the break, and the cancellation would have nothing to end).
    rm -f "$OUT/throttle.done"; touch "$OUT/throttle.req"
    # (deadlines in seconds, not loop counts: a fork takes a second on the
    # debug guest)
    for ((t = SECONDS + 60; SECONDS < t; )); do [[ -f $OUT/throttle.done ]] && break; sleep 0.2; done
    check "the host throttled rvt-small to 1 IOPS ($(head -c 100 "$OUT/throttle.done" 2>/dev/null))" \
        grep -q '"return"' "$OUT/throttle.done"
    fio --name=s --allow_file_create=0 --filename=/dev/$SMALL --direct=1 --ioengine=libaio --iodepth=16 --rw=randread \
        --bs=4k --size=32M --time_based --runtime=60 >/dev/null 2>&1 &
    fpid=$!
    inflight() { awk '{print $1 + $2}' /sys/block/$SMALL/inflight; }
    # Break it while the ring is full: the hardware queue is then stopped
    # (queue_rq got ENOSPC) with requests waiting for it, and only a
    # completion the device will never send would restart it; remove must
    # restart it itself or del_gendisk waits forever. (16 I/Os on 4 tags,
    # 2 requests fit the 8-entry ring, the host throttles: stopped at once.)
    # fio takes tens of seconds to start on the debug kernel under TCG:
    # wait up to 120 s for requests in flight, then up to 10 s more for the
    # stopped queue (a diagnostic: the break must work in either state).
    hstate=/sys/kernel/debug/block/$SMALL/hctx0/state
    t0=$SECONDS
    for ((t = SECONDS + 120; SECONDS < t; )); do [[ $(inflight) -gt 0 ]] && break; sleep 0.1; done
    for ((t = SECONDS + 10; SECONDS < t; )); do
        st=$(cat $hstate)
        [[ $(inflight) -gt 0 && $st == *STOPPED* ]] && break; sleep 0.1
    done
    diag "fio had $(inflight) requests in flight after $((SECONDS - t0)) s"
    echo 1 > $DBG/$SMALL/break_device
    # (what the queue was just before the break: it restarts and stops again
    # with every completion, so a later read may find it running)
    diag "hardware queue state just before the break: ${st:-unknown} (STOPPED is the case that hung)"
    sleep 1
    check "I/O is stuck on the broken device ($(inflight) in flight, fio still running)" \
        bash -c "[[ \$(awk '{print \$1 + \$2}' /sys/block/$SMALL/inflight) -gt 0 ]] && kill -0 $fpid"
    timeout 60 bash -c "echo $VDEV > /sys/bus/virtio/drivers/rvirtio_blk/unbind"
    check "unbind of the broken device returns (no hang)" test $? == 0
    timeout 30 tail --pid=$fpid -f /dev/null
    check "fio ends: every request in flight was ended" bash -c "! kill -0 $fpid 2>/dev/null"
    check "remove logged the cancellation" bash -c "dmesg | grep -q 'device broken: ending the requests in flight'"
    check "the broken disk is gone" test ! -e /sys/block/$SMALL
    timeout 30 rmmod rvirtio_blk
    check "rmmod after surprise removal" bash -c '! grep -q "^rvirtio_blk " /proc/modules'
else
    not_ok "insmod (surprise removal)"
fi
dmesg_clean "surprise removal"

# --- the module alias: modprobe loads the driver for a virtio disk ---------------------
# modpost writes the alias from the driver's ID table; udev loads a module by
# the device's modalias with modprobe, which looks it up in a module tree
# (depmod's modules.alias). The guest's root is the host's, read-only and
# without a tree for this kernel (nor overlayfs in the test kernel), so the
# tree is made under /tmp (tmpfs) and named with depmod -b / modprobe -d.
loaded && timeout 60 rmmod rvirtio_blk
expect_eq "modinfo: the module alias of virtio block devices" \
    "$(modinfo -F alias "$KO" 2>&1)" "virtio:d00000002v*"
valias=""
for d in /sys/bus/virtio/devices/*; do
    [[ $(cat $d/device 2>/dev/null) == 0x0002 ]] && { valias=$(cat $d/modalias); break; }
done
diag "a virtio block device's modalias: ${valias:-none}"
MROOT=/tmp/rvt-modroot
M=$MROOT/lib/modules/$(uname -r)
mtree=0
mkdir -p $M/extra && install -m 644 "$KO" $M/extra/rvirtio_blk.ko &&
    touch $M/modules.order $M/modules.builtin $M/modules.builtin.modinfo &&
    depmod -b $MROOT && mtree=1
check "a module tree with rvirtio_blk.ko (depmod)" test $mtree == 1
expect_eq "modprobe resolves the device's modalias to rvirtio_blk" \
    "$(modprobe -d $MROOT --resolve-alias "$valias" 2>/dev/null)" rvirtio_blk
if [[ -n $valias ]] && timeout 120 modprobe -d $MROOT "$valias"; then
    ok "modprobe by the device's modalias"
else
    not_ok "modprobe by the device's modalias"
fi
check "rvirtio_blk is loaded" loaded
udevadm settle 2>/dev/null; sleep 1
check "the data disk is back after modprobe" test -n "$(disk_by_serial rvt-data)"
loaded && timeout 60 rmmod rvirtio_blk
check "rmmod after modprobe" bash -c '! grep -q "^rvirtio_blk " /proc/modules'
dmesg_clean "modprobe"
finish
