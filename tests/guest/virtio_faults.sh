#!/bin/bash
# rvirtio_blk under device faults; the disks are in tests/host/virtio_faults.sh
# (err: blkdebug EIO, tiny / tinyni: queue-size=4 with and without indirect
# descriptors, seg: default queue, hot: removed with device_del).
#  1. EIO: an O_DIRECT read of the bad read sector (4096) and a write of the
#     bad write sector (6144) fail with EIO; neighbouring sectors read and
#     write; the failed write did not land; fio crc32c write+verify on a range
#     without the bad sectors passes; retries still fail (once=off); QEMU's
#     failed read/write counters (query-blockstats) equal the failures the
#     guest saw; the kernel logs the I/O errors, and nothing else.
#  2. Tiny ring: max_segments 2, tags = ring (4) with indirect descriptors,
#     2 without; fio randrw iodepth 128 x 2 jobs, 4k..64k, verify=crc32c on
#     both disks passes; the ring-full stop/restart path runs (ring_full > 0)
#     without indirect descriptors, and with queue_depth=32 on both.
#  3. seg_max=1, 2, 3 and sg_prealloc=1 seg_max=3 (module reloads):
#     max_segments = N (tiny disk: min(N, 2)), fio crc32c at 64 KiB and
#     256 KiB and a buffered write-back pass, the chained-table counter stays
#     0 for N <= 2 and for prealloc and moves for N = 3, requests move, no SG
#     pool bytes held when idle.
#  4. PCI function resets under I/O (rst, alone on its bus: a bus reset),
#     on rvirtio_blk, then on C virtio_blk bound to the same device: fio
#     crc32c randwrite with a verify backlog (20 s, 60 on the debug kernel)
#     runs through 20 resets
#     (at least 10 while it runs; reset_prepare
#     quiesces and deletes the virtqueues, reset_done creates them again)
#     and passes, nothing stays in flight, the disk reads after; what the
#     guest read back is checked on the host image.
#  5. device_del over QMP while fio runs on the hot disk: fio ends with errors
#     within 60 s, the disk and its PCI device disappear, the other disks
#     work, clean log, rmmod succeeds, kmemleak (debug kernel).
# Regions checked byte for byte by the host after power-off go to
# $OUT/regions.txt.
# VF_PARTS picks parts (default: eio tiny seg reset hot, in that order).
. "$REPO/tests/lib.sh"
VF_PARTS=${VF_PARTS:-eio tiny seg reset hot}
KO=$MODDIR/rvirtio_blk/rvirtio_blk.ko
DBG=/sys/kernel/debug/rvirtio_blk
HOTPLUG=$(cat "$OUT/hotplug.mode" 2>/dev/null)
R=4096   # blkdebug: reads covering this sector fail
W=6144   # blkdebug: writes covering this sector fail
: > "$OUT/regions.txt"

