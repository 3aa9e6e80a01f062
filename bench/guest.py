#!/usr/bin/python3
"""Guest side of the benchmarks (`make run`, `make bench-full`): run a plan
(bench/plan.py) and append one JSON object per fio run to a results file.

    bench/guest.py PLAN.json RESULTS.jsonl

A plan is a list of groups. A group loads one driver with one set of
parameters (module parameters, configfs attributes, then queue sysfs
attributes such as the scheduler), runs its cells (one fio job each) and
unloads it. Each result records what the device really was (hardware queues
and their types, scheduler, tags, limits, read back from sysfs and debugfs)
next to what was asked, so every row of a report can say which settings it
compares. A load the driver refuses (a mode it does not implement) is
recorded as an error row per cell, and the plan goes on.

Progress goes to stdout (the guest console) as lines starting with "BENCH ".
"""
import glob, json, os, subprocess, sys, time

REPO = os.environ.get("REPO", os.getcwd())
KDIR = os.environ["KDIR"]
MODDIR = os.environ.get("MODDIR", REPO)

KO = {
    "null_blk": f"{KDIR}/drivers/block/null_blk/null_blk.ko",
    "rnull": f"{KDIR}/drivers/block/rnull/rnull_mod.ko",
    "rnull_split": f"{MODDIR}/rnull_split/rnull_split.ko",
    "virtio_blk": f"{KDIR}/drivers/block/virtio_blk.ko",
    "rvirtio_blk": f"{MODDIR}/rvirtio_blk/rvirtio_blk.ko",
}
MODNAME = {"rnull": "rnull_mod"}
RNULL_CFS = "/sys/kernel/config/rnull"


def say(msg):
    print("BENCH " + msg, flush=True)


def sh(*cmd, check=True):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if check and p.returncode:
        raise RuntimeError(f"{' '.join(cmd)}: {p.stdout.strip()}")
    return p.stdout


def rd(path, default=None):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return default


def wr(path, value):
    with open(path, "w") as f:
        f.write(str(value))


def dmesg_tail(n=3):
    return " | ".join(sh("dmesg", check=False).strip().splitlines()[-n:])


def layout(dev):
    """What the block device is, read back from the kernel."""
    q = f"/sys/block/{dev}/queue"
    sched = rd(f"{q}/scheduler", "")
    cur = next((w[1:-1] for w in sched.split() if w.startswith("[")), sched or "none")
    hctx = sorted(glob.glob(f"/sys/kernel/debug/block/{dev}/hctx*"),
                  key=lambda p: int(p.rsplit("hctx", 1)[1]))
    types = [rd(f"{h}/type", "?") for h in hctx]
    tags = None
    if hctx:  # "nr_tags=256" in hctxN/tags
        for l in (rd(f"{hctx[0]}/tags", "") or "").splitlines():
            if l.startswith("nr_tags="):
                tags = int(l.split("=")[1])
    lim = {k: rd(f"{q}/{k}") for k in ("nr_requests", "max_sectors_kb", "max_hw_sectors_kb",
                                       "max_segments", "max_segment_size",
                                       "logical_block_size", "rotational")}
    return {"dev": dev, "hw_queues": len(glob.glob(f"/sys/block/{dev}/mq/*")),
            "hctx_types": types, "tags": tags, "scheduler": cur,
            "bio_based": not os.path.isdir(f"/sys/block/{dev}/mq"), **lim}


EFFECTIVE = ["queue_mode", "submit_queues", "poll_queues", "hw_queue_depth", "irqmode",
             "completion_nsec", "memory_backed", "bs", "blocksize", "size", "gb", "max_sectors",
             "split_clone", "sg_prealloc", "num_request_queues", "queue_depth"]


def effective(kind):
    """The driver settings in force, as the driver itself shows them: C
    modules' parameters in /sys/module; rnull_split's through a configfs
    directory made for the purpose (it starts from the module parameters);
    rnull's device directory."""
    vals = {}
    if kind in ("null_blk", "virtio"):
        mods = ["null_blk"] if kind == "null_blk" else ["virtio_blk"]
        for m in mods:
            for k in EFFECTIVE:
                v = rd(f"/sys/module/{m}/parameters/{k}")
                if v is not None:
                    vals[k] = v
    elif kind == "rnull_split":
        d = "/sys/kernel/config/rnull_split/bench-probe"
        try:
            os.mkdir(d)
        except OSError:
            return vals
        for k in EFFECTIVE:
            v = rd(f"{d}/{k}")
            if v is not None:
                vals[k] = v
        os.rmdir(d)
    elif kind == "rnull":
        for k in EFFECTIVE:
            v = rd(f"{RNULL_CFS}/rnull0/{k}")
            if v is not None:
                vals[k] = v
    return vals


