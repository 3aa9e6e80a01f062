#!/usr/bin/env bash
# rvirtio_blk: boots one guest with five virtio-blk-pci disks backed by host
# raw images and runs tests/guest/virtio.sh (C virtio_blk is not loaded):
#   data  64 MiB, host-written pattern, serial, 2 queues, discard + write zeroes
#   ro     8 MiB, readonly=on
#   small 64 MiB, queue-size=8 -> seg_max 6 (chained tables at 3..6 segments),
#         no indirect descriptors (a full ring is easy to reach), throttled
#         to VIRTIO_SMALL_IOPS (200) IOPS: its requests wait in the device,
#         so a full ring and requests in flight at a surprise removal are
#         there whatever the host's speed (unthrottled, QEMU under TCG often
#         completes each request before the guest sends the next)
#   err    8 MiB, blkdebug EIO on reads of sector 4096
#   fs    64 MiB, ext4 made by the guest
# While the guest runs, a QMP helper resizes "data" and throttles "small"
# when the guest asks.
# Afterwards the host checks what the guest wrote is in the images, byte for
# byte, and that the guest's ext4 is clean.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/host-lib.sh
host_start virtio

# The pattern: every 512-byte sector holds its sector number (16 hex digits)
# and a fixed text, so a misplaced sector shows up.
python3 - "$img/data.img" <<'PY'
import sys
with open(sys.argv[1], "wb") as f:
    for s in range(64 * 2048):
        head = b"%016x rvirtio pattern " % s
        f.write((head * (512 // len(head) + 1))[:512])
PY
sha256sum < "$img/data.img" | cut -d' ' -f1 > "$out/data.sha256"
head -c $((8 << 20)) "$img/data.img" > "$img/ro.img"
sha256sum < "$img/ro.img" | cut -d' ' -f1 > "$out/ro.sha256"
truncate -s 64M "$img/small.img" "$img/fs.img"
head -c $((8 << 20)) "$img/data.img" > "$img/err.img"
cat > "$img/blkdebug.conf" <<'CONF'
[inject-error]
event = "read_aio"
errno = "5"
sector = "4096"
once = "off"
CONF

# QMP helper: when the guest drops $out/NAME.req, run that request's QMP
# command and write the reply to $out/NAME.done:
#   resize    block_resize "data" to 96 MiB (a config change interrupt)
#   throttle  rvt-small down to 1 IOPS (block_set_io_throttle), so that the
#             requests in its ring stay there while the guest breaks the
#             device (at 200 IOPS they could all complete in between)
PYTHONPATH=tests python3 - "$out/qmp.sock" "$out" <<'PY' &
import os, sys, time
from qmp import Qmp, done
sock, out = sys.argv[1], sys.argv[2]
limits = {k: 0 for k in ("bps", "bps_rd", "bps_wr", "iops_rd", "iops_wr")}
requests = {
    "resize": {"execute": "block_resize", "arguments": {"device": "data", "size": 96 << 20}},
    "throttle": {"execute": "block_set_io_throttle",
                 "arguments": dict(limits, device="small", iops=1)},
}
# (until this script ends: the debug guest reaches the last part after
# more than 20 minutes)
parent = os.getppid()
while os.getppid() == parent:
    for name, cmd in requests.items():
        req = os.path.join(out, name + ".req")
        if not os.path.exists(req):
            continue
        os.remove(req)
        q = None
        try:
            q = Qmp(sock)
            r = q.cmd(cmd)
        except Exception as e:  # report, never die: the guest waits for an answer
            r = {"error": repr(e)}
        finally:
            if q: q.close()
        done(out, name + ".done", r)
    time.sleep(0.2)
PY
qmp_pid=$!

drive "file=$img/data.img,if=none,id=data,format=raw,discard=unmap,cache=writeback"
dev "virtio-blk-pci,drive=data,serial=rvt-data,num-queues=2"
drive "file=$img/ro.img,if=none,id=ro,format=raw,readonly=on"
dev "virtio-blk-pci,drive=ro,serial=rvt-ro"
drive "file=$img/small.img,if=none,id=small,format=raw,throttling.iops-total=${VIRTIO_SMALL_IOPS:-200}"
dev "virtio-blk-pci,drive=small,serial=rvt-small,queue-size=8,indirect_desc=off"
drive "file=blkdebug:$img/blkdebug.conf:$img/err.img,if=none,id=err,format=raw,werror=report,rerror=report"
dev "virtio-blk-pci,drive=err,serial=rvt-err"
drive "file=$img/fs.img,if=none,id=fs,format=raw"
dev "virtio-blk-pci,drive=fs,serial=rvt-fs"
q+=(--qemu -qmp --qemu "unix:$out/qmp.sock,server=on,wait=off")

scripts/vm.sh --cpus 2 --out "$out" --timeout 900 "${q[@]}" -- tests/guest/virtio.sh \
    > "$out/vm.log" 2>&1
rc=$?
cat "$out/virtio.tap" 2>/dev/null
[[ $rc == 0 ]] || { echo "# guest exit status $rc; console tail:"; tail -n 40 "$out/vm.log" | sed 's/^/#   /'; }

# --- host-side assertions ------------------------------------------------------
echo "# host checks"
if [[ -f $out/written.sha256 ]]; then
    got=$(dd if="$img/data.img" bs=1M skip=32 count=16 status=none | sha256sum | cut -d' ' -f1)
    hcheck "the 16 MiB the guest wrote and flushed are in the image, byte for byte" \
        test "$got" == "$(cat "$out/written.sha256")"
else
    hnot_ok "guest recorded no written.sha256"
fi
got=$(dd if="$img/data.img" bs=1M count=32 status=none | sha256sum | cut -d' ' -f1)
want=$(head -c $((32 << 20)) <(python3 - <<'PY'
import sys
w = sys.stdout.buffer
for s in range(32 * 2048):
    head = b"%016x rvirtio pattern " % s
    w.write((head * (512 // len(head) + 1))[:512])
PY
) | sha256sum | cut -d' ' -f1)
hcheck "the first 32 MiB (only read by the guest) are unchanged" test "$got" == "$want"
hcheck "the read-only image is unchanged" \
    test "$(sha256sum < "$img/ro.img" | cut -d' ' -f1)" == "$(cat "$out/ro.sha256")"
hcheck "data image was resized to 96 MiB by block_resize" \
    test "$(stat -c %s "$img/data.img")" == $((96 << 20))
if [[ -f $out/fs.done ]]; then
    hcheck "e2fsck -fn on the guest's ext4 image is clean" bash -c "e2fsck -fn '$img/fs.img' >/dev/null 2>&1"
else
    hnot_ok "guest did not finish the ext4 test"
fi
echo "# host: $n checks"
grep -q '^not ok' "$out/virtio.tap" 2>/dev/null && rc=1
exit $rc