loaded() { grep -q '^rvirtio_blk ' /proc/modules; }
# alive PID: running (not a zombie)
alive() { [[ -e /proc/$1 ]] && ! grep -qE '^[0-9]+ \(.*\) Z' /proc/$1/stat 2>/dev/null; }
ctr() { cat "$DBG/$1/$2"; }
ndisks() { ls -d /sys/block/rvd* 2>/dev/null | wc -l; }
# load [PARAM=VALUE...]: insmod and find the disks by serial.
load() {
    loaded && { timeout 60 rmmod rvirtio_blk || return 1; }
    insmod "$KO" "$@" || return 1
    ERR=$(disk_by_serial rvf-err); TINY=$(disk_by_serial rvf-tiny)
    TINYNI=$(disk_by_serial rvf-tinyni); SEG=$(disk_by_serial rvf-seg)
    HOT=$(disk_by_serial rvf-hot); RST=$(disk_by_serial rvf-rst)
    return 0
}
sha() { sha256sum | cut -d' ' -f1; }
# region DEV IMAGE OFF_MIB LEN_MIB WHAT: the host checks this sha256 in IMAGE.
region() {
    echo "$2 $3 $4 $(dd if=/dev/$1 bs=1M skip=$3 count=$4 iflag=direct status=none | sha) $5" >> "$OUT/regions.txt"
}
pat() { printf '%016x rvirtio pattern ' "$1"; }
sect_head() { dd if=/dev/$ERR bs=512 skip="$1" count=1 iflag=direct status=none | head -c 33; }
# qmp_req NAME RESULT SECONDS: ask the host's QMP helper, wait for its answer.
qmp_req() {
    rm -f "$OUT/$2" "$OUT/$1.error"; touch "$OUT/$1.req"
    qmp_wait "$@"
}
qmp_wait() {
    local i
    for ((i = 0; i < $3 * 5; i++)); do
        [[ -f $OUT/$2 ]] && return 0
        [[ -f $OUT/$1.error ]] && { diag "qmp helper: $(cat "$OUT/$1.error")"; return 1; }
        sleep 0.2
    done
    return 1
}
# fio_verify DEV BS SIZE OFFSET [EXTRA...]: random writes + crc32c verify.
fio_verify() {
    local dev=$1 bs=$2 size=$3 off=$4; shift 4
    fio --name=v --filename=/dev/$dev --allow_file_create=0 --direct=1 --ioengine=libaio --iodepth=16 \
        --rw=randwrite --bs="$bs" --size="$size" --offset="$off" --verify=crc32c \
        --do_verify=1 --verify_fatal=1 --randrepeat=0 "$@" >/tmp/fio.out 2>&1
    local rc=$?
    [[ $rc == 0 ]] || sed 's/^/# fio: /' /tmp/fio.out | tail -n 15
    return $rc
}
# jsum FILE EXPR: sum of a field over the jobs of a fio JSON (text before
# the JSON, such as fio's warnings, is skipped); EXPR like read.total_ios.
# With JOB set, only the jobs of that name.
jsum() {
    python3 - "$1" "$2" "${JOB:-}" <<'PY'
import json, sys
t = open(sys.argv[1]).read(); j = json.loads(t[t.index("{"):])
tot = 0
for job in j["jobs"]:
    if sys.argv[3] and job["jobname"].split(".")[0] != sys.argv[3]: continue
    v = job
    for k in sys.argv[2].split("."): v = v[k]
    tot += v
print(tot)
PY
}

kmemleak_baseline
# --- probe ------------------------------------------------------------------------
if ! load; then
    not_ok "insmod rvirtio_blk"
    finish; exit 1
fi
ok "insmod rvirtio_blk"
diag "disks: err=$ERR tiny=$TINY tinyni=$TINYNI seg=$SEG rst=$RST hot=$HOT; hot-unplug: $HOTPLUG"
expect_eq "six rvd* disks, found by serial" \
    "$(ndisks) ${ERR:+e}${TINY:+t}${TINYNI:+n}${SEG:+s}${RST:+r}${HOT:+h}" "6 etnsrh"
dmesg_clean "probe"

