#!/usr/bin/env bash
# rvirtio_blk lifecycle abuse and bad input (tests/guest/virtio_abuse.sh) in
# three guests, each under its own timeout, starting from a healthy kernel
# and with its own fresh images:
#   1. kmemleak-control, params   bad parameter values refused; zero and
#                                 valid edge values load and work
#   2. cycles, bind, open-fd      ABUSE_CYCLES (100) insmod/rmmod cycles with
#                                 I/O, ABUSE_BIND_CYCLES (20) unbind/bind
#                                 cycles under fio, rmmod under an open file
#   3. open-fio                   rmmod while fio write+verify runs
# Each guest has three virtio-blk-pci disks of 32 MiB on sparse raw images in
# a host temporary directory: rva-mq (num-queues=2), rva-small (queue-size=8,
# indirect_desc=off: seg_max 6, 4 tags, chained SG tables and a full ring;
# throttled to ABUSE_SMALL_IOPS (50) IOPS so its requests stay in flight)
# and rva-plain. After each guest powers off, the host checks, byte for
# byte, that the images hold the last data the guest wrote at every offset
# it recorded ($OUT/written.log: serial, offset, length, sha256), and that
# the first MiB, which the guest never writes, is still zero.
# kmemleak checks need the debug kernel (make check-debug); elsewhere SKIP.
# ABUSE_CYCLES and ABUSE_BIND_CYCLES shorten a run; ABUSE_GUESTS (default
# "params cycles fio") picks guests.
# Prints one renumbered KTAP stream (guest results, then host checks) and
# exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT_DIR:-out}/virtio_abuse
rm -rf "$out"; mkdir -p "$out"
out=$(cd "$out" && pwd)
img=$(mktemp -d /tmp/rvirtio-abuse.XXXXXX)
trap 'rm -rf "$img"' EXIT
rc=0
host_tap=$out/host.tap
: > "$host_tap"
hok() { echo "ok 0 - host: $*" >> "$host_tap"; }
hnot_ok() { echo "not ok 0 - host: $*" >> "$host_tap"; rc=1; }

KO=${MODDIR:-.}/rvirtio_blk/rvirtio_blk.ko
if [[ ! -f $KO ]]; then
    echo "not ok 1 - host: $KO not built (run make)"; echo "1..1"; exit 1
fi

SERIALS=(rva-mq rva-small rva-plain)
# guest NAME OUTDIR PARTS...: fresh images, boot, then the image checks.
guest() {
    local name=$1 dir=$2; shift 2
    local d=$img/$name q=() s r
    mkdir -p "$dir" "$d"
    for s in "${SERIALS[@]}"; do truncate -s 32M "$d/$s.img"; done
    q+=(--qemu -drive --qemu "file=$d/rva-mq.img,if=none,id=mq,format=raw,cache=writeback")
    q+=(--qemu -device --qemu "virtio-blk-pci,drive=mq,serial=rva-mq,num-queues=2")
    # rva-small is throttled in QEMU (throttling.iops-total): requests wait
    # in the device, so the ring is full and requests are in flight whenever
    # the guest keeps it busy, however slow the guest kernel is (debug).
    q+=(--qemu -drive --qemu "file=$d/rva-small.img,if=none,id=small,format=raw,throttling.iops-total=${ABUSE_SMALL_IOPS:-50}")
    q+=(--qemu -device --qemu "virtio-blk-pci,drive=small,serial=rva-small,num-queues=1,queue-size=8,indirect_desc=off")
    q+=(--qemu -drive --qemu "file=$d/rva-plain.img,if=none,id=plain,format=raw")
    q+=(--qemu -device --qemu "virtio-blk-pci,drive=plain,serial=rva-plain,num-queues=1")
    local t0=$SECONDS
    scripts/vm.sh --cpus 2 --out "$dir" --timeout 1500 "${q[@]}" -- \
        env ABUSE_CYCLES="${ABUSE_CYCLES:-100}" ABUSE_BIND_CYCLES="${ABUSE_BIND_CYCLES:-20}" \
        tests/guest/virtio_abuse.sh "$@" \
        > "$dir/vm.log" 2>&1
    r=$?
    echo "# guest $name ($*): $((SECONDS - t0)) s" >> "$host_tap"
    [[ $r == 0 ]] || { rc=1; echo "# guest ($*) exit status $r; console tail:" >> "$host_tap"
        tail -n 30 "$dir/vm.log" | sed 's/^/#   /' >> "$host_tap"; }
    # --- host-side image checks --------------------------------------------------
    if [[ -s $dir/written.log ]]; then
        local res
        res=$(python3 - "$d" "$dir/written.log" <<'PY'
import hashlib, sys
d, log = sys.argv[1], sys.argv[2]
last = {}
for line in open(log):
    f = line.split()
    if len(f) == 5:
        last[(f[0], int(f[1]))] = (int(f[2]), f[3])
bad, nbytes = [], 0
for (serial, off), (length, sha) in sorted(last.items()):
    with open(f"{d}/{serial}.img", "rb") as img:
        img.seek(off)
        if hashlib.sha256(img.read(length)).hexdigest() != sha:
            bad.append(f"{serial}@{off}+{length}")
    nbytes += length
print(len(last), nbytes, " ".join(bad[:10]) or "-", len(bad))
PY
)
        read -r nrec nbytes badlist nbad <<<"$res"
        if [[ $nbad == 0 ]]; then
            hok "$name: the images hold the guest's last write at each of $nrec recorded offsets ($((nbytes / 1024)) KiB, sha256)"
        else
            hnot_ok "$name: $nbad of $nrec recorded writes not in the images: $badlist"
        fi
    elif [[ $* == *params* || $* == *cycles* || $* == *open* ]]; then
        hnot_ok "$name: the guest recorded no writes ($dir/written.log)"
    fi
    local zero=1
    for s in "${SERIALS[@]}"; do
        cmp -s -n $((1 << 20)) "$d/$s.img" /dev/zero || { zero=0; hnot_ok "$name: the first MiB of $s.img (never written) is not zero"; }
    done
    ((zero)) && hok "$name: the first MiB of each image (never written) is still zero"
    [[ -f $dir/verified.bytes ]] && echo "# guest $name verified $(( $(cat "$dir/verified.bytes") / 1024 )) KiB" >> "$host_tap"
    rm -rf "$d"
}
for g in ${ABUSE_GUESTS:-params cycles fio}; do
    case $g in
    params) guest params "$out" kmemleak-control params ;;
    cycles) guest cycles "$out/cycles" cycles bind open-fd ;;
    fio) guest fio "$out/fio" open-fio ;;
    *) hnot_ok "unknown guest $g (ABUSE_GUESTS: params, cycles, fio)" ;;
    esac
done
# One KTAP stream, renumbered.
cat "$out/virtio_abuse.tap" "$out/cycles/virtio_abuse.tap" "$out/fio/virtio_abuse.tap" "$host_tap" 2>/dev/null | awk '
    /^1\.\./ { next }
    /^(not )?ok [0-9]+ / { n++; sub(/ok [0-9]+ /, "ok " n " ") }
    { print }
    END { print "1.." n }'
cat "$out/virtio_abuse.tap" "$out/cycles/virtio_abuse.tap" "$out/fio/virtio_abuse.tap" 2>/dev/null | grep -q '^not ok' && rc=1
exit $rc
