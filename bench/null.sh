#!/bin/bash
# Guest side of `make run` for the null drivers: the same fio jobs against
# rnull_split, C null_blk and upstream rnull (7.3's, configfs only: 4 KiB
# blocks, one queue, 256 tags, irqmode=0: the settings all three get here), loaded one at a time,
# interleaved sample by sample, in one boot; then the seed comparison,
# rnull_split in bio mode with fast vs deep split clones. One JSON object per
# fio run is appended to $OUT/null.jsonl.
#   bench/null.sh [SAMPLES] [RUNTIME_S]
set -u
SAMPLES=${1:-3} RUNTIME=${2:-5}
RES=$OUT/null.jsonl
: > "$RES"
COMMON="gb=4 bs=4096 submit_queues=1 hw_queue_depth=256 irqmode=0"

load() { # load DRIVER [EXTRA PARAMS]: insmod, print the device
    local d=$1; shift
    case $d in
        rnull_split) insmod "$REPO/rnull_split/rnull_split.ko" $COMMON "$@" && echo rnullb0 ;;
        null_blk) insmod "$KDIR/drivers/block/null_blk/null_blk.ko" $COMMON queue_mode=2 "$@" && echo nullb0 ;;
        rnull) insmod "$KDIR/drivers/block/rnull/rnull_mod.ko" || return 1
            local c=/sys/kernel/config/rnull/rnullb0
            mkdir "$c" && echo 4096 > "$c/blocksize" && echo 4096 > "$c/size" \
                && echo 0 > "$c/irqmode" && echo 1 > "$c/power" && echo rnullb0 ;;
    esac
}
unload() {
    case $1 in
        rnull) echo 0 > /sys/kernel/config/rnull/rnullb0/power
            rmdir /sys/kernel/config/rnull/rnullb0; rmmod rnull_mod ;;
        *) rmmod "$1" ;;
    esac
}

run() { # run LABEL DRIVER WORKLOAD SAMPLE FIO-ARGS...
    local label=$1 drv=$2 wl=$3 s=$4; shift 4
    local dev
    dev=$(load "$drv" ${LOAD_EXTRA:-}) || { echo "# load $drv failed"; return 1; }
    [[ -n ${MSKB:-} ]] && echo "$MSKB" > "/sys/block/$dev/queue/max_sectors_kb"
    fio --output-format=json --output=/tmp/b.json --name=b --filename=/dev/$dev \
        --direct=1 --time_based --runtime="$RUNTIME" --ramp_time=1 "$@" >/dev/null
    local rc=$?
    unload "$drv"
    [[ $rc == 0 ]] || { echo "# fio failed on $drv"; return 1; }
    python3 - "$label" "$drv" "$wl" "$s" <<'PY' >> "$RES"
import json, sys
label, drv, wl, s = sys.argv[1:]
j = json.load(open('/tmp/b.json'))['jobs'][0]
r = j['read']
print(json.dumps({'label': label, 'driver': drv, 'workload': wl, 'sample': int(s),
                  'iops': r['iops'], 'MBps': r['bw_bytes'] / 1e6}))
PY
    tail -n 1 "$RES"
}

# The order of the drivers rotates from sample to sample, so none is always
# first (TCG translates each freshly loaded module's code anew).
DRIVERS=(rnull_split null_blk rnull)
order() { local s=$1 n=${#DRIVERS[@]} i; for ((i = 0; i < n; i++)); do echo "${DRIVERS[(i + s) % n]}"; done; }
for s in $(seq "$SAMPLES"); do
    for drv in $(order "$s"); do
        run "$drv" "$drv" randread-4k "$s" --rw=randread --bs=4k --ioengine=io_uring --iodepth=32
    done
    for drv in $(order "$s"); do
        MSKB=16 run "$drv" "$drv" seqread-1m-msk16 "$s" --rw=read --bs=1M --ioengine=io_uring --iodepth=16
    done
    # The seed: rnull_split splitting bios itself (queue_mode=0), fast clones
    # (bio_split) against pre-2015 deep clones, alternating which goes first.
    clones=(fast deep); (( s % 2 )) || clones=(deep fast)
    for c in "${clones[@]}"; do
        LOAD_EXTRA="queue_mode=0 split_clone=$c" MSKB=16 run "bio-$c" rnull_split seqread-1m-msk16-bio "$s" \
            --rw=read --bs=1M --ioengine=io_uring --iodepth=16
    done
done
