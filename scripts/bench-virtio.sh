#!/usr/bin/env bash
# The virtio section of `make run`: rvirtio_blk vs C virtio_blk in one boot.
#
# Two identical virtio-blk-pci disks (raw images in host /tmp). rvirtio_blk
# binds both; one is unbound and C virtio_blk takes it (vda), the other stays
# with rvirtio_blk (rvda). fio (libaio, jobs = guest vCPUs, iodepth 128)
# runs randread and randwrite at 512 B, 4 KiB, 16 KiB and 128 KiB on both,
# interleaved sample by sample, and again with rvirtio_blk sg_prealloc=1.
# The SG memory counters of both rvirtio_blk modes are recorded too.
#
#   scripts/bench-virtio.sh                 host side (boots the guest)
#   scripts/bench-virtio.sh guest S R       guest side (S samples of R s)
# Results: results/virtio.{json,md,png}, results/virtio-memory.md
set -uo pipefail

if [[ ${1:-} == guest ]]; then
    SAMPLES=$2 RUNTIME=$3
    RES=$OUT/virtio.jsonl MEM=$OUT/virtio-memory.txt
    : > "$RES"; : > "$MEM"
    KO=$REPO/rvirtio_blk/rvirtio_blk.ko
    CKO=$KDIR/drivers/block/virtio_blk.ko
    JOBS=${VM_CPUS:-2}
    by_serial() { local d; for d in /sys/block/$1*; do
        [[ $(cat "$d/serial" 2>/dev/null) == "$2" ]] && { basename "$d"; return 0; }; done; return 1; }
    mem() { # mem LABEL DISK
        local d=/sys/kernel/debug/rvirtio_blk/$2 f
        for f in pdu_bytes inline_sg queue_depth nr_hw_queues tagset_sg_bytes requests chained sg_bytes_peak; do
            echo "$1 $f $(cat $d/$f)"
        done >> "$MEM"
    }
    setup() { # setup [rvirtio params]: rvda on disk "bench-r", vda on "bench-c"
        insmod "$KO" "$@" || return 1
        sleep 1
        local r c v
        c=$(by_serial rvd bench-c) || return 1
        v=$(basename "$(readlink -f /sys/block/$c/device)")
        echo "$v" > /sys/bus/virtio/drivers/rvirtio_blk/unbind
        grep -q '^virtio_blk ' /proc/modules || insmod "$CKO" || return 1
        [[ -e /sys/bus/virtio/drivers/virtio_blk/$v ]] || echo "$v" > /sys/bus/virtio/drivers/virtio_blk/bind
        sleep 1
        R=$(by_serial rvd bench-r) && C=$(by_serial vd bench-c)
    }
    teardown() { rmmod rvirtio_blk; rmmod virtio_blk; }
    run() { # run LABEL DEV RW BS SAMPLE
        fio --output-format=json --output=/tmp/b.json --name=b --filename=/dev/$2 \
            --direct=1 --ioengine=libaio --iodepth=128 --numjobs=$JOBS --group_reporting \
            --rw=$3 --bs=$4 --size=200M --time_based --runtime="$RUNTIME" --ramp_time=1 \
            >/dev/null 2>/tmp/fio.err || { echo "# fio failed: $1 $3 $4"; cat /tmp/fio.err; return 1; }
        python3 - "$1" "$3-$4" "$5" "$3" <<'PY' >> "$RES"
import json, sys
label, wl, s, rw = sys.argv[1:]
j = json.load(open('/tmp/b.json'))['jobs'][0]
r = j['read' if rw.endswith('read') else 'write']
print(json.dumps({'label': label, 'driver': label, 'workload': wl, 'sample': int(s),
                  'iops': r['iops'], 'MBps': r['bw_bytes'] / 1e6}))
PY
        tail -n 1 "$RES"
    }
    matrix() { # matrix MODE-LABEL SAMPLE
        local rw bs
        for rw in randread randwrite; do
            for bs in 512 4k 16k 128k; do
                run "$1" "$R" $rw $bs "$2"
                run virtio_blk "$C" $rw $bs "$2"
            done
        done
    }
    for s in $(seq "$SAMPLES"); do
        setup || { echo "# setup failed"; exit 1; }
        matrix rvirtio_blk "$s"
        [[ $s == 1 ]] && mem runtime "$R"
        teardown
        setup sg_prealloc=1 || { echo "# setup (prealloc) failed"; exit 1; }
        matrix rvirtio_blk-prealloc "$s"
        [[ $s == 1 ]] && mem prealloc "$R"
        teardown
    done
    dmesg | grep -E 'WARNING:|BUG:|Oops' && exit 1
    exit 0