class Loaded:
    """One driver loaded with one group's settings; .devs maps a role to a disk."""

    def __init__(self, g):
        self.g = g
        self.kind = g["driver"]
        self.devs = {}
        getattr(self, "load_" + self.kind, self.load_plain)()
        self.effective = effective(self.kind)
        for dev in self.devs.values():
            self.queue_settings(dev, g.get("queue", {}))

    @staticmethod
    def queue_settings(dev, settings):
        for k, v in settings.items():
            p = f"/sys/block/{dev}/queue/{k}"
            if k == "scheduler" and not os.path.exists(f"/sys/block/{dev}/mq"):
                continue  # a bio-based disk has no scheduler to choose
            try:
                wr(p, v)
            except OSError as e:
                raise RuntimeError(f"{p} <- {v}: {e}")

    def params(self):
        return [f"{k}={v}" for k, v in self.g.get("params", {}).items()]

    def load_plain(self):  # null_blk, rnull_split
        sh("insmod", KO[self.kind], *self.params())
        self.devs["dev"] = {"null_blk": "nullb0", "rnull_split": "rnullb0"}[self.kind]
        self.wait_dev(self.devs["dev"])

    def load_rnull(self):
        sh("insmod", KO["rnull"], *self.params())
        d = f"{RNULL_CFS}/rnull0"
        os.mkdir(d)
        try:
            for k, v in self.g.get("configfs", {}).items():
                wr(f"{d}/{k}", v)
            wr(f"{d}/power", 1)
        except OSError as e:
            os.rmdir(d)
            sh("rmmod", "rnull_mod", check=False)
            raise RuntimeError(f"rnull configfs: {e}")
        self.devs["dev"] = "rnull0"
        self.wait_dev("rnull0")

    def load_virtio(self):
        """rvirtio_blk binds every virtio disk; the one with serial bench-c
        is handed to C virtio_blk, bench-r stays with rvirtio_blk."""
        sh("insmod", KO["rvirtio_blk"], *self.params())
        c = self.wait_serial("rvd", "bench-c")
        v = os.path.basename(os.path.realpath(f"/sys/block/{c}/device"))
        wr("/sys/bus/virtio/drivers/rvirtio_blk/unbind", v)
        if not os.path.isdir("/sys/module/virtio_blk"):
            sh("insmod", KO["virtio_blk"])
        if not os.path.exists(f"/sys/bus/virtio/drivers/virtio_blk/{v}"):
            wr("/sys/bus/virtio/drivers/virtio_blk/bind", v)
        self.devs["rust"] = self.wait_serial("rvd", "bench-r")
        self.devs["c"] = self.wait_serial("vd", "bench-c")

    @staticmethod
    def wait_dev(dev):
        for _ in range(200):
            if os.path.exists(f"/dev/{dev}"):
                return
            time.sleep(0.05)
        raise RuntimeError(f"/dev/{dev} did not appear")

    @staticmethod
    def wait_serial(prefix, serial):
        for _ in range(200):
            for d in glob.glob(f"/sys/block/{prefix}*"):
                if rd(f"{d}/serial") == serial and os.path.exists("/dev/" + os.path.basename(d)):
                    return os.path.basename(d)
            time.sleep(0.05)
        raise RuntimeError(f"no {prefix}* disk with serial {serial}")

    def unload(self):
        if self.kind == "rnull":
            wr(f"{RNULL_CFS}/rnull0/power", 0)
            os.rmdir(f"{RNULL_CFS}/rnull0")
            rmmod("rnull_mod")
        elif self.kind == "virtio":
            rmmod("rvirtio_blk")
            rmmod("virtio_blk")
        else:
            rmmod(MODNAME.get(self.kind, self.kind))


