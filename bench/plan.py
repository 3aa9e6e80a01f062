#!/usr/bin/python3
"""The benchmark plans: which driver loads, with which settings, run which
fio cells. bench/guest.py runs a plan in the guest; scripts/report.py turns
its results into tables.

    bench/plan.py null|virtio|wallclock subset|full [RUNTIME_MS]   > PLAN.json
    bench/plan.py interleave - [RUNTIME_MS]                   > PLAN.json
    bench/plan.py shard PLAN.json N     (PLAN-0.json..: one plan per guest)
    bench/plan.py confirm PLAN.json RESULTS.jsonl [THRESHOLD]  > CONFIRM.json
                                        (the same-settings cells below THRESHOLD
                                        x C, 0.99, with C's, to run again)

null       rnull_split (queue_mode=2 and 0), C null_blk and 7.3's rnull in
           two views, then the seed curve (bio mode, fast vs deep clones).
  "same"     every driver with the same settings: 512 B blocks, one
             submission queue (C: poll_queues=0, so 1 hardware queue), 256
             tags, completion_nsec=10000, scheduler none (set in sysfs), and
             the cell's irqmode / memory_backed. rnull takes what its configfs
             has (blocksize, size, irqmode; 1 queue of 256 tags built in): it
             is left out where memory_backed=1 and refuses irqmode=2. A load a
             driver refuses is recorded as such (so a mode implemented later
             shows up by itself).
  "defaults" each driver as `insmod` (rnull: mkdir + power=1) leaves it.
  "seeds"    1 MiB sequential reads, max_sectors_kb swept.
virtio     rvirtio_blk (runtime-chained SG, then sg_prealloc=1) vs C
           virtio_blk on two QEMU null-co disks, 2 hardware queues each,
           scheduler none, libaio, 2 jobs x QD32.
wallclock  a few "same" cells, SAMPLES interleaved loads per driver, for
           multi-threaded TCG (wall-clock time; min/median/max).
interleave C null_blk and rnull_split at irqmode=2 with completion_nsec
           swept around 10000, randread 4 KiB QD1 with one and two jobs
           (scripts/run.sh interleave).

"subset" is `make run`'s (minutes); "full" is the whole matrix
(`make bench-full`): randread/randwrite x 512 B..1 MiB x QD 1..128 x 1-2 jobs
x irqmode 0-2 x memory_backed 0-1.
"""
import json, os, subprocess, sys

RW = ["randread", "randwrite"]
BS = ["512", "4k", "32k", "256k", "1M"]
QD = [1, 8, 32, 128]
JOBS = [1, 2]
IRQ = [0, 1, 2]
MEM = [0, 1]
MSKB = [4, 16, 64, 124, 512]
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def engine(qd):
    # QD1: a plain synchronous job, so guest ns per I/O is the cost of one
    # I/O; deeper queues through io_uring.
    return "psync" if qd == 1 else "io_uring"


def cell(rw, bs, qd, jobs, key_extra="", **kw):
    c = {"rw": rw, "bs": bs, "qd": qd, "jobs": jobs, "engine": kw.pop("engine", engine(qd))}
    c["key"] = f"{rw} {bs} qd{qd}x{jobs}{key_extra}"
    c.update(kw)
    return c


def has_param(ko, name):
    out = subprocess.run(["modinfo", "-p", ko], capture_output=True, text=True).stdout
    return any(l.split(":", 1)[0] == name for l in out.splitlines())


RNULL_SPLIT_POLL = has_param(f"{REPO}/rnull_split/rnull_split.ko", "poll_queues")
SAME = {"gb": 4, "bs": 512, "submit_queues": 1, "hw_queue_depth": 256, "completion_nsec": 10000}