# --- 1. EIO injection ----------------------------------------------------------------
part_eio() {
    for s in $((R - 1)) $((R + 1)) 0 $((W - 1)) $((W + 1)); do
        expect_eq "sector $s reads the host pattern" "$(sect_head $s)" "$(pat $s)"
    done
    nf_r=0 nf_w=0
    # try_read SECTOR COUNT / try_write SECTOR COUNT: 0 if the I/O succeeded; the
    # dd message in $io_err.
    try_read() { io_err=$(dd if=/dev/$ERR of=/dev/null bs=512 skip=$1 count=$2 iflag=direct 2>&1); }
    try_write() {
        io_err=$(head -c $(($2 * 512)) /dev/urandom | dd of=/dev/$ERR bs=512 seek=$1 count=$2 oflag=direct iflag=fullblock 2>&1)
    }
    if try_read $R 1; then not_ok "O_DIRECT read of bad sector $R fails"; else
        nf_r=$((nf_r + 1))
        ok "O_DIRECT read of bad sector $R fails"
        check "... with EIO ($(grep -o 'Input/output error' <<<"$io_err" | head -1))" grep -q "Input/output error" <<<"$io_err"
    fi
    if try_read $((R - 3)) 8; then not_ok "a 4 KiB read covering sector $R fails"; else
        nf_r=$((nf_r + 1)); ok "a 4 KiB read covering sector $R fails"
    fi
    if try_write $W 1; then not_ok "O_DIRECT write of bad sector $W fails"; else
        nf_w=$((nf_w + 1))
        ok "O_DIRECT write of bad sector $W fails"
        check "... with EIO" grep -q "Input/output error" <<<"$io_err"
    fi
    expect_eq "the bad write sector still reads the host pattern (the write did not land)" "$(sect_head $W)" "$(pat $W)"
    # The read rule is for reads only: a write of sector R lands (the host
    # finds it in the image).
    head -c 512 /dev/urandom > "$OUT/badread.bin"
    check "the bad read sector takes a write (the read rule is for reads only)" \
        dd if="$OUT/badread.bin" of=/dev/$ERR bs=512 seek=$R oflag=direct status=none
    head -c 512 /dev/urandom > /tmp/n1; head -c 512 /dev/urandom > /tmp/n2
    cat /tmp/n1 /tmp/n2 > "$OUT/neighbours.bin"
    check "write of sector $((W - 1)) (next to the bad one) succeeds" \
        dd if=/tmp/n1 of=/dev/$ERR bs=512 seek=$((W - 1)) oflag=direct status=none
    check "write of sector $((W + 1)) succeeds" \
        dd if=/tmp/n2 of=/dev/$ERR bs=512 seek=$((W + 1)) oflag=direct status=none
    expect_eq "both neighbours read back" \
        "$(dd if=/dev/$ERR bs=512 skip=$((W - 1)) count=1 iflag=direct status=none | sha)$(dd if=/dev/$ERR bs=512 skip=$((W + 1)) count=1 iflag=direct status=none | sha)" \
        "$(sha < /tmp/n1)$(sha < /tmp/n2)"
    # 4..8 MiB holds neither bad sector (2 MiB and 3 MiB).
    if fio_verify $ERR 16k 4M 4M --bsrange=4k-64k; then
        ok "after the errors: fio crc32c write+verify on 4..8 MiB passes (the disk keeps working)"
        region $ERR err.img 4 4 "fio verify after EIO"
    else
        not_ok "after the errors: fio crc32c write+verify on 4..8 MiB"
    fi
    fails=0
    for i in 1 2 3; do
        try_read $R 1 && fails=1 || nf_r=$((nf_r + 1))
        try_write $W 1 && fails=1 || nf_w=$((nf_w + 1))
    done
    check "3 retries of the bad read and the bad write fail again (once=off)" test $fails == 0
    if qmp_req stats stats.json 30; then
        got=$(python3 -c "import json; s = json.load(open('$OUT/stats.json'))['err']; print(s['failed_rd_operations'], s['failed_wr_operations'])")
        diag "faults injected: QEMU failed reads/writes $got; the guest saw $nf_r/$nf_w"
        expect_eq "QEMU's failed reads and writes (query-blockstats) = the failures the guest saw" "$got" "$nf_r $nf_w"
    else
        not_ok "query-blockstats through the host's QMP helper"
    fi
    log=$(dmesg | grep "I/O error, dev $ERR,")
    diag "$(wc -l <<<"$log") 'I/O error, dev $ERR' kernel lines (rate limited)"
    check "the kernel logged the read error at sector $R" grep -q "sector $R op 0x0:(READ)" <<<"$log"
    check "the kernel logged the write error at sector $W" grep -q "sector $W op 0x1:(WRITE)" <<<"$log"
    dmesg_clean "EIO injection"
    diag "EIO part done at ${SECONDS} s"
}

