#!/bin/bash
# Guest side of scripts/profile-null.sh: C null_blk and rnull_split with the
# benchmark's same settings, one fio run each, with sync(2) between the
# phases (the insn_profile plugin cuts its table at every sync(2)).
# LOAD=both: both loaded side by side; warm-up on both; sync; fio on
# null_blk (phase 1); sync; fio on rnull_split (phase 2); sync.
# LOAD=alone, as the benchmark loads them: null_blk loaded, warm-up; sync;
# fio (phase 1); sync; rmmod, rnull_split loaded, warm-up (phase 2); sync;
# fio (phase 3); sync. /proc/kallsyms is saved while each is loaded. fio's
# JSON goes to $OUT afterwards, so that no 9p write falls in a measured phase.
#
#   bench/profile-null-guest.sh RUNTIME_MS RW BS QD IRQMODE [LOAD [JOBS [RUST_QUEUE_MODE [MEMORY_BACKED]]]]
#
# RUST_QUEUE_MODE=0 loads rnull_split bio-based (C null_blk has no bio mode
# in 7.3: it stays request-based). MEMORY_BACKED=1 disks are written through
# once after loading, as the benchmark does, so that reads copy data.
set -euo pipefail
runtime=$1 rw=$2 bs=$3 qd=$4 irq=$5 load=${6:-both} jobs=${7:-1} rust_qm=${8:-2} mem=${9:-0}
say() { echo "BENCH $*"; }
same="gb=4 bs=512 submit_queues=1 hw_queue_depth=256 completion_nsec=10000 poll_queues=0 irqmode=$irq memory_backed=$mem"
load() { # KO DEV [PARAM...]
    insmod "$1" $same "${@:3}"
    for _ in $(seq 100); do [[ -e /dev/$2 ]] && break; sleep 0.05; done
    if [[ -d /sys/block/$2/mq ]]; then     # bio-based: no scheduler
        echo none > "/sys/block/$2/queue/scheduler"
    fi
    if [[ $mem == 1 ]]; then
        fio --name=fill --filename="/dev/$2" --rw=write --bs=1M --ioengine=psync --direct=1 \
            --size=256M --output=/dev/null
    fi
}
c_ko=$KDIR/drivers/block/null_blk/null_blk.ko rust_ko=$MODDIR/rnull_split/rnull_split.ko
echo 0 > /proc/sys/kernel/kptr_restrict
case $load in
both) how="both drivers loaded side by side" ;;
alone) how="one driver loaded at a time, null_blk first, as the benchmark loads them" ;;
*) echo "LOAD must be both or alone, not '$load'" >&2; exit 1 ;;
esac
cat > "$OUT/disks.json" <<JSON
{"c": "nullb0", "rust": "rnullb0", "runtime_ms": $runtime, "bs": "$bs", "modules": ["null_blk", "rnull_split"],
 "workload": "From \`scripts/profile-null.sh\` (the insn_profile TCG plugin in an icount guest): $rw $bs, fio $jobs job(s) x QD$qd, --direct=1, buffers in huge pages; $how, with the benchmark's same settings ($same, null_blk queue_mode=2, rnull_split queue_mode=$rust_qm), scheduler none."}
JSON
# fio's buffers in huge pages, as the benchmark's same-settings cells
echo 256 > /proc/sys/vm/nr_hugepages
engine=io_uring
[[ $qd == 1 ]] && engine=psync
job() { # DEV NAME RUNTIME_MS
    fio --name="$2" --filename="/dev/$1" --rw="$rw" --bs="$bs" --ioengine=$engine --iodepth="$qd" \
        --numjobs="$jobs" --direct=1 --time_based --runtime="${3}ms" --size=256M \
        --iomem=mmaphuge --hugepage-size=2097152 \
        --group_reporting --randrepeat=1 --norandommap --disk_util=0 \
        --output-format=json --output="/tmp/fio-$2.json" --eta=never
}
if [[ $load == both ]]; then
    load "$c_ko" nullb0 queue_mode=2
    load "$rust_ko" rnullb0 queue_mode="$rust_qm"
    cat /proc/kallsyms > /tmp/kallsyms
    job nullb0 warm 100
    job rnullb0 warm 100
    sync                # phase 1: C null_blk
    job nullb0 c "$runtime"
    sync                # phase 2: rnull_split
    job rnullb0 rust "$runtime"
    sync
    printf '{"whole": {"c": 1, "rust": 2}}\n' > /tmp/phases.json
else
    load "$c_ko" nullb0 queue_mode=2
    cat /proc/kallsyms > /tmp/kallsyms-c
    job nullb0 warm 100
    sync                # phase 1: C null_blk
    job nullb0 c "$runtime"
    sync                # phase 2: swap the drivers, warm-up
    rmmod null_blk
    load "$rust_ko" rnullb0 queue_mode="$rust_qm"
    cat /proc/kallsyms > /tmp/kallsyms-rust
    job rnullb0 warm 100
    sync                # phase 3: rnull_split
    job rnullb0 rust "$runtime"
    sync
    printf '{"whole": {"c": 1, "rust": 3}}\n' > /tmp/phases.json
fi
cp /tmp/fio-c.json /tmp/fio-rust.json /tmp/kallsyms* /tmp/phases.json "$OUT/"
ios() { grep '"total_ios"' "$1" | head -n 2 | tr -dc '0-9\n' | paste -sd+ | bc; } # read + write
say "fio done: C $(ios /tmp/fio-c.json), Rust $(ios /tmp/fio-rust.json) I/Os"
rmmod rnull_split
[[ $load == alone ]] || rmmod null_blk