def same_group(label, irq, mem, cells):
    """One driver in the "same" view, or None where it cannot take the settings."""
    s = {"irqmode": irq, "memory_backed": mem}
    if label == "null_blk":
        g = {"driver": "null_blk", "params": {**SAME, "queue_mode": 2, "poll_queues": 0, **s}}
    elif label in ("rnull_split", "rnull_split-bio"):
        # (a load the driver refuses is recorded as refused, so a mode it
        # gains later shows up by itself)
        qm = 2 if label == "rnull_split" else 0
        p = {**SAME, "queue_mode": qm, **s}
        if RNULL_SPLIT_POLL:
            p["poll_queues"] = 0
        g = {"driver": "rnull_split", "params": p}
    elif label == "rnull":
        if mem:
            return None  # 7.3's rnull has no memory backing to ask for (irqmode=2 it refuses)
        g = {"driver": "rnull", "configfs": {"blocksize": 512, "size": 4096, "irqmode": irq}}
    # fio's buffers in huge pages (NULL_HUGE=0: small pages). With small
    # pages how physically contiguous a run's buffers are decides how many
    # segments each large I/O has, and the per-page work (pinning, bvecs,
    # split walks) is most of a 1 MiB I/O's cost: 1 MiB randwrite QD128x2
    # spread 4,014-4,569 IOPS over nine runs of one load, and 16,658-16,960
    # in huge pages. That is the layout's noise, not the driver's.
    huge = {"iomem": "mmaphuge"} if os.environ.get("NULL_HUGE", "1") == "1" else {}
    # NULL_PIN=1: a multi-job cell's jobs pinned one per vCPU (fio's
    # cpus_allowed_policy=split; io_uring's workers take their job's CPU),
    # so that the scheduler cannot put both on one vCPU or move them.
    pin = {"pin": True} if os.environ.get("NULL_PIN", "0") == "1" else {}
    g.update(label=label, view="same", settings={"irqmode": irq, "memory_backed": mem},
             queue={"scheduler": "none"}, prefill=bool(mem),
             cells=[dict(c, key=c["key"] + f" irq{irq} mem{mem}", baseline=label == "null_blk", **huge,
                         **(pin if c["jobs"] > 1 else {}))
                    for c in cells])
    g["id"] = f"same-{label}-irq{irq}-mem{mem}"
    return g


NULL_LABELS = ["null_blk", "rnull_split", "rnull_split-bio", "rnull"]


def same_view(kind):
    groups = []
    if kind == "full":
        combos = {(irq, mem): [cell(rw, bs, qd, j) for rw in RW for bs in BS for qd in QD for j in JOBS]
                  for irq in IRQ for mem in MEM}
        repeat = [("randread", "4k", 1, 1, 0, 0), ("randwrite", "1M", 32, 2, 1, 1),
                  ("randread", "512", 128, 2, 2, 0)]
    else:
        combos = {
            (0, 0): [cell("randread", bs, 1, 1) for bs in BS]
                    + [cell("randread", "4k", qd, 1) for qd in (8, 32, 128)]
                    + [cell("randread", "4k", 1, 2), cell("randread", "4k", 32, 2)]
                    + [cell("randwrite", "4k", 1, 1), cell("randwrite", "4k", 32, 1),
                       cell("randwrite", "256k", 1, 1)],
            (1, 0): [cell("randread", "4k", 1, 1), cell("randread", "4k", 32, 1),
                     cell("randread", "4k", 32, 2), cell("randwrite", "4k", 32, 1),
                     cell("randread", "256k", 8, 1)],
            (2, 0): [cell("randread", "4k", 1, 1), cell("randread", "4k", 32, 1)],
            (0, 1): [cell("randread", "4k", 1, 1), cell("randwrite", "4k", 1, 1),
                     cell("randwrite", "4k", 32, 1), cell("randread", "256k", 1, 1),
                     cell("randwrite", "256k", 1, 1)],
        }
        repeat = [("randread", "4k", 1, 1, 0, 0), ("randread", "4k", 32, 2, 0, 0),
                  ("randwrite", "256k", 1, 1, 0, 1), ("randread", "4k", 32, 1, 1, 0)]
    for (irq, mem), cells in combos.items():
        reps = [cell(rw, bs, qd, j, rep=2) for rw, bs, qd, j, i, m in repeat if (i, m) == (irq, mem)]
        for label in NULL_LABELS:
            # Each repeated cell runs once more at the end of its load, after
            # the others: repeatability across the state they leave.
            g = same_group(label, irq, mem, cells + (reps if label in ("null_blk", "rnull_split") else []))
            if g:
                groups.append(g)
    return groups