# --- 2. tiny ring: queue-size=4 ------------------------------------------------------
part_tiny() {
    expect_eq "queue-size=4: max_segments = seg_max 2" "$(sysblk $TINY queue/max_segments)" 2
    expect_eq "queue-size=4, no indirect: max_segments 2" "$(sysblk $TINYNI queue/max_segments)" 2
    expect_eq "indirect descriptors: tags = ring entries (4)" "$(ctr $TINY queue_depth)" 4
    expect_eq "no indirect descriptors: tags = ring / 2 (2)" "$(ctr $TINYNI queue_depth)" 2
    # tiny_fio SECONDS OFFSET_MIB DEV...: randrw, iodepth 128, 2 jobs per disk,
    # each on its own 16 MiB from OFFSET, 4k..64k, crc32c verify of what was
    # written (backlog, so it runs during a time-based job). ok if fio passes
    # with no error and each disk moved data.
    tiny_fio() {
        local t=$1 off=$2 d args=() rc; shift 2
        for d in "$@"; do
            args+=(--name="$d.0" --filename=/dev/"$d" --offset=${off}M)
            args+=(--name="$d.1" --filename=/dev/"$d" --offset=$((off + 16))M)
        done
        timeout $((t + 120)) fio --allow_file_create=0 --direct=1 --ioengine=libaio --iodepth=128 \
            --rw=randrw --bsrange=4k-64k --size=16M --verify=crc32c \
            --verify_backlog=64 --verify_fatal=1 --time_based --runtime="$t" --randrepeat=0 \
            --output-format=json --output=/tmp/tiny.json "${args[@]}" 2>/tmp/tiny.err
        rc=$?
        [[ $rc == 0 ]] || { diag "fio status $rc"; sed 's/^/# fio: /' /tmp/tiny.err | tail -n 15; }
        for d in "$@"; do
            local r w e
            r=$(JOB=$d jsum /tmp/tiny.json read.io_bytes); w=$(JOB=$d jsum /tmp/tiny.json write.io_bytes)
            e=$(JOB=$d jsum /tmp/tiny.json error)
            diag "$d: fio read $((r >> 20)) MiB (verify included) wrote $((w >> 20)) MiB, errors $e; ring_full $(ctr $d ring_full), requests $(ctr $d requests)"
            [[ $e == 0 && $r -gt 0 && $w -gt 0 ]] || rc=1
        done
        return $rc
    }
    f0=$(ctr $TINY ring_full); g0=$(ctr $TINYNI ring_full)
    c0=$(( $(ctr $TINY chained) + $(ctr $TINYNI chained) ))
    check "fio randrw iodepth 128 x 2 jobs, 4k..64k, crc32c verify on both queue-size=4 disks (20 s): no error" \
        tiny_fio 20 0 $TINY $TINYNI
    f1=$(ctr $TINY ring_full); g1=$(ctr $TINYNI ring_full)
    diag "ring_full: tiny +$((f1 - f0)) (indirect, tags = ring), tinyni +$((g1 - g0))"
    check "no indirect descriptors: the ring filled and the queue restarted (ring_full +$((g1 - g0)) > 0)" \
        test $((g1 - g0)) -gt 0
    expect_eq "up to 64 KiB I/O reached the tiny disks as requests of <= 2 segments (no chained table)" \
        $(( $(ctr $TINY chained) + $(ctr $TINYNI chained) - c0 )) 0
    expect_eq "no SG pool bytes held when idle (tiny)" "$(ctr $TINY sg_bytes)" 0
    region $TINY tiny.img 0 32 "tiny ring fio"
    region $TINYNI tinyni.img 0 32 "tiny ring fio, no indirect"
    dmesg_clean "tiny ring"

    if load queue_depth=32; then
        expect_eq "queue_depth=32: 32 tags on the 4-entry ring" "$(ctr $TINY queue_depth)" 32
        check "fio as above at 32 tags on both tiny disks (10 s): no error" tiny_fio 10 32 $TINY $TINYNI
        diag "ring_full at 32 tags: tiny $(ctr $TINY ring_full), tinyni $(ctr $TINYNI ring_full)"
        # With indirect descriptors a request takes one ring entry, so the
        # ring fills only if QEMU holds 5 requests at once: whether it does
        # is up to the host's timing (on the debug kernel the guest is often
        # too slow). The full-ring path itself is asserted just below and
        # after the first tiny run (no indirect: one request fills the ring).
        if (( $(ctr $TINY ring_full) > 0 )); then
            ok "32 tags on 4 entries with indirect descriptors: the ring filled (ring_full $(ctr $TINY ring_full) > 0)"
        else
            skip "32 tags on 4 entries with indirect descriptors: the ring filled" "QEMU kept up with this guest (ring_full 0)"
        fi
        check "... and without (ring_full $(ctr $TINYNI ring_full) > 0)" test "$(ctr $TINYNI ring_full)" -gt 0
        region $TINY tiny.img 32 32 "tiny ring fio at 32 tags"
        region $TINYNI tinyni.img 32 32 "tiny ring fio at 32 tags, no indirect"
    else
        not_ok "insmod queue_depth=32"
    fi
    dmesg_clean "tiny ring, 32 tags"
    diag "tiny ring part done at ${SECONDS} s"
}

