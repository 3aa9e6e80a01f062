#!/bin/bash
# Data integrity under stress (booted by tests/host/stress.sh): repeated fio
# crc32c write+verify passes, mixed sizes at random offsets, for about
# STRESS_SECONDS (60) per configuration:
#   mq     rnull_split blk-mq, memory-backed, 2 queues x 64 tags, hrtimer
#          completions (irqmode=2, 10 us), iodepth 2 x 32
#   fast   rnull_split bio mode, split_clone=fast, max_sectors_kb=16
#   deep   rnull_split bio mode, split_clone=deep, max_sectors_kb=124
#   virtio the whole rvirtio_blk disk (serial rvt-stress, 2 queues), 128 MiB
# On the 1 GiB rnull disks a pass covers a 64 MiB window, the next pass the
# next window, cycling over the first 256 MiB; on virtio every pass covers
# the whole disk. On the debug kernel (~20x slower under TCG) the windows
# are 16 MiB and the virtio disk 32 MiB (STRESS_WINDOW_MB, STRESS_DISK_MB). Another pass starts only if it should end within
# STRESS_SECONDS (judged by the previous pass); there is always one.
#
# A pass is a fio job file (kept in /tmp; the last virtio one and its writes
# per job go to $OUT for the host): 2 jobs on disjoint halves of the window
# (offset_increment), libaio, O_DIRECT, randwrite with bssplit 512 B..1 MiB
# (4 KiB..1 MiB on a 4 KiB disk), a crc32c header per smallest block (fio's
# default verify_interval), verify_fatal, its own randseed; the jobs are
# pinned to CPU 0 and 1 from the command line (both hardware queues; not
# part of the data layout).
# Why the job looks like this:
#   - Size-bounded, not time_based, with fio's random map (norandommap not
#     set): every block of the window is written exactly once per pass (an
#     I/O that would overlap written blocks is cut short), so written ==
#     verified == window is checked, and the offsets, lengths and data depend
#     only on the job and the seed (the map is updated at issue time; no
#     completion order enters it). `fio --verify_only` with the same job file
#     therefore regenerates and checks the same blocks: in the guest after
#     the last pass, and on the host against the raw image.
#   - fio's crc32c blocks are self-describing (magic, offset, length, crc);
#     fio 3.33 does not compare the seed stored in them and checks the I/O
#     sequence number only with a fixed block size, so a block left by an
#     EARLIER pass passes verification (seen: --verify_only with another
#     seed accepts the data), and a lost write would go unnoticed. So each
#     pass starts from a zeroed window (BLKZEROOUT, then read back through
#     fio's zero-pattern verify): a lost write then leaves zeroes, which fio
#     rejects (bad magic).
# Per configuration: every pass zeroed, wrote and verified its whole window
# with zero errors; fio --verify_only of the last pass; the driver's counters
# (rnull: exactly the bytes moved, pieces no larger than max_sectors_kb; bio
# mode: splits of the configured clone kind, one piece per bio; virtio: both
# virtqueues used, no SG pool memory left); clean kernel log; rmmod;
# kmemleak (debug kernel).
. "$REPO/tests/lib.sh"
NULL_KO=$MODDIR/rnull_split/rnull_split.ko
VIRT_KO=$MODDIR/rvirtio_blk/rvirtio_blk.ko
NDBG=/sys/kernel/debug/rnull_split
VDBG=/sys/kernel/debug/rvirtio_blk
SECS=${STRESS_SECONDS:-60}
SEED=${STRESS_SEED:-$(( (RANDOM << 15) | RANDOM ))}
BSS512="512/5:4k/35:16k/20:64k/20:256k/15:1m/5"
BSS4K="4k/40:16k/20:64k/20:256k/15:1m/5"
PIN=(--cpus_allowed=0,1 --cpus_allowed_policy=split)
# rnull window per pass; the virtio disk's size (the host makes the image).
# The debug kernel moves data ~20x slower under TCG: smaller windows there.
if [[ ${FLAVOUR:-default} == debug ]]; then WIN_MB=${STRESS_WINDOW_MB:-16}; else WIN_MB=${STRESS_WINDOW_MB:-64}; fi
DISK_MB=${STRESS_DISK_MB:-128}
cd /tmp || exit 1
diag "STRESS_SECONDS=$SECS STRESS_SEED=$SEED (pass seeds are derived from it)"
kmemleak_baseline

