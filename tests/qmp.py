"""QMP client for the host test scripts (tests/host/virtio.sh,
tests/host/virtio_faults.sh), imported by their helpers with
PYTHONPATH=tests."""
import json, os, select, socket, time

class Qmp:
    """One QMP connection; lines read with recv() (no makefile(), whose
    buffer breaks after a timeout and which would keep the socket open:
    QEMU serves one client, so a connection left open fails the next)."""
    def __init__(self, sock):
        self.s = socket.socket(socket.AF_UNIX)
        self.s.connect(sock)
        self.buf = b""
        self.events = []
        self.line(30)  # greeting
        self.cmd({"execute": "qmp_capabilities"})

    def line(self, timeout):
        end = time.time() + timeout
        while b"\n" not in self.buf:
            left = end - time.time()
            if left <= 0 or not select.select([self.s], [], [], left)[0]:
                return None
            data = self.s.recv(65536)
            if not data:
                raise EOFError("QMP connection closed")
            self.buf += data
        l, self.buf = self.buf.split(b"\n", 1)
        return json.loads(l)

    def cmd(self, c):
        self.s.sendall(json.dumps(c).encode() + b"\n")
        while True:
            r = self.line(60)
            if r is None:
                raise TimeoutError("no answer to %s" % c["execute"])
            if "event" in r:
                self.events.append(r)
            elif "return" in r or "error" in r:
                return r

    def close(self):
        self.s.close()

def done(out, name, obj):
    """Writes obj as JSON to out/name, atomically (the guest polls for it)."""
    tmp = os.path.join(out, name + ".tmp")
    with open(tmp, "w") as f:
        json.dump(obj, f)
    os.rename(tmp, os.path.join(out, name))