# --- 3. seg_max 1, 2, 3 ------------------------------------------------------------------
part_seg() {
    # seg_round N PREALLOC(0|1) WB_MIB: module loaded with seg_max=N.
    seg_round() {
        local N=$1 pre=$2 wb=$3 desc="seg_max=$1" r0 c0 r1 c1 w
        [[ $pre == 1 ]] && desc="sg_prealloc=1 seg_max=$1"
        expect_eq "$desc: max_segments = $N" "$(sysblk $SEG queue/max_segments)" $N
        expect_eq "$desc: tiny disk max_segments = min($N, its seg_max 2)" "$(sysblk $TINY queue/max_segments)" $((N < 2 ? N : 2))
        expect_eq "$desc: inline SG entries" "$(ctr $SEG inline_sg)" $([[ $pre == 1 ]] && echo $N || echo 2)
        echo 2 > /sys/block/$SEG/queue/nomerges
        r0=$(ctr $SEG requests); c0=$(ctr $SEG chained)
        check "$desc: fio crc32c write+verify, 64 KiB blocks" fio_verify $SEG 64k 2M 0
        check "$desc: fio crc32c write+verify, 256 KiB blocks" fio_verify $SEG 256k 2M 4M
        # Write-back of fresh page-cache pages gives requests of N scattered
        # pages, whatever fio's buffers look like.
        echo 0 > /sys/block/$SEG/queue/nomerges
        w=$(head -c $((4 << 20)) /dev/urandom | tee /tmp/wb.bin | sha)
        dd if=/tmp/wb.bin of=/dev/$SEG bs=1M seek=$wb conv=fsync status=none
        echo 1 > /proc/sys/vm/drop_caches
        expect_eq "$desc: buffered 4 MiB write-back reads back" \
            "$(dd if=/dev/$SEG bs=1M skip=$wb count=4 iflag=direct status=none | sha)" "$w"
        echo "seg.img $wb 4 $w $desc write-back" >> "$OUT/regions.txt"
        r1=$(ctr $SEG requests); c1=$(ctr $SEG chained)
        diag "$desc: requests +$((r1 - r0)), chained +$((c1 - c0)), sg_bytes_peak $(ctr $SEG sg_bytes_peak)"
        # 2 MiB / 64 KiB + 2 MiB / 256 KiB writes, as many verify reads, at least
        # one request each (plus the write-back).
        check "$desc: requests counter moved (+$((r1 - r0)) >= 80)" test $((r1 - r0)) -ge 80
        if [[ $N -le 2 || $pre == 1 ]]; then
            expect_eq "$desc: no chained SG table" $((c1 - c0)) 0
        else
            check "$desc: chained SG tables used for 3-segment requests (+$((c1 - c0)))" test $((c1 - c0)) -gt 0
        fi
        expect_eq "$desc: no SG pool bytes held when idle" "$(ctr $SEG sg_bytes)" 0
    }
    wb=8
    for N in 1 2 3; do
        if load seg_max=$N; then seg_round $N 0 $wb; else not_ok "insmod seg_max=$N"; fi
        wb=$((wb + 4))
        dmesg_clean "seg_max=$N"
    done
    if load sg_prealloc=1 seg_max=3; then seg_round 3 1 $wb; else not_ok "insmod sg_prealloc=1 seg_max=3"; fi
    dmesg_clean "sg_prealloc=1 seg_max=3"
    diag "seg_max part done at ${SECONDS} s"
}