gib() { awk -v b="$1" 'BEGIN { printf "%.2f", b / 1073741824 }'; }

# write_job FILE SEED OFFSET WINDOW IODEPTH BSSPLIT: one pass over
# [OFFSET, OFFSET + WINDOW), every block once.
write_job() {
    local half=$(($4 / 2))
    cat > "$1" <<EOF
; tests/guest/stress.sh: one pass, 2 jobs x $half bytes from $3, every block once
[global]
filename=\${STRESS_TARGET}
allow_file_create=0
direct=1
ioengine=libaio
iodepth=$5
rw=randwrite
bssplit=$6
numjobs=2
offset=$3
size=$half
offset_increment=$half
verify=crc32c
do_verify=1
verify_fatal=1
verify_state_save=0
randrepeat=1
randseed=$2
[stress]
EOF
}

# run_fio DEV FIO_ARGS...: fio with JSON output (STRESS_TARGET=/dev/DEV for
# job files); prints "rc jobs errors written read ios" (sums over the jobs);
# fio's messages are in /tmp/fio.err.
run_fio() {
    local dev=$1; shift
    STRESS_TARGET=/dev/$dev fio --output-format=json --output=/tmp/pass.json "$@" \
        > /tmp/fio.out 2> /tmp/fio.err
    local rc=$?
    python3 - "$rc" <<'PY'
import json, sys
rc = sys.argv[1]
try:
    s = open("/tmp/pass.json").read()
    jobs = json.loads(s[s.index("{"):])["jobs"]   # fio may print a warning first
except Exception:
    print(rc, 0, -1, 0, 0, 0); sys.exit()
print(rc, len(jobs), sum(j["error"] != 0 for j in jobs),
      sum(j["write"]["io_bytes"] for j in jobs), sum(j["read"]["io_bytes"] for j in jobs),
      sum(j["write"]["total_ios"] + j["read"]["total_ios"] for j in jobs))
PY
}
fio_msgs() { grep -v 'Operation forced' /tmp/fio.err | sed 's/^/# fio: /' | head -n 20; }

# zero_window DEV OFFSET WINDOW: BLKZEROOUT (-f: no signature probe, which
# would read the disk), then fio reads the window back, verifying zeroes.
zero_window() {
    local rc njobs errs w r n
    blkdiscard -f -z -o "$2" -l "$3" "/dev/$1" 2>/tmp/fio.err || { fio_msgs; return 1; }
    read -r rc njobs errs w r n <<<"$(run_fio "$1" --name=zero --filename=/dev/$1 --offset=$2 --size=$3 \
        --rw=read --bs=1M --direct=1 --ioengine=libaio --iodepth=4 \
        --verify=pattern --verify_pattern=0 --do_verify=1 --verify_fatal=1)"
    [[ $rc == 0 && $errs == 0 && $r == "$3" ]] || { fio_msgs; return 1; }
}

