#!/usr/bin/env bash
# Data integrity under stress: boots one guest (2 vCPUs, 3 GiB) with a raw
# image of 128 MiB (STRESS_DISK_MB; 32 on the debug kernel) as a
# virtio-blk-pci disk (serial rvt-stress, 2 queues) and runs
# tests/guest/stress.sh: about STRESS_SECONDS (60) per configuration of
# repeated fio crc32c write+verify passes (mixed sizes 512 B..1 MiB, random
# offsets) on memory-backed rnull_split in blk-mq mode, in bio mode with
# fast and with deep split clones, and on the rvirtio_blk disk.
# Afterwards the host checks the image against the guest's last virtio pass:
#   - fio --verify_only with the guest's job file (the same job, seed, sizes
#     and offsets; only ${STRESS_TARGET} differs) over the image: 0 errors,
#     the whole image verified (each pass writes every block of the disk once,
#     and the guest zeroed the disk before it, so a lost write shows as
#     zeroes), and the same number of I/Os per job as the guest's pass wrote.
#     Measured with fio 3.33 (--debug=io): the job regenerates the identical
#     per-job (offset, length) sequence at iodepth 16 and 1, on one CPU or
#     two, and under --verify_only; another seed gives another sequence,
#     but verify_only with it still passes (fio 3.33 does not compare the
#     seed stored in the headers), hence the I/O-count comparison;
#   - sha256 of the image == sha256 of the whole disk read in the guest;
#   - positive controls on copies of the image: one flipped byte, and one
#     4 KiB range zeroed as a lost write leaves it (the guest zeroes the disk
#     before every pass): verify_only must fail and name the damaged block;
#     and the job with randseed+1 must regenerate another I/O sequence (the
#     I/O-count comparison can tell passes apart).
# STRESS_SEED repeats a run's pass seeds (the guest prints the one it used).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT_DIR:-out}/stress
rm -rf "$out"; mkdir -p "$out"
out=$(cd "$out" && pwd)
secs=${STRESS_SECONDS:-60}
seed=${STRESS_SEED:-$(( (RANDOM << 15) | RANDOM ))}
img=$(mktemp -d /tmp/rstress.XXXXXX)
trap 'rm -rf "$img"' EXIT
# The debug kernel (KASAN, lockdep, kmemleak) moves data ~20x slower under
# TCG: a 64 MiB rnull pass took 5 min there and the 128 MiB virtio stage did
# not finish before the guest's timeout, so its disk is 32 MiB.
if [[ ${FLAVOUR:-default} == debug ]]; then disk_mb=${STRESS_DISK_MB:-32}; else disk_mb=${STRESS_DISK_MB:-128}; fi
size=$((disk_mb << 20))

for ko in rnull_split/rnull_split.ko rvirtio_blk/rvirtio_blk.ko; do
    [[ -f ${MODDIR:-.}/$ko ]] || { echo "not ok 1 - host: ${MODDIR:-.}/$ko not built (run make)"; exit 1; }
done
truncate -s $size "$img/disk.img"

t0=$SECONDS
scripts/vm.sh --cpus 2 --mem 3072 --out "$out" --timeout $((4 * secs + 900)) \
    --qemu -drive --qemu "file=$img/disk.img,if=none,id=st,format=raw,cache=writeback" \
    --qemu -device --qemu "virtio-blk-pci,drive=st,serial=rvt-stress,num-queues=2" \
    -- env STRESS_SECONDS="$secs" STRESS_SEED="$seed" STRESS_DISK_MB="$disk_mb" tests/guest/stress.sh > "$out/vm.log" 2>&1
rc=$?
# The guest's KTAP lines, then the host's, numbered on as one stream.
n=0
if [[ -f $out/stress.tap ]]; then
    grep -v '^1\.\.' "$out/stress.tap"
    n=$(grep -cE '^(not )?ok [0-9]+ ' "$out/stress.tap")
fi
[[ $rc == 0 ]] || { echo "# guest exit status $rc; console tail:"; tail -n 40 "$out/vm.log" | sed 's/^/#   /'; }
echo "# guest ran $((SECONDS - t0)) s"

hok() { n=$((n + 1)); echo "ok $n - host: $*"; }
hnot_ok() { n=$((n + 1)); echo "not ok $n - host: $*"; rc=1; }
hcheck() { local d=$1; shift; if "$@"; then hok "$d"; else hnot_ok "$d"; fi; }

