#!/usr/bin/env bash
# rvirtio_blk against C virtio_blk in guest instructions per I/O over the
# virtio matrix's workloads (randread / randwrite; 512 B, 4 KiB, 32 KiB,
# 256 KiB, 1 MiB; libaio 2 jobs x QD32, as scripts/bench-virtio.sh), one
# scripts/profile-virtio.sh guest per workload.
#
#   scripts/profile-virtio-matrix.sh            (about 30 s of wall time per workload)
#   PROFILE_MATRIX_RW="randread" PROFILE_MATRIX_BS="4k 256k" ...  (fewer)
#   RUNTIME_MS=1000 ...                         (fio's guest time per run; 500)
#
# In icount QEMU serves the virtqueues in host time, so IOPS in guest time
# move with the host (scripts/bench-virtio.sh); the instructions the guest
# executes per I/O do not wait for QEMU. They still depend on what the guest
# does per I/O besides the driver: how many segments a request has (how
# contiguous fio's buffers are: PROFILE_SHARED=1, the default here, gives
# every run the same tmpfs pages, so both drivers see the same segments)
# and how many completions one interrupt reaps. Each workload's guest runs
# the C and the Rust driver one after the other in the same guest.
#
# Results: results/profiles/virtio-insns.{md,json,png}; each workload's
# profile in out/profile-virtio-matrix/<rw>-<bs>.{md,json}.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
. bench/lib.sh
runtime=${RUNTIME_MS:-500}
rws=${PROFILE_MATRIX_RW:-randread randwrite}
bss=${PROFILE_MATRIX_BS:-512 4k 32k 256k 1M}
shared=${PROFILE_SHARED:-1}
dir=out/profile-virtio-matrix
export BENCH_COMMAND=${BENCH_COMMAND:-"RUNTIME_MS=$runtime PROFILE_MATRIX_RW=\"$rws\" PROFILE_MATRIX_BS=\"$bss\" PROFILE_SHARED=$shared scripts/profile-virtio-matrix.sh"}
rm -rf "$dir"
mkdir -p "$dir" results/profiles
bench_meta icount "$runtime" > "$dir/meta.json"
for rw in $rws; do
    for bs in $bss; do
        log "$rw $bs"
        PROFILE_RW=$rw PROFILE_BS=$bs PROFILE_SHARED=$shared PROFILE_OUT=$dir/$rw-$bs \
            scripts/profile-virtio.sh "$runtime" > "$dir/$rw-$bs.log" 2>&1 \
            || { tail -n 20 "$dir/$rw-$bs.log" >&2; die "profile of $rw $bs failed ($dir/$rw-$bs.log)"; }
    done
done
python3 bench/insn-profile/matrix.py "$dir" results/profiles/virtio-insns
