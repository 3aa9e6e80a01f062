#!/bin/bash
# Guest side of scripts/profile-virtio.sh: C virtio_blk and rvirtio_blk
# side by side, each for one fio run, with sync(2) between the phases (the
# insn_profile plugin cuts its table at every sync(2)).
#
#   bench/profile-guest.sh [RUNTIME_MS [BS [ORDER [RW [SHARED]]]]]
#
# RW is fio's rw (randread, or randwrite); SHARED=1 maps every fio run's
# buffers from one tmpfs file written once (fio iomem=mmapshared), so both
# drivers' requests have the same segments (bench/guest.py shared_buffers).
#
# Loads the drivers as bench/guest.py does (rvirtio_blk binds both disks,
# the one with serial bench-c is unbound and handed to virtio_blk),
# scheduler none on both, saves /proc/kallsyms (modules loaded, so their
# symbols too) and the disks' names to $OUT, then:
#   warm-up fio on both disks; sync; fio on the C disk (phase 1); sync;
#   fio on the rvirtio_blk disk (phase 2); sync
# then a steady-state window per driver (phases 4 and 6, see window below),
# and copies fio's JSON (fio-*.json) and the phase map (phases.json) to $OUT
# afterwards, so that no 9p write falls in a measured phase.
set -euo pipefail
runtime=${1:-500}
bs=${2:-4k}
order=${3:-c-first}
rw=${4:-randread}
shared=${5:-0}
case $rw in randread|randwrite) ;; *) echo "rw must be randread or randwrite, not $rw" >&2; exit 1 ;; esac
case $shared in 0|1) ;; *) echo "shared must be 0 or 1, not $shared" >&2; exit 1 ;; esac
say() { echo "BENCH $*"; }
rd() { cat "$1" 2>/dev/null || true; }
wait_serial() { # PREFIX SERIAL: the disk PREFIX* with that serial
    local d
    for _ in $(seq 200); do
        for d in /sys/block/"$1"*; do
            [[ -e $d && $(rd "$d/serial") == "$2" && -e /dev/${d##*/} ]] && { echo "${d##*/}"; return; }
        done
        sleep 0.05
    done
    echo "no $1* disk with serial $2" >&2
    return 1
}

insmod "$MODDIR/rvirtio_blk/rvirtio_blk.ko"
c=$(wait_serial rvd bench-c)
v=$(basename "$(realpath "/sys/block/$c/device")")
echo "$v" > /sys/bus/virtio/drivers/rvirtio_blk/unbind
[[ -d /sys/module/virtio_blk ]] || insmod "$KDIR/drivers/block/virtio_blk.ko"
[[ -e /sys/bus/virtio/drivers/virtio_blk/$v ]] || echo "$v" > /sys/bus/virtio/drivers/virtio_blk/bind
rust=$(wait_serial rvd bench-r)
cdev=$(wait_serial vd bench-c)
for d in "$cdev" "$rust"; do
    echo none > "/sys/block/$d/queue/scheduler"
done
say "C virtio_blk on $cdev, rvirtio_blk on $rust ($(cat /sys/block/$cdev/mq/*/nr_tags 2>/dev/null | head -1) tags; hw queues: C $(ls /sys/block/$cdev/mq | wc -l), Rust $(ls /sys/block/$rust/mq | wc -l))"
echo 0 > /proc/sys/kernel/kptr_restrict
cat /proc/kallsyms > "$OUT/kallsyms"
printf '{"c": "%s", "rust": "%s", "runtime_ms": %s, "bs": "%s", "rw": "%s", "shared": %s}\n' \
    "$cdev" "$rust" "$runtime" "$bs" "$rw" "$shared" > "$OUT/disks.json"

mem=()
if [[ $shared == 1 ]]; then
    # bench/guest.py's file, made as it makes it: iodepth x bs and 2 MiB for
    # fio's alignment, written now.
    mem=(--"$(python3 bench/guest.py shared-buffers 32 "$bs")")
fi
job() { # DEV NAME RUNTIME_MS
    fio --name="$2" --filename="/dev/$1" --rw="$rw" --bs="$bs" --ioengine=libaio --iodepth=32 \
        --numjobs=2 --direct=1 --time_based --runtime="${3}ms" --size=256M \
        --group_reporting --randrepeat=1 --norandommap --disk_util=0 "${mem[@]}" \
        --output-format=json --output="/tmp/fio-$2.json" --eta=never
}
# warm-up, outside every measured phase: fio's pages, slab caches, both disks
job "$cdev" warm 100
job "$rust" warm 100
# phase 1: C virtio_blk, one whole fio run; phase 2: rvirtio_blk, the same
# (PROFILE_ORDER=rust-first: the other way round, as for the windows below)
if [[ ${order} == rust-first ]]; then
    sync; job "$rust" rust "$runtime"
    sync; job "$cdev" c "$runtime"
    whc=2 whr=1
else
    sync; job "$cdev" c "$runtime"
    sync; job "$rust" rust "$runtime"
    whc=1 whr=2
fi
# Steady-state windows: fio runs for runtime + 400 ms; once the disk has
# completed 1000 reads (fio's start-up is over) and 100 ms more, the phase
# is cut from outside fio for `runtime` ms of guest time; the I/Os are the
# disk's completed reads between the two cuts.
# Inside a window nothing forks: bash builtins read the counters and the
# clock, and wait on a FIFO that never has data (read -t) instead of sleep(1).
mkfifo /tmp/nap && exec {nap}<> /tmp/nap
window_s=$(awk -v m="$runtime" 'BEGIN { print m / 1000 }')
# VAR DEV: the disk's completed I/Os of fio's direction (reads or writes)
reads_into() {
    local -a _f
    read -r -a _f < "/sys/block/$2/stat"
    if [[ $rw == randwrite ]]; then printf -v "$1" '%s' "${_f[4]}"; else printf -v "$1" '%s' "${_f[0]}"; fi
}
usecs() { local t=${EPOCHREALTIME/./}; printf -v "$1" '%s' "$t"; }    # VAR: guest time in us
window() { # DEV NAME
    local r0 r1 t0 t1 start n pid
    reads_into start "$1"
    job "$1" "$2" $(( runtime + 400 )) &
    pid=$!
    n=$start
    while (( n < start + 1000 )); do read -t 0.01 -u "$nap" || true; reads_into n "$1"; done
    read -t 0.1 -u "$nap" || true
    usecs t0
    reads_into r0 "$1"
    sync            # window starts (in it, fio and the exit of this sync(1)
    #                 and the start of the next: a few 100k instructions)
    read -t "$window_s" -u "$nap" || true
    reads_into r1 "$1"
    usecs t1
    sync            # window ends
    kill -0 "$pid" 2>/dev/null || { echo "fio on $1 ended inside the window" >&2; return 1; }
    wait "$pid"
    echo $(( r1 - r0 )) > "/tmp/window-$2.ios"
    echo $(( t1 - t0 )) > "/tmp/window-$2.us"
}
sync                # phase 3: not measured
# phase 4: the first window; phase 5: not measured; phase 6: the second.
# PROFILE_ORDER=rust-first measures rvirtio_blk's whole run and window first
# (what an earlier phase leaves behind, e.g. fragmented memory for fio's
# buffers, then weighs on the other driver).
if [[ ${order} == rust-first ]]; then
    window "$rust" rustwin; window "$cdev" cwin; wc=6 wr=4
else
    window "$cdev" cwin; window "$rust" rustwin; wc=4 wr=6
fi
cp /tmp/fio-c.json /tmp/fio-rust.json /tmp/fio-cwin.json /tmp/fio-rustwin.json "$OUT/"
printf '{"whole": {"c": %s, "rust": %s}, "window": {"c": %s, "rust": %s}, "window_ios": {"c": %s, "rust": %s}, "window_us": {"c": %s, "rust": %s}}\n' "$whc" "$whr" "$wc" "$wr" \
    "$(cat /tmp/window-cwin.ios)" "$(cat /tmp/window-rustwin.ios)" \
    "$(cat /tmp/window-cwin.us)" "$(cat /tmp/window-rustwin.us)" > "$OUT/phases.json"
say "fio done: whole runs C $(grep -m1 '"total_ios"' /tmp/fio-c.json | tr -dc 0-9), Rust $(grep -m1 '"total_ios"' /tmp/fio-rust.json | tr -dc 0-9) I/Os; windows C $(cat /tmp/window-cwin.ios), Rust $(cat /tmp/window-rustwin.ios) I/Os"
rmmod rvirtio_blk
rmmod virtio_blk