fi

cd "$(dirname "$0")/.."
. scripts/env.sh
SAMPLES=${SAMPLES:-3} RUNTIME=${RUNTIME:-5}
mkdir -p results out/bench-virtio
img=$(mktemp -d /tmp/rvirtio-bench.XXXXXX)
trap 'rm -rf "$img"' EXIT
truncate -s 256M "$img/r.img" "$img/c.img"
log "virtio: $SAMPLES interleaved samples of ${RUNTIME}s per driver and workload"
q=()
for d in r c; do
    q+=(--qemu -drive --qemu "file=$img/$d.img,if=none,id=$d,format=raw,cache=writeback,aio=threads")
    q+=(--qemu -device --qemu "virtio-blk-pci,drive=$d,serial=bench-$d")
done
scripts/vm.sh --cpus 2 --out out/bench-virtio --timeout 3600 "${q[@]}" -- \
    scripts/bench-virtio.sh guest "$SAMPLES" "$RUNTIME" > out/bench-virtio/vm.log 2>&1 \
    || { tail -n 40 out/bench-virtio/vm.log; die "virtio benchmark guest failed"; }
scripts/report.py out/bench-virtio/virtio.jsonl results/virtio --baseline virtio_blk \
    --title "rvirtio_blk vs C virtio_blk (TCG, 2 vCPUs, libaio, 2 jobs x iodepth 128, same boot)"
python3 - out/bench-virtio/virtio-memory.txt > results/virtio-memory.md <<'PY'
import sys
from collections import defaultdict
v = defaultdict(dict)
for l in open(sys.argv[1]):
    mode, k, x = l.split()
    v[mode][k] = int(x)
keys = ["pdu_bytes", "inline_sg", "queue_depth", "nr_hw_queues", "tagset_sg_bytes", "requests", "chained", "sg_bytes_peak"]
modes = [m for m in ("runtime", "prealloc") if m in v]
print("## rvirtio_blk SG memory: runtime-chained (2 inline) vs preallocated (seg_max inline)\n")
print("| counter | " + " | ".join(modes) + " |")
print("|---|" + "---|" * len(modes))
for k in keys:
    print(f"| {k} | " + " | ".join(str(v[m].get(k, "")) for m in modes) + " |")
PY
# Paired ratios: each rvirtio_blk run against the C run right after it (same
# sample, same workload), which cancels most of the host's load drift.
python3 - out/bench-virtio/virtio.jsonl >> results/virtio-memory.md <<'PY'
import json, statistics, sys
from collections import defaultdict
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ratios = defaultdict(list)
for a, b in zip(rows, rows[1:]):
    if a["label"] != "virtio_blk" and b["label"] == "virtio_blk" and a["workload"] == b["workload"]:
        ratios[(a["label"], a["workload"])].append(a["iops"] / b["iops"])
print("\n## Paired IOPS ratio rvirtio_blk / C virtio_blk (median over samples)\n")
print("| workload | rvirtio_blk | rvirtio_blk-prealloc |")
print("|---|---:|---:|")
for wl in dict.fromkeys(r["workload"] for r in rows):
    cell = lambda l: "%.3f" % statistics.median(ratios[(l, wl)]) if ratios[(l, wl)] else ""
    print(f"| {wl} | {cell('rvirtio_blk')} | {cell('rvirtio_blk-prealloc')} |")
PY
cat results/virtio-memory.md