# --- 4. device_del while fio runs -----------------------------------------------------
# reset_run WHO DISK OFF_MIB: fio write + verify on 32 MiB of DISK from
# OFF_MIB while its PCI function is reset up to 20 times, then the checks;
# WHO names the driver in the output.
reset_run() {
    local who=$1 disk=$2 off=$3 pci p fpid n=0 rc i fl rt=20
    # (A reset takes about 2.5 s on the debug kernel, 0.5 s on the default.)
    [[ ${FLAVOUR:-} == debug ]] && rt=60
    pci=$(basename "$(dirname "$(readlink -f /sys/block/$disk/device)")")
    p=/sys/bus/pci/devices/$pci
    diag "$who: $disk on PCI $pci, reset methods: $(cat $p/reset_method 2>/dev/null)"
    check "$who: $pci can be reset (its reset file)" test -w $p/reset
    fio --name=rst --filename=/dev/$disk --allow_file_create=0 --direct=1 --ioengine=libaio --iodepth=16 \
        --rw=randwrite --bsrange=4k-64k --offset=${off}M --size=32M --time_based --runtime=$rt \
        --verify=crc32c --verify_backlog=256 --verify_fatal=1 --randrepeat=0 > /tmp/rst.out 2>&1 &
    fpid=$!
    sleep 1
    for i in $(seq 1 20); do
        alive $fpid || break
        timeout 60 bash -c "echo 1 > $p/reset" && n=$((n + 1))
        sleep 0.5
    done
    for i in $(seq 1 900); do alive $fpid || break; sleep 0.2; done   # 180 s
    if alive $fpid; then
        diag "$who: fio still running 180 s after the resets; its stack:"
        cat /proc/$fpid/stack 2>/dev/null | sed 's/^/#   /'
        kill -9 $fpid
    fi
    wait $fpid; rc=$?
    [[ $rc == 0 ]] || sed 's/^/# fio: /' /tmp/rst.out | tail -n 15
    diag "$who: $n resets while fio ran"
    check "$who: $n (>= 10) PCI resets while fio wrote" test $n -ge 10
    check "$who: fio randwrite + crc32c verify through the resets (status $rc)" test $rc == 0
    fl=$(cat /sys/block/$disk/inflight 2>/dev/null | tr -s ' ')
    expect_eq "$who: nothing in flight after" "$fl" " 0 0"
    check "$who: a reset when idle, then a 1 MiB direct read" \
        bash -c "echo 1 > $p/reset && dd if=/dev/$disk of=/dev/null bs=64k count=16 iflag=direct status=none"
    dmesg_clean "$who: PCI resets"
}

part_reset() {
    if ! load; then
        not_ok "insmod (PCI reset)"
        finish; exit 1
    fi
    reset_run rvirtio_blk "$RST" 0
    region $RST rst.img 0 32 "rvirtio_blk: fio after PCI resets"
    # The same on C virtio_blk, bound to the same device.
    local vdev ko=$KDIR/drivers/block/virtio_blk.ko cd
    vdev=$(basename "$(readlink -f /sys/block/$RST/device)")
    timeout 60 bash -c "echo $vdev > /sys/bus/virtio/drivers/rvirtio_blk/unbind"
    if ! insmod "$ko"; then
        not_ok "insmod C virtio_blk ($ko)"
        return
    fi
    cd=$(ls /sys/bus/virtio/devices/$vdev/block 2>/dev/null | head -n 1)
    if [[ -z $cd ]]; then
        not_ok "C virtio_blk took $vdev"
    else
        reset_run "C virtio_blk" "$cd" 32
        region $cd rst.img 32 32 "C virtio_blk: fio after PCI resets"
    fi
    timeout 60 rmmod virtio_blk
    check "rmmod C virtio_blk" bash -c '! grep -q "^virtio_blk " /proc/modules'
    echo "$vdev" > /sys/bus/virtio/drivers/rvirtio_blk/bind
    RST=$(disk_by_serial rvf-rst)
    check "rvirtio_blk takes the device back ($RST)" test -n "$RST"
    dmesg_clean "PCI reset part"
}