# stress DESC DEV WINDOW NWINDOWS IODEPTH: passes for about $SECS seconds.
# Sets PASSES, WRITTEN, VERIFIED (pass verifies and the final verify_only),
# ZEROED (bytes zeroed, then read back), IOS, LAST_JOB (empty: no pass ran).
stress() {
    local desc=$1 dev=$2 win=$3 nwin=$4 iodepth=$5
    local bss=$BSS512 t0=$SECONDS fails=0 dur=0 rc njobs errs w v n
    [[ $(sysblk "$dev" queue/logical_block_size) == 4096 ]] && bss=$BSS4K
    PASSES=0 WRITTEN=0 VERIFIED=0 IOS=0 ZEROED=0 LAST_JOB=
    while ((PASSES == 0 || SECONDS - t0 + dur <= SECS)); do
        local ts=$SECONDS off=$(( (PASSES % nwin) * win )) seed=$((SEED + CFG * 100000 + PASSES))
        local job=/tmp/$dev-pass$PASSES.fio
        write_job "$job" "$seed" "$off" "$win" "$iodepth" "$bss"
        if ! zero_window "$dev" "$off" "$win"; then
            diag "$desc pass $PASSES: [$off, +$win) did not read back as zeroes after BLKZEROOUT"
            fails=$((fails + 1)); break
        fi
        ZEROED=$((ZEROED + win))
        read -r rc njobs errs w v n <<<"$(run_fio "$dev" "${PIN[@]}" "$job")"
        cp /tmp/pass.json "${job%.fio}.json"
        PASSES=$((PASSES + 1)) WRITTEN=$((WRITTEN + w)) VERIFIED=$((VERIFIED + v)) IOS=$((IOS + n))
        LAST_JOB=$job
        if [[ $rc != 0 || $njobs != 2 || $errs != 0 || $w != "$win" || $v != "$win" ]]; then
            diag "$desc pass $PASSES (seed $seed, window $off +$win): fio status $rc, $njobs jobs, $errs with errors, wrote $w, verified $v"
            fio_msgs
            fails=$((fails + 1)); break   # verify_fatal: the data is suspect, stop here
        fi
        dur=$((SECONDS - ts))
    done
    local el=$((SECONDS - t0))
    check "$desc: $PASSES pass(es) in $el s, each zeroed, wrote and crc32c-verified its whole $((win >> 20)) MiB window with 0 errors" \
        test $fails == 0 -a $PASSES -ge 1
    # Once more, from a fresh process, as the host does with the image.
    if [[ -n $LAST_JOB ]]; then
        read -r rc njobs errs w v n <<<"$(run_fio "$dev" "$LAST_JOB" --verify_only)"
        VERIFIED=$((VERIFIED + v))
        [[ $rc == 0 && $errs == 0 ]] || fio_msgs
        check "$desc: fio --verify_only of the last pass read its $((v >> 20)) MiB back intact (status $rc, $errs job errors)" \
            test "$rc" == 0 -a "$errs" == 0 -a "$v" == "$win"
    else
        not_ok "$desc: fio --verify_only of the last pass (no pass ran)"
    fi
    diag "$desc: $PASSES pass(es) in $el s, $IOS fio I/Os, $(gib $WRITTEN) GiB written, $(gib $VERIFIED) GiB verified, $(gib $ZEROED) GiB zeroed and checked"
    TOTAL_W=$((TOTAL_W + WRITTEN)) TOTAL_V=$((TOTAL_V + VERIFIED)) TOTAL_P=$((TOTAL_P + PASSES))
}
TOTAL_W=0 TOTAL_V=0 TOTAL_P=0

nctr() { # nctr DEV: "bios splits fast deep requests bytes"
    local d=$NDBG/$1
    echo "$(cat $d/bios) $(cat $d/splits) $(cat $d/fast_clones) $(cat $d/deep_clones) $(cat $d/requests) $(cat $d/bytes)"
}

# null_config CFG DESC IODEPTH MAX_SECTORS_KB|- INSMOD_ARGS...
null_config() {
    CFG=$1; local desc=$2 iodepth=$3 msk=$4 t0=$SECONDS; shift 4
    if ! insmod "$NULL_KO" gb=1 memory_backed=1 "$@"; then
        not_ok "$desc: insmod rnull_split gb=1 memory_backed=1 $*"; return
    fi
    [[ $msk == - ]] || echo "$msk" > /sys/block/rnullb0/queue/max_sectors_kb
    msk=$(sysblk rnullb0 queue/max_sectors_kb)
    diag "$desc: rnull_split gb=1 memory_backed=1 $*, max_sectors_kb=$msk"
    local -a a b
    a=($(nctr rnullb0))
    stress "$desc" rnullb0 $((WIN_MB << 20)) 4 "$iodepth"
    b=($(nctr rnullb0))
    local bios=$((b[0] - a[0])) splits=$((b[1] - a[1])) fast=$((b[2] - a[2])) deep=$((b[3] - a[3]))
    local reqs=$((b[4] - a[4])) bytes=$((b[5] - a[5]))
    diag "$desc: driver counted bios +$bios, splits +$splits (fast +$fast, deep +$deep), pieces/requests +$reqs, bytes +$bytes"
    # zeroing writes and reads back every zeroed byte
    expect_eq "$desc: the driver moved exactly the bytes fio and the zeroing did ($(gib $bytes) GiB)" \
        "$bytes" $((WRITTEN + VERIFIED + 2 * ZEROED))
    check "$desc: no piece above max_sectors_kb=$msk (requests +$reqs >= bytes / $msk KiB)" \
        test $reqs -ge $(( (bytes + msk * 1024 - 1) / (msk * 1024) )) -a $reqs -gt 0
    case $desc in
    mq)
        expect_eq "$desc: no driver-side bios or splits in blk-mq mode (bios splits fast deep)" \
            "$bios $splits $fast $deep" "0 0 0 0" ;;
    fast | deep)
        local mine=$fast other=$deep; [[ $desc == deep ]] && mine=$deep other=$fast
        check "$desc: the driver split bios (+$splits), all with $desc clones" \
            test $splits -gt 0 -a $mine == $splits -a $other == 0
        expect_eq "$desc: one piece per bio reaching submit_bio (pieces, bios)" "$reqs" "$bios" ;;
    esac
    dmesg_clean "$desc"
    check "$desc: rmmod rnull_split" rmmod rnull_split
    kmemleak_check "$desc"
    diag "$desc: $((SECONDS - t0)) s in all"
}

