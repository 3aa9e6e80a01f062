#!/usr/bin/env bash
# The virtio section of `make run`: rvirtio_blk vs C virtio_blk in one
# icount guest (see scripts/run.sh).
#
#   scripts/bench-virtio.sh [subset|full]
#
# Two identical virtio-blk-pci disks on QEMU null-co (no backing store:
# what is measured is the guest's driver and QEMU's virtio queue handling),
# 2 virtqueues each, so both drivers run 2 hardware queues; scheduler none
# for both. rvirtio_blk binds both disks; the one with serial bench-c is
# handed to C virtio_blk. fio: libaio, 2 jobs x QD32, randread and randwrite
# (bench/plan.py virtio). First with rvirtio_blk's runtime-chained SG lists
# (2 inline entries, chained beyond), then reloaded with sg_prealloc=1
# (seg_max entries per request, the pre-2021 design); C virtio_blk runs next
# to each. The SG memory counters of both modes come from rvirtio_blk's
# debugfs.
#
# icount does not make virtio deterministic: QEMU handles the virtqueue in
# its own thread, in host time, so when a completion lands (in guest
# instructions) and whether the guest idled meanwhile (a jump of guest time)
# varies from run to run, and with the host's load: SAMPLES (3) reloads
# give min/median/max, and only ratios within one run mean anything.
# VIRTIO_SPIN=1 keeps every vCPU busy (a SCHED_IDLE loop) so that waiting
# for QEMU costs guest time in proportion to host time instead of icount's
# jump to the next timer: another view, no more deterministic.
# VIRTIO_HUGE=1 puts fio's buffers in huge pages (fio iomem=mmaphuge): every
# I/O up to 2 MiB is then one segment, whatever earlier runs left of the
# memory (at 256 KiB that decides up to ~12% between two runs), but no
# request needs a chained SG table, so the 2021 mechanism is not exercised.
# VIRTIO_SHARED=1 (the default) maps every fio run's buffers from one tmpfs
# file whose pages are written once (bench/guest.py shared_buffers): C's and
# Rust's runs of a cell then use the same physical pages, so their requests
# have the same segments, and large ones still chain. With it, C's three
# samples of a 256 KiB or 1 MiB cell agree within 0.1% (without: up to 12%).
# VIRTIO_SHARED=0 gives each fio run fresh anonymous buffers.
#
# Results: results/virtio.{json,md,png}, results/virtio-memory.md
# (results/full/ for full).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
. bench/lib.sh
kind=${1:-subset}
case $kind in subset) res=results ;; full) res=results/full ;; *) die "usage: $0 [subset|full]" ;; esac
RUNTIME_MS=${RUNTIME_MS:-500} SAMPLES=${SAMPLES:-3}
export BENCH_COMMAND=${BENCH_COMMAND:-"RUNTIME_MS=$RUNTIME_MS SAMPLES=$SAMPLES VIRTIO_SPIN=${VIRTIO_SPIN:-0} VIRTIO_IOEVENTFD=${VIRTIO_IOEVENTFD:-1} VIRTIO_HUGE=${VIRTIO_HUGE:-0} VIRTIO_SHARED=${VIRTIO_SHARED:-1} scripts/bench-virtio.sh $kind"}
mkdir -p "$res" out/bench-virtio
SAMPLES=$SAMPLES python3 bench/plan.py virtio "$kind" "$RUNTIME_MS" > out/bench-virtio/plan.json
n=$(python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); print(sum(len(g["cells"]) for g in p["groups"]))' out/bench-virtio/plan.json)
log "virtio, icount ($kind): $n fio runs of ${RUNTIME_MS} ms guest time ($SAMPLES samples per driver and cell)"
# VIRTIO_IOEVENTFD=0: the guest's notify exits to QEMU's vCPU thread, which
# serves the virtqueue there (ioeventfd=off) instead of in the main loop.
ioeventfd=
[[ ${VIRTIO_IOEVENTFD:-1} == 0 ]] && ioeventfd=,ioeventfd=off
BENCH_QEMU=()
for d in r c; do
    BENCH_QEMU+=(-drive "if=none,id=$d,driver=null-co,size=1G,read-zeroes=off")
    BENCH_QEMU+=(-device "virtio-blk-pci,drive=$d,serial=bench-$d,num-queues=2$ioeventfd")
done
bench_meta icount "$RUNTIME_MS" > out/bench-virtio/meta.json
rm -f out/bench-virtio/virtio.jsonl
bench_guest icount out/bench-virtio 3600 -- python3 bench/guest.py "$REPO/out/bench-virtio/plan.json" \
    "$REPO/out/bench-virtio/virtio.jsonl" || die "virtio benchmark guest failed (out/bench-virtio/console.log)"
echo
scripts/report.py virtio out/bench-virtio/virtio.jsonl "$res" --meta out/bench-virtio/meta.json
