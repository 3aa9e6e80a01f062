#!/usr/bin/env bash
# rvirtio_blk under device faults (tests/guest/virtio_faults.sh). One guest,
# five virtio-blk-pci disks backed by raw images in a mktemp directory, found
# in the guest by serial:
#   rvf-err    8 MiB, host pattern, blkdebug: EIO on reads of sector 4096 and
#              on writes of sector 6144 (once=off, iotype read / write),
#              werror=report,rerror=report
#   rvf-tiny  64 MiB, queue-size=4 (seg_max 2, 4 ring entries, indirect
#              descriptors)
#   rvf-tinyni 64 MiB, queue-size=4, indirect_desc=off (a request takes 3 or 4
#              of the 4 descriptors: the ring is full with 2 in flight)
#   rvf-seg   64 MiB, default queue (seg_max 254), for the seg_max parameter
#   rvf-hot   64 MiB, device id "hotdev": removed with device_del over QMP
#              while fio runs on it. Default kernel: on the root bus (ACPI PCI
#              hotplug, acpiphp). FLAVOUR=debug boots with pci=noacpi, so there
#              the disk sits behind a pci-bridge with SHPC (shpchp) and ACPI
#              hotplug of bridges is off. VF_HOTPLUG=acpi|shpc overrides.
#   rvf-rst   64 MiB, alone behind its own pci-bridge (br2): the only function
#              on its bus, so its reset is a bus reset (QEMU's virtio-pci on
#              this machine has no FLR or PM reset)
# A QMP helper serves the guest's requests (files in $OUT): stats.req ->
# query-blockstats into stats.json (QEMU's count of failed reads/writes =
# faults injected); unplug.req -> device_del hotdev, wait for its
# DEVICE_DELETED event, result in unplug.done.
# After power-off the host checks the images: the sectors around the bad
# write sector hold what the guest wrote, the bad sectors still hold the
# host's pattern (the failed write did not land), and every region the guest
# recorded in regions.txt (after fio verify) has the sha256 the guest saw.
set -uo pipefail
cd "$(dirname "$0")/../.."
. scripts/env.sh
. tests/host-lib.sh
host_start virtio_faults

if [[ -n ${VF_HOTPLUG:-} ]]; then hotplug=$VF_HOTPLUG
elif [[ $FLAVOUR == debug ]]; then hotplug=shpc
else hotplug=acpi; fi
echo "$hotplug" > "$out/hotplug.mode"
echo "# hot-unplug mechanism: $hotplug"

# The pattern: every 512-byte sector holds its sector number (16 hex digits)
# and a fixed text, as in tests/host/virtio.sh.
pattern() { # pattern FILE SECTORS
    python3 - "$1" "$2" <<'PY'
import sys
with open(sys.argv[1], "wb") as f:
    for s in range(int(sys.argv[2])):
        head = b"%016x rvirtio pattern " % s
        f.write((head * (512 // len(head) + 1))[:512])
PY
}
pattern "$img/err.img" $((8 * 2048))
truncate -s 64M "$img/tiny.img" "$img/tinyni.img" "$img/seg.img" "$img/hot.img" "$img/rst.img"
cat > "$img/blkdebug.conf" <<'CONF'
[inject-error]
event = "read_aio"
errno = "5"
sector = "4096"
once = "off"
iotype = "read"

[inject-error]
event = "write_aio"
errno = "5"
sector = "6144"
once = "off"
iotype = "write"
CONF

# QMP helper. One connection per request (the socket serves one client).
PYTHONPATH=tests python3 - "$out/qmp.sock" "$out" <<'PY' &
import os, sys, time
from qmp import Qmp, done
sock, out = sys.argv[1], sys.argv[2]

def deleted(events):
    return any(e["event"] == "DEVICE_DELETED" and e.get("data", {}).get("device") == "hotdev"
               for e in events)

deadline = time.time() + 7200
while time.time() < deadline:
    for req in ("stats", "unplug"):
        p = os.path.join(out, req + ".req")
        if not os.path.exists(p):
            continue
        os.remove(p)
        q = None
        try:
            q = Qmp(sock)
            if req == "stats":
                r = q.cmd({"execute": "query-blockstats"})
                done(out, "stats.json", {d["device"]: d["stats"] for d in r.get("return", [])})
            else:
                t0 = time.time()
                r = q.cmd({"execute": "device_del", "arguments": {"id": "hotdev"}})
                res = {"return": r, "deleted": False}
                if "return" in r:
                    while time.time() < t0 + 180 and not deleted(q.events):
                        e = q.line(5)
                        if e is not None and "event" in e:
                            q.events.append(e)
                    res["deleted"] = deleted(q.events)
                res["seconds"] = round(time.time() - t0, 2)
                res["events"] = [e["event"] + ":" + e.get("data", {}).get("device", e.get("data", {}).get("path", ""))
                                 for e in q.events]
                done(out, "unplug.done", res)
        except Exception as e:  # report, never die: the guest waits for an answer
            done(out, req + ".error", {"error": repr(e)})
        finally:
            if q: q.close()
    time.sleep(0.2)
PY
qmp_pid=$!

drive "file=blkdebug:$img/blkdebug.conf:$img/err.img,if=none,id=err,format=raw,werror=report,rerror=report"
dev "virtio-blk-pci,drive=err,serial=rvf-err"
drive "file=$img/tiny.img,if=none,id=tiny,format=raw"
dev "virtio-blk-pci,drive=tiny,serial=rvf-tiny,queue-size=4"
drive "file=$img/tinyni.img,if=none,id=tinyni,format=raw"
dev "virtio-blk-pci,drive=tinyni,serial=rvf-tinyni,queue-size=4,indirect_desc=off"
drive "file=$img/seg.img,if=none,id=seg,format=raw"
dev "virtio-blk-pci,drive=seg,serial=rvf-seg"
drive "file=$img/rst.img,if=none,id=rst,format=raw"
# Slot 4: see the SHPC case below.
dev "pci-bridge,id=br2,chassis_nr=2,shpc=off"
dev "virtio-blk-pci,drive=rst,serial=rvf-rst,bus=br2,addr=4"
drive "file=$img/hot.img,if=none,id=hot,format=raw"
case $hotplug in
    acpi) dev "virtio-blk-pci,drive=hot,id=hotdev,serial=rvf-hot" ;;
    shpc)
        q+=(--qemu -global --qemu PIIX4_PM.acpi-pci-hotplug-with-bridge-support=off)
        dev "pci-bridge,id=br1,chassis_nr=1,shpc=on"
        # Slot 4 on the bridge: its INTA swizzles to the bridge's own INTA.
        # pci=noacpi routes by SeaBIOS's MP table, which lists only the pin
        # each bus-0 device uses; for any other bridge pin the kernel takes
        # the bridge's INTA entry (a "fuzzy" match, "using bridge ... INT B
        # to get IRQ 10") while the line really is another PIRQ: the disk's
        # interrupts then land on an IRQ nobody handles ("irq 11: nobody
        # cared", the IRQ is disabled and every disk sharing it stalls).
        dev "virtio-blk-pci,drive=hot,id=hotdev,serial=rvf-hot,bus=br1,addr=4" ;;
    *) echo "not ok 1 - host: VF_HOTPLUG=$hotplug (want acpi or shpc)"; exit 1 ;;
