#!/usr/bin/env bash
# More disks than a 64-bit index map holds (tests/guest/virtio_many.sh): one
# guest, 70 virtio-blk-pci devices on three pci-bridges, each backed by
# QEMU's null-co driver (1 MiB of zeroes, nothing on the host's disk).
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/host-lib.sh
host_start virtio_many
N=70
for b in 1 2 3; do dev "pci-bridge,id=b$b,chassis_nr=$b,shpc=off"; done
for i in $(seq 0 $((N - 1))); do
    drive "driver=null-co,size=1M,read-zeroes=on,if=none,id=d$i"
    dev "virtio-blk-pci,drive=d$i,serial=rvm-$i,bus=b$((i / 28 + 1)),addr=$(printf 0x%x $((i % 28 + 1)))"
done
t0=$SECONDS
scripts/vm.sh --cpus 2 --out "$out" --timeout 600 "${q[@]}" -- env MANY=$N tests/guest/virtio_many.sh \
    > "$out/vm.log" 2>&1
rc=$?
cat "$out/virtio_many.tap" 2>/dev/null
[[ $rc == 0 ]] || { echo "# guest exit status $rc; console tail:"; tail -n 40 "$out/vm.log" | sed 's/^/#   /'; }
echo "# guest ran $((SECONDS - t0)) s"
grep -q '^not ok' "$out/virtio_many.tap" 2>/dev/null && rc=1
exit $rc