def defaults_view(kind):
    cells = [cell("randread", "4k", 1, 1), cell("randread", "4k", 32, 1),
             cell("randread", "4k", 32, 2), cell("randwrite", "4k", 32, 1)]
    if kind == "full":
        cells += [cell("randread", "512", 1, 1), cell("randread", "4k", 128, 2),
                  cell("randread", "256k", 8, 1), cell("randwrite", "1M", 8, 1)]
    groups = []
    for label, g in (("null_blk", {"driver": "null_blk"}),
                     ("rnull_split", {"driver": "rnull_split"}),
                     ("rnull", {"driver": "rnull"})):
        cs = [c for c in cells if not (label == "rnull" and c["bs"] == "512")]  # rnull: 4 KiB blocks
        g.update(id=f"defaults-{label}", label=label, view="defaults", settings={},
                 cells=[dict(c, baseline=label == "null_blk") for c in cs])
        groups.append(g)
    return groups


def seeds():
    """The 2015 seed: rnull_split splitting 1 MiB reads itself (bio mode),
    fast clones (bio_split) vs deep clones, against max_sectors_kb; the
    request-based drivers at the same limits for reference. max_sectors=2048
    (1 MiB) so that max_sectors_kb can go up to 512."""
    base = {"gb": 4, "bs": 512, "submit_queues": 1, "hw_queue_depth": 256,
            "irqmode": 0, "memory_backed": 0, "max_sectors": 2048}
    cells = lambda label: [cell("read", "1M", 1, 1, key_extra=f" msk{m}", queue={"max_sectors_kb": m},
                                baseline=label == "bio-deep") for m in MSKB]
    groups = []
    for label, drv, p in (("bio-deep", "rnull_split", {"queue_mode": 0, "split_clone": "deep"}),
                          ("bio-fast", "rnull_split", {"queue_mode": 0, "split_clone": "fast"}),
                          ("rnull_split", "rnull_split", {"queue_mode": 2}),
                          ("null_blk", "null_blk", {"queue_mode": 2, "poll_queues": 0})):
        groups.append({"id": f"seeds-{label}", "driver": drv, "label": label, "view": "seeds",
                       "params": {**base, **p}, "queue": {"scheduler": "none"},
                       "settings": {"irqmode": 0, "memory_backed": 0}, "cells": cells(label)})
    return groups


def virtio(kind, samples):
    if kind == "subset":
        wl = [("randread", "512"), ("randread", "4k"), ("randread", "256k"), ("randwrite", "4k")]
    else:
        wl = [(rw, bs) for rw in RW for bs in BS]
    modes = [("chained", {}), ("prealloc", {"sg_prealloc": 1})]
    groups = []
    for s in range(samples):
        for mode, params in (modes if s % 2 == 0 else modes[::-1]):
            label = "rvirtio_blk" + ("-prealloc" if params else "")
            cells = []
            for i, (rw, bs) in enumerate(wl):
                c = cell(rw, bs, 32, 2, engine="libaio")
                if os.environ.get("VIRTIO_HUGE") == "1":
                    # fio's buffers in huge pages (bench/guest.py iomem):
                    # one segment per I/O whatever earlier runs left of the
                    # memory, and so no chained SG tables either
                    c["iomem"] = "mmaphuge"
                elif os.environ.get("VIRTIO_SHARED", "1") == "1":
                    # every run's buffers in the same small pages
                    # (bench/guest.py shared_buffers, the default): both
                    # drivers' requests get the same segments, and large
                    # ones still chain
                    c["iomem"] = "shared"
                pair = [dict(c, role="c", label="virtio_blk", baseline=True),
                        dict(c, role="rust", label=label)]
                # Which driver runs a cell first alternates: a fio run finds
                # the memory the one before it left (how contiguous its
                # buffers' pages are sets the segments per request), and
                # the first of a pair ran measurably faster at 256 KiB.
                cells += pair if (s + i) % 2 == 0 else pair[::-1]
            groups.append({"id": f"virtio-{mode}-s{s + 1}", "driver": "virtio", "label": label,
                           "view": "virtio", "params": params, "queue": {"scheduler": "none"},
                           "settings": {"sg": mode}, "sample": s + 1,
                           "collect_debugfs": "rvirtio_blk" if s == 0 else None, "cells": cells,
                           "spin": os.environ.get("VIRTIO_SPIN") == "1"})
    return groups