part_hot() {
    if ! load; then
        not_ok "insmod (device_del)"
        finish; exit 1
    fi
    hot_dev=$(readlink -f /sys/block/$HOT/device)   # .../0000:xx:yy.z/virtioN
    hot_pci=$(basename "$(dirname "$hot_dev")")
    diag "hot disk $HOT is $(basename "$hot_dev") on PCI $hot_pci ($HOTPLUG hotplug)"
    r0=$(ctr $HOT requests)
    fio --name=hot --filename=/dev/$HOT --allow_file_create=0 --direct=1 --ioengine=libaio --iodepth=32 \
        --rw=randrw --bs=4k --size=32M --time_based --runtime=60 > /tmp/hot.out 2>&1 &
    fpid=$!
    for i in $(seq 1 100); do (( $(ctr $HOT requests) > r0 + 100 )) && break; sleep 0.2; done
    sleep 2
    r1=$(ctr $HOT requests)
    if alive $fpid && (( r1 > r0 + 100 )); then ok "fio is running on the hot disk (requests +$((r1 - r0)))"
    else not_ok "fio is running on the hot disk (requests +$((r1 - r0)))"; fi
    rm -f "$OUT/unplug.done" "$OUT/unplug.error"
    echo "virtio_faults: asking the host for device_del of $HOT" > /dev/kmsg
    t0=$(date +%s.%N)
    touch "$OUT/unplug.req"
    t_fio= t_disk=
    for i in $(seq 1 900); do   # 90 s
        [[ -z $t_fio ]] && ! alive $fpid && t_fio=$(date +%s.%N)
        [[ -z $t_disk && ! -e /sys/block/$HOT ]] && t_disk=$(date +%s.%N)
        [[ -n $t_fio && -n $t_disk ]] && break
        sleep 0.1
    done
    el() { [[ -n $1 ]] && awk -v a="$t0" -v b="$1" 'BEGIN { printf "%.1f", b - a }' || echo never; }
    diag "removal: fio ended after $(el "$t_fio") s, /sys/block/$HOT gone after $(el "$t_disk") s"
    check "fio ended within 60 s of device_del (no hang): $(el "$t_fio") s" \
        bash -c "[[ -n '$t_fio' ]] && awk -v a=$t0 -v b='$t_fio' 'BEGIN { exit !(b - a <= 60) }'"
    if alive $fpid; then
        diag "fio still running; its stack:"; cat /proc/$fpid/stack 2>/dev/null | sed 's/^/#   /'
        kill -9 $fpid
    fi
    wait $fpid; frc=$?
    ferr=$(grep -m1 -oE 'error on file[^:]*: [^:]*' /tmp/hot.out)
    diag "fio exit status $frc: ${ferr:-$(tail -n 3 /tmp/hot.out | tr '\n' ' ')}"
    check "fio got I/O errors (status $frc, '$ferr')" test $frc -ne 0 -a -n "$ferr"
    # The removal as the kernel saw it (hotplug driver, PCI core, block layer).
    dmesg | sed -n '/virtio_faults: asking the host for device_del/,$p' \
        | grep -E 'virtio_faults|shpchp|acpiphp|pci 0000:0[01]|Slot|slot|I/O error|rvirtio|rvd' | head -n 20 | sed 's/^/# kernel: /' | tee -a "$TAP"
    check "the hot disk is gone from /sys/block" test ! -e /sys/block/$HOT
    check "... and from /dev" test ! -e /dev/$HOT
    check "... and from debugfs" test ! -e $DBG/$HOT
    check "its PCI device is gone ($hot_pci)" test ! -e /sys/bus/pci/devices/$hot_pci
    if qmp_wait unplug unplug.done 150; then
        diag "host: $(cat "$OUT/unplug.done")"
        check "QEMU reported DEVICE_DELETED for hotdev" \
            python3 -c "import json, sys; sys.exit(not json.load(open('$OUT/unplug.done'))['deleted'])"
    else
        not_ok "no answer from the host's device_del helper"
    fi
    expect_eq "five rvd* disks left" "$(ndisks)" 5
    check "the other disks still work: 1 MiB direct read of seg" \
        dd if=/dev/$SEG of=/dev/null bs=64k count=16 iflag=direct status=none
    expect_eq "... and err reads the host pattern" "$(sect_head 100)" "$(pat 100)"
    check "... and tiny reads" dd if=/dev/$TINY of=/dev/null bs=64k count=16 iflag=direct status=none
    # (seg 32..40 MiB: not in regions.txt)
    check "... and seg takes a write + verify" fio_verify $SEG 16k 1M 32M
    dmesg_clean "device_del"
    t=$SECONDS
    timeout 60 rmmod rvirtio_blk
    check "rmmod rvirtio_blk after device_del ($((SECONDS - t)) s)" bash -c '! grep -q "^rvirtio_blk " /proc/modules'
    check "no rvd* disk left" test "$(ndisks)" == 0
    dmesg_clean "rmmod"
    diag "device_del part done at ${SECONDS} s"
}

for p in $VF_PARTS; do
    case $p in
    eio | tiny | seg | reset | hot) part_$p ;;
    *) not_ok "unknown part $p (VF_PARTS)" ;;
    esac
done
if loaded; then
    timeout 60 rmmod rvirtio_blk
    check "rmmod rvirtio_blk" bash -c '! grep -q "^rvirtio_blk " /proc/modules'
    dmesg_clean "rmmod"
fi
kmemleak_check "after the faults, reloads and device_del"
diag "all done at ${SECONDS} s"
finish