# verify_only IMAGE TAG: fio --verify_only of the guest's last pass on IMAGE;
# status in $vrc, verified bytes in $vbytes (-1: a job error), reads per job
# in $vios, fio's messages in $out/TAG.err.
verify_only() {
    STRESS_TARGET=$1 fio --verify_only --output-format=json --output="$out/$2.json" \
        "$out/virtio-last.fio" > /dev/null 2> "$out/$2.err"
    vrc=$?
    read -r vbytes vios < <(python3 - "$out/$2.json" <<'PY'
import json, sys
try:
    s = open(sys.argv[1]).read()
    jobs = json.loads(s[s.index("{"):])["jobs"]
    print(sum(j["read"]["io_bytes"] for j in jobs) if all(j["error"] == 0 for j in jobs) else -1,
          " ".join(str(j["read"]["total_ios"]) for j in jobs))
except Exception:
    print(-1)
PY
)
}
# names_block ERRFILE START LEN: fio's first verify failure is for a block
# (offset N, length L) that overlaps [START, START + LEN).
names_block() {
    local line; line=$(grep -m1 -oE 'at file .* offset [0-9]+, length [0-9]+' "$1") || return 1
    [[ $line =~ offset\ ([0-9]+),\ length\ ([0-9]+)$ ]] || return 1
    echo "#   fio: ${line##* file }"
    ((BASH_REMATCH[1] < $2 + $3 && $2 < BASH_REMATCH[1] + BASH_REMATCH[2]))
}
# control_fails TAG START LEN: the last verify_only failed, at a block in the range.
control_fails() { [[ $vrc != 0 ]] && names_block "$out/$1.err" "$2" "$3"; }

echo "# host checks"
if [[ ! -f $out/virtio-last.fio || ! -f $out/virtio.sha256 ]]; then
    hnot_ok "the guest left no virtio-last.fio / virtio.sha256 (virtio part did not finish)"
    echo "1..$n"; exit 1
fi
sed 's/^/#   job: /' "$out/virtio-last.fio" | grep -vE 'job: (;|\[)'
sum=$(sha256sum < "$img/disk.img" | cut -d' ' -f1)
hcheck "sha256 of the image == the guest's O_DIRECT read of the whole disk ($sum)" \
    test "$sum" == "$(cat "$out/virtio.sha256")"

verify_only "$img/disk.img" verify
[[ $vrc == 0 ]] || sed 's/^/#   fio: /' "$out/verify.err" | head -n 10
echo "# host: fio --verify_only verified $vbytes bytes of the image"
hcheck "fio --verify_only of the guest's last pass on the image: 0 errors, all $((size >> 20)) MiB verified (status $vrc)" \
    test $vrc == 0 -a "$vbytes" == $size
# fio does not check the seed in crc32c headers, so a pass is only proven
# to be regenerated by its I/O sequence: same number of I/Os in each job.
hcheck "verify_only regenerated the guest's pass: reads per job ($vios) == the guest's writes per job ($(cat "$out/virtio-last.ios" 2>/dev/null))" \
    test -n "$vios" -a "$vios" == "$(cat "$out/virtio-last.ios" 2>/dev/null)"
hcheck "verify_only left the image as it was" test "$(sha256sum < "$img/disk.img" | cut -d' ' -f1)" == "$sum"

# Positive controls: the same verify_only must fail on a damaged copy.
# A byte at 300 mod 512 is past every block's header: the data crc catches it.
flip=$(( size / 8 * 5 + 4096 * 37 + 300 ))
cp "$img/disk.img" "$img/bad.img"
python3 - "$img/bad.img" $flip <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    o = int(sys.argv[2]); f.seek(o); b = f.read(1); f.seek(o); f.write(bytes([b[0] ^ 0xff]))
PY
verify_only "$img/bad.img" control-flip
hcheck "control: one flipped byte at $flip makes verify_only fail (status $vrc), naming the block that holds it" \
    control_fails control-flip $flip 1
lost=$(( size / 4 + 4096 * 5 ))
cp "$img/disk.img" "$img/bad.img"
dd if=/dev/zero of="$img/bad.img" bs=4096 seek=$((lost / 4096)) count=1 conv=notrunc status=none
verify_only "$img/bad.img" control-lost
hcheck "control: 4 KiB zeroed at $lost (a lost write) makes verify_only fail (status $vrc), naming a block in the range" \
    control_fails control-lost $lost 4096
rm -f "$img/bad.img"
# ... and the I/O-count comparison must tell another seed's sequence apart.
want=$(cat "$out/virtio-last.ios")
awk -F= '$1 == "randseed" { print "randseed=" $2 + 1; next } { print }' "$out/virtio-last.fio" > "$img/other.fio"
STRESS_TARGET=$img/disk.img fio --verify_only --output-format=json --output="$out/control-seed.json" \
    "$img/other.fio" > /dev/null 2> "$out/control-seed.err"
orc=$?
other=$(python3 -c 'import json,sys; s=open(sys.argv[1]).read(); print(" ".join(str(j["read"]["total_ios"]) for j in json.loads(s[s.index("{"):])["jobs"]))' \
    "$out/control-seed.json" 2>/dev/null)
echo "# host: verify_only with randseed+1: status $orc (fio does not check the seed), reads per job $other"
hcheck "control: randseed+1 regenerates another sequence (reads per job $other != $want)" \
    test -n "$other" -a "$other" != "$want"

echo "1..$n"
grep -q '^not ok' "$out/stress.tap" 2>/dev/null && rc=1
exit $rc