def wallclock(kind, samples):
    cells = [cell("randread", "4k", 1, 1), cell("randread", "4k", 32, 2)]
    if kind == "full":
        cells += [cell("randread", "4k", 32, 1), cell("randwrite", "256k", 8, 1)]
    labels = ["null_blk", "rnull_split", "rnull"]
    groups = []
    for s in range(samples):
        # The order rotates from sample to sample: none is always first.
        for label in labels[s % 3:] + labels[:s % 3]:
            g = same_group(label, 0, 0, cells)
            g.update(id=f"wall-{label}-s{s}", view="wallclock", sample=s + 1, prefill=False)
            groups.append(g)
    return groups


# interleave: completion_nsec around the matrix's 10000 (INTERLEAVE_NSEC,
# comma-separated, for other points).
INTERLEAVE_NSEC = [int(x) for x in os.environ.get(
    "INTERLEAVE_NSEC", "7000,8000,9000,10000,11000,12000,13000").split(",")]


def interleave():
    """C null_blk and rnull_split with the same settings at irqmode=2,
    completion_nsec swept (INTERLEAVE_NSEC), randread 4 KiB psync QD1 with
    one job and with two, memory-backed and not. In icount two jobs' 10 us
    timers fall against the vCPUs' turns, and whether a job finds its I/O
    done before it sleeps decides a two-job cell's IOPS more than the
    driver's instructions do; the sweep shows how much (scripts/report.py
    interleave)."""
    groups = []
    cells = [cell("randread", "4k", 1, 1), cell("randread", "4k", 1, 2)]
    for mem in MEM:
        for nsec in INTERLEAVE_NSEC:
            for label in ("null_blk", "rnull_split"):
                g = same_group(label, 2, mem, cells)
                g["params"]["completion_nsec"] = nsec
                g["settings"] = dict(g["settings"], completion_nsec=nsec)
                g["view"] = "interleave"
                g["id"] = f"interleave-{label}-mem{mem}-c{nsec}"
                for c in g["cells"]:
                    c["key"] += f" c{nsec}"
                groups.append(g)
    return groups


def shard(path, n):
    """Cut the plan in PATH into n plans, PATH-0.json.., for n guests that
    run side by side (icount's figures do not depend on the host's load).
    The loads of one setting stay together, so that every ratio compares
    drivers measured in the same guest; the heaviest settings go first to
    the least loaded shard. Prints the shard files."""
    plan = json.load(open(path))
    sets = {}
    for g in plan["groups"]:
        k = json.dumps([g.get("view"), g.get("settings")], sort_keys=True)
        sets.setdefault(k, []).append(g)
    cost = lambda gs: sum(3 if c["jobs"] > 1 else 1 for g in gs for c in g["cells"])
    shards = [[] for _ in range(max(1, n))]
    for gs in sorted(sets.values(), key=cost, reverse=True):
        min(shards, key=lambda s: cost(s)).extend(gs)
    base = path[:-5] if path.endswith(".json") else path
    for i, gs in enumerate(s for s in shards if s):
        # The plan's own order within a shard.
        gs.sort(key=plan["groups"].index)
        with open(f"{base}-{i}.json", "w") as f:
            json.dump(dict(plan, groups=gs), f, indent=1)
        print(f"{base}-{i}.json")


def abba(groups):
    """The same-settings loads of `groups` in ABBA passes: each setting's
    loads run twice, forwards and then backwards (C, Rust a, Rust b, Rust b,
    Rust a, C; a load's cells backwards too, so that the whole is a
    palindrome), every cell marked with its "pass" (1, 2). A driver's cell
    then counts with the mean of its two passes (scripts/report.py). A guest
    drifts as it runs (C's 256 KiB QD8x2 reads, loaded again and again in
    one guest: 51,400, 50,737, 50,564 IOPS), and the driver loaded later in
    a guest took all of that drift; with the passes every driver's cell sits
    at the same mean position, so a linear drift cancels. Other groups
    (defaults view, seeds) stay as they are, after them."""
    by_setting, rest = {}, []
    for g in groups:
        if g.get("view") != "same":
            rest.append(g)
            continue
        k = json.dumps([g.get("view"), g.get("settings")], sort_keys=True)
        by_setting.setdefault(k, []).append(g)
    out = []
    for gs in by_setting.values():
        out += [dict(g, cells=[dict(c, **{"pass": 1}) for c in g["cells"]]) for g in gs]
        out += [dict(g, cells=[dict(c, **{"pass": 2}) for c in reversed(g["cells"])],
                     id=g["id"] + "-pass2") for g in reversed(gs)]
    return out + rest