def rmmod(name, tries=50):
    """rmmod `name`, again while it is in use: an io_uring fio's last
    reference to the disk goes with its ring, which the kernel tears down
    in a work item after fio has exited (a C null_blk unload once failed
    so, right after a randwrite 1 MiB QD128x2 io_uring cell)."""
    for i in range(tries):
        try:
            sh("rmmod", name)
            return
        except RuntimeError as e:
            if "in use" not in str(e) or i == tries - 1:
                raise
            time.sleep(0.1)


FIO_GLOBAL = ["direct=1", "group_reporting", "randrepeat=1", "norandommap", "disk_util=0"]


HUGEPAGE = 2 << 20


def huge_pages(c):
    """Huge pages a cell's fio buffers take (`"iomem": "mmaphuge"`), 0 for
    none: fio maps iodepth x bs per job, rounded up, plus its alignment,
    and one more: alone in its fio, randwrite 256 KiB QD8x1 (2 MiB of
    buffers) crashed fio (SIGSEGV) with 2 huge pages reserved and ran with
    more."""
    if c.get("iomem") != "mmaphuge":
        return 0
    return (-(-c["qd"] * size_bytes(c["bs"]) // HUGEPAGE) + 2) * c["jobs"]


# The file behind fio's buffers for the cells that ask for shared buffers
# (`"iomem": "shared"`), on the guest's tmpfs.
SHARED_BUFFERS = "/tmp/fio-buffers"


def shared_buffers(cells):
    """Makes SHARED_BUFFERS big enough for the cells that ask (`"iomem":
    "shared"`), its pages written once: every such fio job then maps the
    same file (fio `iomem=mmapshared:FILE` neither truncates nor unlinks a
    file that exists), so C's and Rust's runs of a cell put their I/O in
    the same physical pages, and a request has as many segments with one
    driver as with the other, whatever the runs before left of the memory.
    A job maps iodepth x bs and some alignment; both jobs of a cell map the
    same pages. Returns the fio line for such a cell."""
    need = max([c["qd"] * size_bytes(c["bs"]) + HUGEPAGE for c in cells if c.get("iomem") == "shared"],
               default=0)
    have = os.path.getsize(SHARED_BUFFERS) if os.path.exists(SHARED_BUFFERS) else 0
    if need > have:
        # Appended, so that the pages of the part that exists stay as they are.
        with open(SHARED_BUFFERS, "ab") as f:
            f.write(bytes(need - have))
    return [f"iomem=mmapshared:{SHARED_BUFFERS}"]


def iomem(cells):
    """fio's buffers in huge pages for the cells that ask (`"iomem":
    "mmaphuge"`): then every I/O's buffer is physically contiguous, and the
    segments per request no longer depend on what earlier runs left of the
    memory. Enough huge pages for all of `cells` (one fio process) are
    reserved first; if the kernel cannot give them, the cells fail (their
    rows record the error) rather than running on small pages. The cells
    that ask for shared buffers (`"iomem": "shared"`) get the same pages
    every run (`shared_buffers`). Returns the fio lines of each cell."""
    shared = shared_buffers(cells)
    need = sum(huge_pages(c) for c in cells)
    have = int(rd("/proc/sys/vm/nr_hugepages", "0"))
    if need > have:
        try:
            wr("/proc/sys/vm/nr_hugepages", need)
        except OSError as e:
            raise RuntimeError(f"nr_hugepages <- {need}: {e}")
        have = int(rd("/proc/sys/vm/nr_hugepages", "0"))
        if have < need:
            raise RuntimeError(f"only {have} of {need} huge pages for fio's buffers")
    return [["iomem=mmaphuge", f"hugepage-size={HUGEPAGE}"] if huge_pages(c)
            else shared if c.get("iomem") == "shared" else [] for c in cells]


def pinned(c):
    """fio lines that pin a cell's jobs one per CPU, for the cells that ask
    (`"pin": true`, NULL_PIN=1 in bench/plan.py): job i runs on CPU i."""
    if not c.get("pin"):
        return []
    return [f"cpus_allowed=0-{os.cpu_count() - 1}", "cpus_allowed_policy=split"]


def ctx_per_io(job, d):
    """The fio jobs' context switches (fio's "ctx", summed over a group's
    jobs, ramp included) per I/O they issued: a QD1 psync job that sleeps
    for every I/O has about 1."""
    ios = d.get("total_ios") or 0
    return round(job.get("ctx", 0) / ios, 3) if ios else None


def fio(jobs, runtime=None, ramp=None):
    """Run the cells [(dev, cell), ...] one after the other in one fio
    process (a section per cell, each its own stonewalled group: fio starts
    once, the costly part in a guest), return one result per cell."""
    lines = ["[global]"] + FIO_GLOBAL
    if runtime:
        lines += ["time_based", f"runtime={runtime}ms", f"ramp_time={ramp}ms"]
    mem = iomem([c for _, c in jobs])
    for i, (dev, c) in enumerate(jobs):
        lines += [f"[cell{i}]", "stonewall", "new_group", f"filename=/dev/{dev}", f"rw={c['rw']}",
                  f"bs={c['bs']}", f"ioengine={c['engine']}", f"iodepth={c['qd']}",
                  f"numjobs={c['jobs']}", f"size={c.get('size', '256M')}"] + mem[i] + pinned(c)
    with open("/tmp/cells.fio", "w") as f:
        f.write("\n".join(lines) + "\n")
    p = subprocess.run(["fio", "--output-format=json", "--output=/tmp/cells.json", "--eta=never",
                        "/tmp/cells.fio"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode:
        raise RuntimeError(f"fio: {p.stdout.strip()[-300:]}")
    text = open("/tmp/cells.json").read()
    # fio writes its warnings ("fio: ...") into the output file, before the JSON
    res = json.loads(text[text.index("{"):])["jobs"]
    if len(res) != len(jobs):
        raise RuntimeError(f"fio reported {len(res)} groups for {len(jobs)} cells")
    out = []
    for (dev, c), j in zip(jobs, res):
        d = j["write" if "write" in c["rw"] else "read"]
        out.append({"iops": d["iops"], "MBps": d["bw_bytes"] / 1e6, "total_ios": d["total_ios"],
                    "runtime_ms": d["runtime"], "lat_ns_mean": d["lat_ns"]["mean"],
                    "usr_cpu": j["usr_cpu"], "sys_cpu": j["sys_cpu"], "ctx_per_io": ctx_per_io(j, d)})
    return out


FULL_QUEUES = 8  # a measurement completes at least this many queue-fulls of I/O
LONGEST = 16     # times the plan's runtime, at most


def long_enough(dev, cell, r, runtime, ramp):
    """A deep queue of slow I/Os (1 MiB copies at QD128x2) completes few
    queue-fulls in the plan's runtime, and the I/Os in flight at its ends
    weigh in: measure such a cell again for long enough."""
    need = FULL_QUEUES * cell["qd"] * cell["jobs"]
    if r["total_ios"] >= need:
        return r
    f = min(LONGEST, -(-need // max(r["total_ios"], 1)))
    r2 = fio([(dev, cell)], runtime * f, ramp)[0]
    r2["short_run"] = {k: r[k] for k in ("iops", "total_ios", "runtime_ms")}
    return r2


def io_bytes(dev):
    """Bytes the disk has served so far, read while fio runs: rnull_split's
    own debugfs counter (it counts bio-mode disks too, which keep no
    diskstats), else the disk's diskstats (sectors read + written)."""
    v = rd(f"/sys/kernel/debug/rnull_split/{dev}/bytes")
    if v is not None:
        return int(v)
    if rd(f"/sys/block/{dev}/queue/iostats") != "1":
        raise RuntimeError(f"{dev}: no I/O counter to measure a window with (iostats off)")
    f = rd(f"/sys/block/{dev}/stat").split()
    return (int(f[2]) + int(f[6])) * 512


def size_bytes(s):
    m = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    s = str(s).lower()
    return int(s[:-1]) * m[s[-1]] if s[-1] in m else int(s)


def fio_start(dev, c):
    """Start one cell alone in its own fio process, running until stopped."""
    lines = ["[global]"] + FIO_GLOBAL + ["time_based", "runtime=3600s",
             "[cell0]", f"filename=/dev/{dev}", f"rw={c['rw']}", f"bs={c['bs']}",
             f"ioengine={c['engine']}", f"iodepth={c['qd']}", f"numjobs={c['jobs']}",
             f"size={c.get('size', '256M')}"] + iomem([c])[0] + pinned(c)
    with open("/tmp/window.fio", "w") as f:
        f.write("\n".join(lines) + "\n")
    return subprocess.Popen(["fio", "--output-format=json", "--output=/tmp/window.json",
                             "--eta=never", "/tmp/window.fio"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


# fio's exit status once SIGINT stopped it: 128 (its signal handler's
# exit value), or 0 if its jobs had ended; a crash shows as -signal.
FIO_SIGINT_EXITS = (0, 128)


def fio_result(p, c):
    """Stop a fio started by fio_start (SIGINT: it ends its jobs and reports)."""
    p.send_signal(2)
    outp = p.communicate(timeout=600)[0]
    if p.returncode not in FIO_SIGINT_EXITS:
        # The report may still be whole (a crash in fio's teardown): keep
        # the cell, but say so, with the kernel's word on it.
        say(f"fio exited with {p.returncode} after SIGINT [dmesg: {dmesg_tail(2)}]")
    try:
        text = open("/tmp/window.json").read()
        j = json.loads(text[text.index("{"):])["jobs"][0]
    except (OSError, ValueError, IndexError) as e:
        raise RuntimeError(f"fio: no report ({e}): {outp.strip()[-300:]}")
    d = j["write" if "write" in c["rw"] else "read"]
    return {"fio_iops": d["iops"], "lat_ns_mean": d["lat_ns"]["mean"],
            "usr_cpu": j["usr_cpu"], "sys_cpu": j["sys_cpu"], "fio_exit": p.returncode,
            "ctx_per_io": ctx_per_io(j, d)}


IRQ_KINDS = ("LOC", "RES", "CAL")  # local timer, reschedule IPI, function call IPI


def irq_counts():
    """Per-CPU counts of the interrupts in IRQ_KINDS (/proc/interrupts)."""
    out = {}
    for line in (rd("/proc/interrupts", "") or "").splitlines():
        f = line.split()
        if f and f[0].rstrip(":") in IRQ_KINDS:
            out[f[0].rstrip(":")] = [int(x) for x in f[1:] if x.isdigit()]
    return out


def irq_delta(a, b):
    return {k: [y - x for x, y in zip(a[k], b[k])] for k in a if k in b}


def windowed(dev, cell, runtime, ramp):
    """Measure a multi-job cell in a window of guest time. fio starts its
    jobs one after the other, and in icount mode starting one costs
    milliseconds of guest time, so fio's summed per-job IOPS mix windows
    that do not line up (the 2-job cells swung 0.85-1.27x from that alone).
    Here fio runs alone; once the disk has served its first I/O, a ramp and
    a margin pass (every job is up), then the disk's own byte counter is read
    at both ends of a window of `runtime` ms, longer if needed for
    FULL_QUEUES queue-fulls: IOPS = bytes / bs / window."""
    bs = size_bytes(cell["bs"])
    b0 = io_bytes(dev)
    p = fio_start(dev, cell)
    try:
        t = time.monotonic()
        while io_bytes(dev) == b0:
            if p.poll() is not None or time.monotonic() - t > 60:
                raise RuntimeError(f"fio did no I/O on {dev}: {p.stdout.read().strip()[-300:]}")
            time.sleep(0.005)
        time.sleep((ramp + max(ramp, 100)) / 1000)
        # The interrupt counts are read outside the window (reading them
        # costs guest instructions), once at each end.
        i1 = irq_counts()
        b1, t1 = io_bytes(dev), time.monotonic()
        need = FULL_QUEUES * cell["qd"] * cell["jobs"] * bs
        time.sleep(runtime / 1000)
        while True:
            b2, t2 = io_bytes(dev), time.monotonic()
            if b2 - b1 >= need or t2 - t1 >= LONGEST * runtime / 1000:
                break
            time.sleep(runtime / 1000)
        i2 = irq_counts()
    except Exception:
        p.kill()
        p.wait()
        raise
    r = fio_result(p, cell)
    ios = (b2 - b1) / bs
    r.update(iops=ios / (t2 - t1), MBps=(b2 - b1) / (t2 - t1) / 1e6, total_ios=round(ios),
             runtime_ms=round((t2 - t1) * 1000), window="counter",
             irqs=irq_delta(i1, i2))
    return r


WINDOW_RUNS = 3  # fio runs per multi-job cell; the median counts


def tag_starved(cell, lay):
    """Whether a cell keeps more requests in flight than the queue has
    (`nr_requests`): each I/O is ceil(bs / max_sectors_kb) requests. Then
    submitters wait for tags, io_uring hands the waits to its worker
    threads, and how those are scheduled differs from one fio run to the
    next (1 MiB QD128: +-1.5% on either driver, where a cell that never
    waits repeats within 0.1%)."""
    try:
        per_io = -(-size_bytes(cell["bs"]) // (int(lay["max_sectors_kb"]) * 1024))
        return not lay["bio_based"] and cell["qd"] * cell["jobs"] * per_io > int(lay["nr_requests"])
    except (KeyError, TypeError, ValueError):
        return False


def measure(dev, cell, r, runtime, ramp, lay):
    """The result of a cell that ran in a batch, or of its own measurement
    where a batch's figures would not do (multi-job cells, short runs).
    How two jobs' I/Os interleave on the two vCPUs differs from one fio run
    to the next (at irqmode=1 QD32x2: +-1.5%), so a multi-job cell is the
    median of WINDOW_RUNS windowed runs; all of them are recorded
    (`window_iops`). So is a one-job cell that waits for tags
    (`tag_starved`): the median of its batch run and WINDOW_RUNS - 1 runs
    of its own (`runs_iops`)."""
    if cell["jobs"] > 1:
        runs = [windowed(dev, cell, cell.get("runtime", runtime), ramp) for _ in range(WINDOW_RUNS)]
        runs.sort(key=lambda x: x["iops"])
        med = dict(runs[len(runs) // 2])
        med["window_iops"] = [round(x["iops"]) for x in runs]
        med["window_irqs"] = [x["irqs"] for x in runs]
        med["tag_starved"] = tag_starved(cell, lay)
        return med
    r = long_enough(dev, cell, r, runtime, ramp)
    if not tag_starved(cell, lay):
        return r
    t = cell.get("runtime", runtime)
    runs = [r] + [long_enough(dev, cell, fio([(dev, cell)], t, ramp)[0], t, ramp)
                  for _ in range(WINDOW_RUNS - 1)]
    runs.sort(key=lambda x: x["iops"])
    med = dict(runs[len(runs) // 2])
    med.update(runs_iops=[round(x["iops"]) for x in runs], tag_starved=True)
    return med


def batches(cells, most=16):
    """Runs of cells that can share one fio process (at most `most`, for
    progress): a cell that changes the queue's settings (sysfs, read back
    before it) runs alone."""
    b = []
    for c in cells:
        if c.get("queue") or len(b) == most:
            if b:
                yield b
            b = []
        if c.get("queue"):
            yield [c]
        else:
            b.append(c)
    if b:
        yield b


def debugfs_counters(path):
    return {os.path.basename(f): rd(f) for f in sorted(glob.glob(f"{path}/*")) if os.path.isfile(f)}


def progress(n, total, g, cell, row, base):
    key = (g.get("view"), cell.get("key"), g.get("sample"))
    desc = (f"{row['view'] or ''} {row['label']} {cell['rw']} {cell['bs']} "
            f"qd{cell['qd']}x{cell['jobs']} {cell['engine']}"
            + "".join(f" {k}={v}" for k, v in g.get("settings", {}).items())
            + "".join(f" {k}={v}" for k, v in cell.get("queue", {}).items()))
    if "error" in row:
        say(f"[{n}/{total}] {desc}: ERROR {row['error'][:160]}")
        return
    lay = row["layout"]
    msg = (f"[{n}/{total}] {desc} (hwq {lay['hw_queues']} {lay['scheduler']}): "
           f"{row['iops']:,.0f} IOPS {row['MBps']:,.1f} MB/s {1e9 / row['iops']:,.0f} ns/IO")
    if cell.get("baseline"):
        base[key] = (row["iops"], row["label"])
    elif key in base:
        msg += f", {row['iops'] / base[key][0]:.3f}x {base[key][1]}"
    say(msg)


def main():
    if sys.argv[1] == "shared-buffers":
        # QD BS: the file for one fio job of that depth and block size, for
        # bench/profile-guest.sh; prints the fio option.
        print(shared_buffers([{"qd": int(sys.argv[2]), "bs": sys.argv[3], "iomem": "shared"}])[0])
        return 0
    plan = json.load(open(sys.argv[1]))
    out = open(sys.argv[2], "a")
    runtime, ramp = plan["runtime_ms"], plan["ramp_ms"]
    groups = plan["groups"]
    total = sum(len(g["cells"]) for g in groups)
    n = 0
    base = {}  # (view, cell key) -> baseline IOPS, for the progress ratios
    say(f"plan {plan.get('name', '?')}: {len(groups)} driver loads, {total} fio runs")
    for g in groups:
        try:
            loaded = Loaded(g)
            err = None
        except Exception as e:
            loaded, err = None, f"{e} [dmesg: {dmesg_tail()}]"
            say(f"load {g['label']} ({g.get('view', '')}) refused: {err}")
        if loaded:
            say(f"{g.get('view')} {g['label']} loaded ({' '.join(f'{k}={v}' for k, v in g.get('settings', {}).items())}): "
                f"{len(g['cells'])} cells")
        spinners = []
        if loaded and g.get("spin"):
            # One SCHED_IDLE busy loop per vCPU: the guest never idles, so
            # icount never jumps guest time to the next timer while QEMU's
            # thread handles a request; waiting costs guest time in
            # proportion to how long QEMU takes instead.
            for c in range(os.cpu_count()):
                spinners.append(subprocess.Popen(["chrt", "--idle", "0", "taskset", "-c", str(c),
                                                  "sh", "-c", "while :; do :; done"]))
        if loaded and g.get("prefill"):
            for dev in loaded.devs.values():
                fio([(dev, {"rw": "write", "bs": "1M", "qd": 1, "jobs": 1, "engine": "psync"})])
        for batch in batches(g["cells"]):
            res, err_b, lay, guest_s = [None] * len(batch), err, {}, None
            if loaded:
                try:
                    for cell in batch:
                        Loaded.queue_settings(loaded.devs[cell.get("role", "dev")], cell.get("queue", {}))
                    lay = {r: layout(d) for r, d in loaded.devs.items()}
                    t = time.monotonic()
                    single = [i for i, c in enumerate(batch) if c["jobs"] == 1]
                    if single:
                        r1 = fio([(loaded.devs[batch[i].get("role", "dev")], batch[i]) for i in single],
                                 batch[0].get("runtime", runtime), ramp)
                        for i, r in zip(single, r1):
                            res[i] = r
                    for i, c in enumerate(batch):
                        role = c.get("role", "dev")
                        res[i] = measure(loaded.devs[role], c, res[i], runtime, ramp, lay[role])
                    guest_s = round((time.monotonic() - t) / len(batch), 3)
                except Exception as e:
                    err_b = f"{e} [dmesg: {dmesg_tail()}]"
            for cell, r in zip(batch, res):
                n += 1
                role = cell.get("role", "dev")
                row = {"plan": plan.get("name"), "view": g.get("view"), "group": g.get("id"),
                       "label": cell.get("label", g["label"]), "driver": g["driver"],
                       "params": g.get("params", {}), "configfs": g.get("configfs", {}),
                       "queue_set": {**g.get("queue", {}), **cell.get("queue", {})},
                       "settings": g.get("settings", {}),
                       **{k: v for k, v in cell.items() if k not in ("queue",)}}
                if "sample" in g:
                    row["sample"] = g["sample"]
                if g.get("spin"):
                    row["spin"] = True
                if r:
                    row.update(r, layout=lay[role], effective=loaded.effective, guest_s=guest_s,
                               batch=len(batch))
                else:
                    row["error"] = err_b
                    if not loaded:
                        row["refused"] = True
                out.write(json.dumps(row) + "\n")
                out.flush()
                progress(n, total, g, cell, row, base)
        for p in spinners:
            p.kill()
            p.wait()
        if loaded:
            for role, dev in loaded.devs.items():
                c = g.get("collect_debugfs") and debugfs_counters(
                    f"/sys/kernel/debug/{g['collect_debugfs']}/{dev}")
                if c:
                    out.write(json.dumps({"plan": plan.get("name"), "counters": c,
                                          "group": g.get("id"), "label": g["label"],
                                          "role": role, "params": g.get("params", {})}) + "\n")
            try:
                loaded.unload()
            except Exception as e:
                say(f"unload {g['label']} failed: {e}")
                return 1
    bad = [l for l in sh("dmesg", check=False).splitlines()
           if any(w in l for w in ("WARNING:", "BUG:", "Oops", "Call Trace"))]
    if bad:
        say("kernel reported: " + " | ".join(bad[:3]))
        return 1
    say("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
