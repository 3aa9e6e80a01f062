#!/usr/bin/env bash
# rvirtio_blk and C virtio_blk across a suspend with pm_test
# (tests/guest/virtio_pm.sh): the drivers' freeze and restore run, nothing is
# powered down. One guest, two virtio-blk-pci disks backed by raw images:
#   rpm-rust 64 MiB, bound to rvirtio_blk
#   rpm-c    64 MiB, bound to C virtio_blk
# The guest's root and output directory are 9p over virtio, whose driver has
# no freeze/restore: a suspend resets those devices under it, and they never
# answer again. So the guest runs everything after the suspend from tmpfs with
# busybox, reports on the console (lines starting "PMTAP "), and powers off
# without writing to $OUT. This script takes the results from the guest's TAP
# file (before the suspend) and its console (after), then checks the images:
# the 8 MiB the guest wrote before the suspend and read back after are there,
# byte for byte.
set -uo pipefail
cd "$(dirname "$0")/../.."
. scripts/env.sh
. tests/host-lib.sh
host_start virtio_pm

# Pattern: every 512-byte sector holds its sector number and the disk's name.
pattern() { # pattern FILE SECTORS NAME
    python3 - "$@" <<'PY'
import sys
with open(sys.argv[1], "wb") as f:
    for s in range(int(sys.argv[2])):
        head = b"%016x %s pm pattern " % (s, sys.argv[3].encode())
        f.write((head * (512 // len(head) + 1))[:512])
PY
}
for d in rust c; do
    truncate -s 64M "$img/$d.img"
    pattern "$out/$d.pat" $((8 * 2048)) "$d"
    drive "file=$img/$d.img,if=none,id=$d,format=raw"
    dev "virtio-blk-pci,drive=$d,serial=rpm-$d"
done

t0=$SECONDS
scripts/vm.sh --cpus 2 --out "$out" --timeout 900 --append no_console_suspend "${q[@]}" -- \
    tests/guest/virtio_pm.sh > "$out/vm.log" 2>&1
rc=$?
echo "# guest ran $((SECONDS - t0)) s (vm.sh status $rc: the guest powers off without writing its status)"
# Before the suspend: the TAP file; after: the console.
cat "$out/virtio_pm.tap" 2>/dev/null
tr -d '\r' < "$out/console.log" | sed -n 's/^PMTAP //p'
if ! tr -d '\r' < "$out/console.log" | grep -q '^PMTAP-END'; then
    echo "not ok 0 - host: the guest did not finish (no PMTAP-END); console tail:"
    tail -n 40 "$out/console.log" | tr -d '\r' | sed 's/^/#   /'
    rc=1
else
    rc=0
fi
echo "# host checks"
for d in rust c; do
    hcheck "$d image: the 8 MiB written before the suspend are there" \
        cmp -s <(head -c $((8 << 20)) "$img/$d.img") "$out/$d.pat"
done
grep -q '^not ok' < <(cat "$out/virtio_pm.tap" 2>/dev/null; tr -d '\r' < "$out/console.log" | sed -n 's/^PMTAP //p') && rc=1
exit $rc