def confirm(plan_path, results_path, threshold):
    """A plan of the same-settings cells of PLAN whose result in RESULTS
    (bench/guest.py's JSON lines) was below THRESHOLD x C null_blk: for
    every setting with such a cell, the C group and each Rust group that
    fell below, with only those cells, to run again in a fresh guest."""
    plan = json.load(open(plan_path))
    rows = [json.loads(l) for l in open(results_path) if l.strip()]
    iops = {(r["label"], r["key"]): r["iops"] for r in rows
            if r.get("view") == "same" and r.get("iops") and "error" not in r}
    low = {}  # key -> labels below
    for (label, key), v in iops.items():
        c = iops.get(("null_blk", key))
        if label != "null_blk" and c and v / c < threshold:
            low.setdefault(key, set()).add(label)
    # CONFIRM_IDS (a substring of the group ids, e.g. "irq2-mem0"),
    # CONFIRM_LABELS (Rust drivers, comma-separated, e.g. "rnull_split") and
    # CONFIRM_CELLS (cell keys, comma-separated, e.g. "randread 32k qd32x2
    # irq1 mem0") narrow the plan down to some of those groups and cells,
    # for a quicker look or more rounds of the undecided ones.
    only_ids = os.environ.get("CONFIRM_IDS", "")
    labels = [l for l in os.environ.get("CONFIRM_LABELS", "").split(",") if l]
    cells = [k.strip() for k in os.environ.get("CONFIRM_CELLS", "").split(",") if k.strip()]
    for k in cells:
        if k not in low:
            sys.exit(f"CONFIRM_CELLS: {k!r} is not a cell below {threshold}x in {results_path}")
    groups = []
    for g in plan["groups"]:
        if g.get("view") != "same" or only_ids not in g["id"]:
            continue
        if labels and g["label"] != "null_blk" and g["label"] not in labels:
            continue
        keep = [c for c in g["cells"] if c["key"] in low and (not cells or c["key"] in cells)
                and (g["label"] in low[c["key"]] or g["label"] == "null_blk"
                     and (not labels or low[c["key"]] & set(labels)))]
        if keep:
            groups.append(dict(g, cells=keep, id=g["id"] + "-confirm"))
    # ABBA passes (CONFIRM_ABBA=1, the default): see abba().
    if os.environ.get("CONFIRM_ABBA", "1") == "1":
        groups = abba(groups)
    return dict(plan, name=plan["name"] + "-confirm", groups=groups)


def main():
    if sys.argv[1] == "shard":
        return shard(sys.argv[2], int(sys.argv[3]))
    if sys.argv[1] == "confirm":
        threshold = float(sys.argv[4]) if len(sys.argv) > 4 else 0.99
        json.dump(confirm(sys.argv[2], sys.argv[3], threshold), sys.stdout, indent=1)
        return
    what, kind = sys.argv[1], sys.argv[2]
    runtime = int(sys.argv[3]) if len(sys.argv) > 3 else 500
    if what == "null":
        groups = same_view(kind)
        # NULL_ABBA=1: the same-settings loads in ABBA passes (abba()).
        if os.environ.get("NULL_ABBA", "0") == "1":
            groups = abba(groups)
        groups += defaults_view(kind) + seeds()
    elif what == "virtio":
        groups = virtio(kind, int(os.environ.get("SAMPLES", "3")))
    elif what == "interleave":
        groups = interleave()
    elif what == "wallclock":
        groups = wallclock(kind, int(os.environ.get("SAMPLES", "3")))
    else:
        sys.exit(f"unknown plan {what}")
    json.dump({"name": f"{what}-{kind}", "runtime_ms": runtime, "ramp_ms": 100, "groups": groups},
              sys.stdout, indent=1)


if __name__ == "__main__":
    main()