null_config 1 mq 32 - queue_mode=2 bs=512 submit_queues=2 hw_queue_depth=64 irqmode=2 completion_nsec=10000
null_config 2 fast 16 16 queue_mode=0 split_clone=fast
null_config 3 deep 16 124 queue_mode=0 split_clone=deep

# --- rvirtio_blk ------------------------------------------------------------------
CFG=4 t0=$SECONDS
vdisk() {
    local d
    for d in /sys/block/rvd*; do
        [[ -e $d/serial && $(cat "$d/serial") == rvt-stress ]] && { basename "$d"; return 0; }
    done
    return 1
}
vctr() { cat "$VDBG/$1/$2"; }
if insmod "$VIRT_KO"; then
    sleep 1
    D=$(vdisk)
    region=$((DISK_MB << 20))
    size=$([[ -n $D ]] && blockdev --getsize64 /dev/$D)
    expect_eq "virtio: the disk with serial rvt-stress (${D:-none}) is $DISK_MB MiB" "$size" $region
    if [[ $size == "$region" ]]; then
        r0=$(vctr $D requests) c0=$(vctr $D chained) f0=$(vctr $D ring_full)
        q00=$(vctr $D vq0_requests) q10=$(vctr $D vq1_requests)
        stress virtio "$D" $region 1 16
        reqs=$(($(vctr $D requests) - r0)) q0=$(($(vctr $D vq0_requests) - q00)) q1=$(($(vctr $D vq1_requests) - q10))
        diag "virtio: requests +$reqs, chained SG tables +$(($(vctr $D chained) - c0)), ring_full +$(($(vctr $D ring_full) - f0)), vq0 +$q0, vq1 +$q1, sg_bytes_peak $(vctr $D sg_bytes_peak)"
        check "virtio: requests on both virtqueues (jobs on CPU 0 and 1; +$q0, +$q1)" \
            test $q0 -gt 0 -a $q1 -gt 0
        expect_eq "virtio: no SG pool bytes held once idle" "$(vctr $D sg_bytes)" 0
        # For the host: the last pass's job and what the whole disk reads as.
        if [[ -n $LAST_JOB ]]; then
            cp "$LAST_JOB" "$OUT/virtio-last.fio"
            python3 - "${LAST_JOB%.fio}.json" > "$OUT/virtio-last.ios" <<'PY'
import json, sys
s = open(sys.argv[1]).read()
print(" ".join(str(j["write"]["total_ios"]) for j in json.loads(s[s.index("{"):])["jobs"]))
PY
        fi
        sum=$(dd if=/dev/$D bs=1M iflag=direct status=none | sha256sum | cut -d' ' -f1)
        echo "$sum" > "$OUT/virtio.sha256"
        diag "virtio: sha256 of the whole disk (O_DIRECT) $sum"
        check "virtio: flush (blockdev --flushbufs)" blockdev --flushbufs /dev/$D
    fi
    dmesg_clean virtio
    check "virtio: rmmod rvirtio_blk" rmmod rvirtio_blk
    kmemleak_check virtio
    diag "virtio: $((SECONDS - t0)) s in all"
else
    not_ok "insmod rvirtio_blk"
fi
diag "all devices: $TOTAL_P passes, $TOTAL_W bytes ($(gib $TOTAL_W) GiB) written, $TOTAL_V bytes ($(gib $TOTAL_V) GiB) verified by fio"
finish
