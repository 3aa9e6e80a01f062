#!/usr/bin/env bash
# make fuzz: builds rfuzz (fuzz/), boots one guest (the debug kernel unless
# FLAVOUR says otherwise) with four virtio-blk disks and runs
# tests/guest/fuzz.sh, which fuzzes rnull_split and rvirtio_blk at once.
#   data  64 MiB on bus 0 (the data checker's: never unplugged or resized)
#   fzv1-fzv3 32 MiB each, on a SHPC pci-bridge (slots 4, 8, 12: their INTA
#         swizzles to the bridge's own, see tests/host/virtio_faults.sh), so
#         that device_del and device_add work with pci=noacpi
# While the guest runs, a QMP relay runs each command the guest drops in
# $out/qmp (NAME.req, one JSON command) and writes NAME.reply.
# Settings: FUZZ_SEED (default: a new one, printed), FUZZ_SECONDS (300),
# FUZZ_OPS (0: no limit), FUZZ_THREADS (4), FUZZ_HANG (180),
# FUZZ_DRIVERS ("rnull virtio"), FUZZ_PCI_RESET (0: no PCI function
# resets).
# Prints KTAP lines; the run's log, each
# thread's operations and the console are in $OUT_DIR/fuzz.
set -uo pipefail
cd "$(dirname "$0")/../.."
. scripts/env.sh
. tests/badlog.sh
out=${OUT_DIR:-out}/fuzz
rm -rf "$out"; mkdir -p "$out/qmp"
out=$(cd "$out" && pwd)
img=$(mktemp -d /tmp/fuzz.XXXXXX)
trap 'rm -rf "$img"; [[ -n ${relay_pid:-} ]] && kill "$relay_pid" 2>/dev/null' EXIT

if ! (cd fuzz && cargo build --release --locked -q) > "$out/cargo.log" 2>&1; then
    echo "not ok 1 - fuzz: cargo build of rfuzz failed"; tail -n 20 "$out/cargo.log" | sed 's/^/#   /'; exit 1
fi
seed=${FUZZ_SEED:-$(( $(date +%s%N) % 1000000000 ))}
secs=${FUZZ_SECONDS:-300}
echo "# fuzz seed $seed (replay: make fuzz FUZZ_SEED=$seed), $secs s"

truncate -s 64M "$img/data.img"
q=(--qemu -blockdev --qemu "driver=file,filename=$img/data.img,node-name=fzvdf"
   --qemu -blockdev --qemu "driver=raw,file=fzvdf,node-name=fzvd"
   --qemu -device --qemu "virtio-blk-pci,drive=fzvd,id=fzvddev,serial=fzvd,bus=pci.0,addr=0x10"
   --qemu -global --qemu "PIIX4_PM.acpi-pci-hotplug-with-bridge-support=off"
   --qemu -device --qemu "pci-bridge,id=br1,chassis_nr=1,shpc=on,bus=pci.0,addr=0x11")
vdevs="0000:00:10.0|fzvddev|fzvd|{}"
for i in 1 2 3; do
    slot=$(printf %x $(( 4 * i )))  # QEMU reads addr= in hex
    truncate -s 32M "$img/v$i.img"
    props="{\"driver\": \"virtio-blk-pci\", \"drive\": \"fzv$i\", \"id\": \"fzv${i}dev\", \"serial\": \"fzv$i\", \"bus\": \"br1\", \"addr\": \"$slot\"}"
    q+=(--qemu -blockdev --qemu "driver=file,filename=$img/v$i.img,node-name=fzv${i}f"
        --qemu -blockdev --qemu "driver=raw,file=fzv${i}f,node-name=fzv$i"
        --qemu -device --qemu "virtio-blk-pci,drive=fzv$i,id=fzv${i}dev,serial=fzv$i,bus=br1,addr=$slot")
    vdevs+=";0000:01:$(printf %02x 0x$slot).0|fzv${i}dev|fzv$i|$props"
done
q+=(--qemu -qmp --qemu "unix:$out/qmp.sock,server=on,wait=off")

# The relay: one QMP connection per command, in the order they come (QEMU
# serves one QMP client at a time). device_del returns at once; the guest
# sees the device go when its hot-plug driver has removed it.
PYTHONPATH=tests python3 - "$out/qmp.sock" "$out/qmp" <<'PY' &
import json, os, sys, time
from qmp import Qmp
sock, d = sys.argv[1], sys.argv[2]
parent = os.getppid()
while os.getppid() == parent:
    reqs = sorted(f for f in os.listdir(d) if f.endswith(".req"))
    for f in reqs:
        p = os.path.join(d, f)
        try:
            cmd = json.load(open(p))
        except Exception as e:
            cmd = None; r = {"error": "bad request: %r" % e}
        os.remove(p)
        q = None
        if cmd is not None:
            try:
                q = Qmp(sock)
                r = q.cmd(cmd)
            except Exception as e:
                r = {"error": repr(e)}
            finally:
                if q: q.close()
        tmp = p[:-4] + ".tmp2"
        with open(tmp, "w") as o:
            json.dump(r, o)
        os.rename(tmp, p[:-4] + ".reply")
    time.sleep(0.1)
PY
relay_pid=$!

genv=(env FUZZ_SEED="$seed" FUZZ_SECONDS="$secs" FUZZ_VDEVS="$vdevs" FUZZ_OPS="${FUZZ_OPS:-0}"
      FUZZ_THREADS="${FUZZ_THREADS:-4}" FUZZ_HANG="${FUZZ_HANG:-180}"
      FUZZ_DRIVERS="${FUZZ_DRIVERS:-rnull virtio}" FUZZ_PCI_RESET="${FUZZ_PCI_RESET:-}")
# the guest's timeout: the run, its teardown and kmemleak scans, boot
timeout=$(( secs + ${FUZZ_HANG:-180} + 600 ))
[[ $FLAVOUR == debug ]] && timeout=$(( (timeout + 2) / 3 + 300 ))  # vm.sh triples it
scripts/vm.sh --cpus 2 --mem 3072 --out "$out" --timeout "$timeout" "${q[@]}" -- "${genv[@]}" tests/guest/fuzz.sh \
    > "$out/vm.log" 2>&1
rc=$?
cat "$out/fuzz.tap" 2>/dev/null
grep -a '^rfuzz:' "$out/vm.log" | tr -d '\r' | sed 's/^/# /' | tail -n 120
if [[ $rc != 0 ]] && ! grep -q '^not ok' "$out/fuzz.tap" 2>/dev/null; then
    echo "not ok 99 - fuzz: guest exit status $rc (seed $seed); console tail:"
    tail -n 40 "$out/vm.log" | sed 's/^/#   /'
fi
grep -q '^not ok' "$out/fuzz.tap" 2>/dev/null && rc=1
exit $rc