esac
q+=(--qemu -qmp --qemu "unix:$out/qmp.sock,server=on,wait=off")

t0=$SECONDS
parts=${VF_PARTS:-eio tiny seg reset hot}   # a subset, for work on the suite
has() { [[ " $parts " == *" $1 "* ]]; }
scripts/vm.sh --cpus 2 --out "$out" --timeout 1500 "${q[@]}" -- \
    env VF_PARTS="$parts" tests/guest/virtio_faults.sh \
    > "$out/vm.log" 2>&1
rc=$?
cat "$out/virtio_faults.tap" 2>/dev/null
[[ $rc == 0 ]] || { echo "# guest exit status $rc; console tail:"; tail -n 40 "$out/vm.log" | sed 's/^/#   /'; }
echo "# guest ran $((SECONDS - t0)) s"

# --- host-side assertions ------------------------------------------------------
echo "# host checks"
sector() { dd if="$img/$1" bs=512 skip="$2" count=1 status=none; }
same() { cmp -s <(sector "$1" "$2") <(pattern /dev/stdout $(($2 + 1)) | tail -c 512); }
if has eio; then
    if [[ -f $out/badread.bin ]]; then
        hcheck "err image: bad read sector 4096 holds what the guest wrote (writes pass the read rule)" \
            cmp -s <(sector err.img 4096) "$out/badread.bin"
    else
        hnot_ok "guest recorded no badread.bin"
    fi
    hcheck "err image: bad write sector 6144 holds the host pattern (no failed write landed)" same err.img 6144
    if [[ -f $out/neighbours.bin ]]; then
        hcheck "err image: sectors 6143 and 6145 hold what the guest wrote next to the bad one" \
            cmp -s <(sector err.img 6143; sector err.img 6145) "$out/neighbours.bin"
    else
        hnot_ok "guest recorded no neighbours.bin"
    fi
    hcheck "err image: the first 2 MiB (only read by the guest) are unchanged" \
        cmp -s <(head -c $((2 << 20)) "$img/err.img") <(pattern /dev/stdout 4096)
fi
if has eio || has tiny || has seg || has reset; then
    if [[ -s $out/regions.txt ]]; then
        while read -r image off len sum what; do
            got=$(dd if="$img/$image" bs=1M skip="$off" count="$len" status=none | sha256sum | cut -d' ' -f1)
            hcheck "$image ${off}..$((off + len)) MiB ($what) is byte-exact in the image" test "$got" == "$sum"
        done < "$out/regions.txt"
    else
        hnot_ok "guest recorded no regions (regions.txt)"
    fi
fi
if has hot; then
    if [[ -f $out/unplug.done ]]; then
        hcheck "device_del: DEVICE_DELETED for hotdev ($(python3 -c "import json; d = json.load(open('$out/unplug.done')); print(d['seconds'], 's')"))" \
            python3 -c "import json, sys; sys.exit(not json.load(open('$out/unplug.done'))['deleted'])"
    else
        hnot_ok "no device_del result (unplug.done)"
    fi
fi
echo "# host: $n checks"
grep -q '^not ok' "$out/virtio_faults.tap" 2>/dev/null && rc=1
exit $rc
