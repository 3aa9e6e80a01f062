#!/usr/bin/python3
"""Benchmark results (JSON lines from bench/guest.py) to tables and plots.

    scripts/report.py null|virtio|wallclock RESULTS.jsonl OUTDIR [--meta META.json]

null       OUTDIR/null.{json,md}, one ratio heat map per driver pair
           (null-heat-<driver>.png) and the seed curve (seeds.png).
virtio     OUTDIR/virtio.{json,md,png} and OUTDIR/virtio-memory.md.
wallclock  OUTDIR/wallclock.{json,md,png}: per cell and driver the median, range
           and samples; a ratio to C only where the ranges do not overlap.
interleave OUTDIR/interleave.{json,md,png}: C null_blk and rnull_split at
           irqmode=2 over completion_nsec (scripts/run.sh interleave).
confirm    OUTDIR/null-confirm.{json,md}: RESULTS is a second run, in
           rounds of fresh guests (rows carry "round"), of the cells of
           --first (the full run) below 0.99x C (bench/plan.py confirm); a
           cell counts as below only if it is in the first run and in the
           median of the rounds' ratios.

Every Markdown file and JSON object starts with the command that made it
(META's "command") and how (QEMU accelerator, kernel, git revision). The
main tables are printed too.

In icount mode (the default) a guest nanosecond is one guest instruction,
summed over both vCPUs, plus the guest time QEMU skips while every vCPU
idles (with sleep=off it jumps to the next timer: irqmode=2's completion
timers, for one). So "ns/IO" is 1e9 / IOPS: for a QD1 psync job with one
job it is the instructions one I/O costs, fio's own included.
"""
import argparse, json, math, os, statistics, sys
from collections import defaultdict

ap = argparse.ArgumentParser()
ap.add_argument("kind", choices=["null", "virtio", "wallclock", "confirm", "interleave"])
ap.add_argument("results")
ap.add_argument("outdir")
ap.add_argument("--meta")
ap.add_argument("--first", help="confirm: the run whose cells below 0.99x were run again")
ap.add_argument("--pool", action="append", default=[],
                help="confirm: the rows of an earlier confirm (its JSON lines) to count with these, "
                     "for the cells both ran; its rounds follow this run's")
args = ap.parse_args()
os.makedirs(args.outdir, exist_ok=True)
meta = json.load(open(args.meta)) if args.meta else {}
allrows = [json.loads(l) for l in open(args.results) if l.strip()]
for path in args.pool:
    # An earlier confirm's rounds, numbered after the ones so far, for the
    # cells this run has (each round keeps its C and Rust loads together).
    keys = {r.get("key") for r in allrows}
    last = max((r.get("round", 1) for r in allrows), default=0)
    allrows += [dict(r, round=last + r.get("round", 1)) for r in
                (json.loads(l) for l in open(path) if l.strip()) if r.get("key") in keys]


def cell_runs(r):
    """A row's fio runs: a two-job cell's windowed runs, a tag-starved
    cell's runs, or its one result (bench/guest.py)."""
    return r.get("window_iops") or r.get("runs_iops") or [round(r["iops"])]


def merge_passes(rs):
    """One row per cell where a cell ran in two ABBA passes (bench/plan.py:
    a setting's loads forwards, then backwards; rows carry "pass"): the
    mean of the passes' IOPS, both kept in "passes" and their windowed runs
    in "window_iops". Each driver's cell then sits at the same mean
    position in the guest's run, so a linear drift of the guest cancels."""
    out, seen = [], {}
    for r in rs:
        if "pass" not in r:
            out.append(r)
            continue
        k = (r.get("round"), r.get("view"), r.get("label"), r.get("key"), r.get("rep"))
        if k not in seen:
            seen[k] = dict(r, parts=[])
            out.append(seen[k])
        seen[k]["parts"].append(r)
    for m in seen.values():
        parts = sorted(m.pop("parts"), key=lambda r: r["pass"])
        good = [r for r in parts if "error" not in r and r.get("iops")]
        if len(good) < len(parts):
            m.update(error="; ".join(r.get("error", "no IOPS") for r in parts if r not in good))
            m.pop("iops", None)
            continue
        m.update(parts[0], iops=statistics.mean(r["iops"] for r in parts),
                 passes=[r["iops"] for r in parts], passes_ctx=[r.get("ctx_per_io") for r in parts])
        m.pop("pass", None)
        m["window_iops"] = sorted(x for r in parts for x in cell_runs(r))
    return out


allrows = merge_passes(allrows)
rows = [r for r in allrows if "counters" not in r]
counters = [r for r in allrows if "counters" in r]
ok = lambda r: "error" not in r and r.get("iops")

PAIRS = [("rnull_split", "null_blk"), ("rnull_split-bio", "null_blk"), ("rnull", "null_blk")]
RW = ["randread", "randwrite"]
BS = ["512", "4k", "32k", "256k", "1M"]


def header(title):
    m = meta
    out = [f"## {title}", ""]
    if m:
        out += [f"Made by `{m.get('command', '?')}` on {m.get('date', '?')} (git {m.get('git', '?')}); "
                f"kernel {m.get('kernel', '?')}, {m.get('qemu', '?')} `{m.get('qemu_accel_args', '')}`, "
                f"{m.get('vcpus', '?')} vCPUs; fio measures {m.get('runtime_ms', '?')} ms of guest time per cell "
                f"after 100 ms of ramp. Host: {m.get('host_cpus', '?')} CPUs, load {m.get('host_load_at_start', 0):.1f} "
                f"and {m.get('other_qemu_guests_at_start', 0)} other QEMU guest(s) at the start.", ""]
    return out


def iops(x):
    return f"{x:,.0f}" if x is not None else "-"


def ratio(a, b):
    return a / b if a and b else None


def rs(x):
    return f"{x:.3f}" if x is not None else "-"


def nsio(r):
    return 1e9 / r["iops"] if ok(r) else None


def lay(r, full=False):
    """A row's device layout in a few words: '1q none 256t'."""
    L = r.get("layout")
    if not L:
        return "-"
    if L["bio_based"]:
        return "bio-based"
    s = f"{L['hw_queues']}q"
    if full or any(t != "default" for t in L["hctx_types"]):
        s += "(" + ",".join(L["hctx_types"]) + ")"
    return s + f" {L['scheduler']} {L['tags']}t"


LAYOUT_KEYS = ["hw_queues", "hctx_types", "scheduler", "tags", "nr_requests", "max_sectors_kb",
               "max_hw_sectors_kb", "max_segments", "max_segment_size", "logical_block_size"]


def write(name, md, js):
    open(os.path.join(args.outdir, name + ".md"), "w").write("\n".join(md) + "\n")
    json.dump({"meta": meta, **js}, open(os.path.join(args.outdir, name + ".json"), "w"), indent=1)


def save_fig(plt, fig, name):
    """Lay out `fig`, write it to results/NAME and free it."""
    fig.tight_layout()
    fig.savefig(os.path.join(args.outdir, name), dpi=90)
    plt.close(fig)


def plt_or_none():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except Exception as e:  # the numbers are the result; the plot is a view
        print(f"(no plot: {e})", file=sys.stderr)
        return None


def cell_desc(r):
    return f"{r['rw']} {r['bs']} QD{r['qd']}x{r['jobs']} {r['engine']}"


# --------------------------------------------------------------------------
def report_null():
    main = [r for r in rows if r.get("rep", 1) == 1]
    same = [r for r in main if r["view"] == "same"]
    by = {(r["label"], r["key"]): r for r in same}
    keys = list(dict.fromkeys(r["key"] for r in same))
    labels = [l for l in ["null_blk", "rnull_split", "rnull_split-bio", "rnull"]
              if any(r["label"] == l for r in same)]
    md = header("Null block drivers, icount (guest instructions)")
    md += ["### Same settings",
           "",
           "Every driver: 512 B logical blocks, 1 submission queue (C null_blk: `poll_queues=0`, so 1 "
           "hardware queue), 256 tags (`hw_queue_depth=256`; rnull has 256 built in), "
           "`completion_nsec=10000`, scheduler `none` (set in sysfs), and the row's irqmode and "
           "memory_backed (a memory-backed device is written through once first, so reads copy data). "
           "rnull_split-bio is rnull_split with `queue_mode=0` (bio-based: no blk-mq, so no queues, tags "
           "or scheduler); C null_blk has no bio mode in 7.3, so its ratio is against request-based C, and "
           "with irqmode=1 rnull_split-bio completes inline (as C's old bio mode did) where C raises a softirq. "
           "rnull (7.3's, configfs: blocksize, size, irqmode 0/1) has no timer mode or memory backing. "
           "fio: `--direct=1 --norandommap --randrepeat=1`, 256 MiB region, QD1 `psync`, deeper `io_uring`"
           + ("; its buffers in huge pages (`iomem=mmaphuge`), so every I/O is one physically contiguous "
              "buffer: with small pages how contiguous a run's buffers happen to be sets the segments per "
              "large I/O, and their per-page work is most of its cost (1 MiB randwrite QD128x2 spread "
              "4,014-4,569 IOPS over nine runs of one load on small pages, 16,658-16,960 on huge pages). "
              if any(r.get("iomem") == "mmaphuge" for r in same) else ". ") +
           "Layout = hardware queues, scheduler, tags, read back from the kernel for every row. "
           "ns/IO = 1e9 / IOPS in guest time (= instructions per I/O at QD1x1 without idle time). "
           "Ratios are IOPS / C null_blk's IOPS: above 1 is faster than C. "
           "One run per cell: with one job (one vCPU busy) a cell repeats within about 0.1%. A 2-job cell "
           "(x2) runs in a fio of its own and is measured in a window of guest time once both jobs run "
           "(the disk's byte counter read at both ends, after the first I/O, a ramp and a margin): fio's "
           "own summed IOPS mix per-job windows that start milliseconds of guest time apart. Such a cell "
           "is the median of 3 fio runs (how the jobs interleave on the vCPUs varies between runs). So is "
           "a one-job cell that keeps more requests in flight than the queue has tags (QD x ceil(bs / "
           "max_sectors_kb) > nr_requests: 256 KiB and 1 MiB at QD32-128): its submitters wait for tags "
           "in io_uring's worker threads, whose scheduling varies between runs (+-1.5% at 1 MiB QD128 "
           "on either driver).",
           ""]
    hdr = "| irq | mem | workload | layout | " + " | ".join(
        f"{l} IOPS | ns/IO" + (" | MB/s" if l == "null_blk" else " | ×C") for l in labels) + " |"
    md += [hdr, "|---|---|---|---|" + "---:|" * (3 * len(labels))]
    diffs = []
    gaps = []
    for k in keys:
        rr = {l: by.get((l, k)) for l in labels}
        any_r = next(r for r in rr.values() if r)
        c = rr.get("null_blk")
        base = c if c and ok(c) else None
        rq_layouts = {l: tuple(str(r["layout"].get(x)) for x in LAYOUT_KEYS)
                      for l, r in rr.items() if r and r.get("layout") and not r["layout"]["bio_based"]}
        lays = sorted(set(lay(r) for l, r in rr.items() if r and l != "rnull_split-bio" and r.get("layout")))
        if len(set(rq_layouts.values())) > 1:
            ref = rq_layouts.get("null_blk") or next(iter(rq_layouts.values()))
            for l, t in rq_layouts.items():
                d = [f"{x} {a}≠{b}" for x, a, b in zip(LAYOUT_KEYS, t, ref) if a != b]
                if d:
                    diffs.append(f"{k}: {l} vs null_blk: " + ", ".join(d))
        line = (f"| {any_r['settings'].get('irqmode')} | {any_r['settings'].get('memory_backed')} | "
                f"{cell_desc(any_r)} | {' / '.join(lays) + (' (≠)' if len(set(rq_layouts.values())) > 1 else '')} |")
        for l in labels:
            r = rr.get(l)
            if not r:
                line += " n/a | |" + (" |" if l == "null_blk" else "")
                continue
            if not ok(r):
                line += (" refused" if r.get("refused") else " error") + " | |" + (" |" if l == "null_blk" else "")
                continue
            line += f" {iops(r['iops'])} | {nsio(r):,.0f} |"
            if l == "null_blk":
                line += f" {r['MBps']:,.1f} |"
            else:
                q = ratio(r["iops"], base["iops"] if base else None)
                line += f" {rs(q)} |"
                if q is not None:
                    gaps.append((q, l, k, r))
        md.append(line)
    md.append("")
    if diffs:
        md += ["Layout differences between drivers in the same-settings view:", ""] + [f"- {d}" for d in diffs] + [""]
    else:
        md += ["Layout check: in every row the request-based drivers had the same hardware queues (and "
               "types), scheduler, tags, nr_requests, max_sectors_kb, max_hw_sectors_kb, max_segments, "
               "max_segment_size and logical block size.", ""]
    errors = [r for r in main if "error" in r]
    if errors:
        seen = set()
        md += ["Not measured (refused: the driver refused the settings; error: fio failed):", ""]
        for r in errors:
            e = (r["label"], r["group"])
            if e not in seen:
                seen.add(e)
                md.append(f"- {r['label']} ({r['group']}): {r['error'][:300]}")
        md.append("")

    # Gaps: the lowest ratios, for whoever looks for the slow paths.
    low = sorted(g for g in gaps if g[0] < 0.99)
    md += ["### Ratios below 0.99 (lowest first)", ""]
    if low:
        md += ["| ×C | driver | irq | mem | workload | ns/IO (C → Rust) | runs: C / Rust IOPS |",
               "|---:|---|---|---|---|---|---|"]
        runs = lambda r: ", ".join(f"{x:,}" for x in cell_runs(r))
        for q, l, k, r in low[:30]:
            c = by[("null_blk", k)]
            md.append(f"| {q:.3f} | {l} | {r['settings'].get('irqmode')} | {r['settings'].get('memory_backed')} | "
                      f"{cell_desc(r)} | {nsio(c):,.0f} → {nsio(r):,.0f} | {runs(c)} / {runs(r)} |")
    else:
        md.append("None.")
    md.append("")

    # Defaults.
    dflt = [r for r in main if r["view"] == "defaults"]
    if dflt:
        md += ["### Load-time defaults",
               "",
               "Each driver as loading it leaves it: `insmod null_blk.ko`, `insmod rnull_split.ko` (no "
               "parameters), `insmod rnull_mod.ko` + `mkdir` + `power=1`. Not like with like: the settings and "
               "layouts may differ (read back from each driver: C's /sys/module parameters, rnull_split's "
               "configfs defaults, rnull's configfs), and so does the scheduler the block layer picks "
               "(mq-deadline for one hardware queue, none for more). C null_blk's and rnull_split's default "
               "`poll_queues=1` gives each a second hardware queue, of type poll, which fio without "
               "`--hipri` does not use; rnull has none.",
               ""]
        md += ["| workload | driver | settings in force | layout | IOPS | ns/IO | ×C |", "|---|---|---|---|---:|---:|---:|"]
        dby = {(r["label"], r["key"]): r for r in dflt}
        for k in dict.fromkeys(r["key"] for r in dflt):
            for l in ["null_blk", "rnull_split", "rnull"]:
                r = dby.get((l, k))
                if not r:
                    continue
                e = r.get("effective", {})
                sets = ", ".join(f"{x}={e[x]}" for x in ("queue_mode", "submit_queues", "poll_queues", "hw_queue_depth",
                                                          "irqmode", "completion_nsec", "bs", "blocksize") if x in e)
                c = dby.get(("null_blk", k))
                q = ratio(r.get("iops"), c.get("iops") if c else None) if l != "null_blk" else None
                md.append(f"| {cell_desc(r)} | {l} | {sets} | {lay(r, full=True)} | "
                          f"{iops(r.get('iops')) if ok(r) else 'error'} | {nsio(r) or 0:,.0f} | {rs(q)} |")
        md.append("")

    # Repeatability: cells run twice in one boot, and this run against the previous one.
    md += ["### Repeatability", ""]
    reps = [r for r in rows if r.get("rep") == 2 and ok(r)]
    first = {(r["group"], r["key"]): r for r in main}
    if reps:
        md += ["Cells run a second time at the end of the same load, after the load's other cells:", "",
               "| driver | irq | mem | workload | run 1 IOPS | run 2 IOPS | difference |", "|---|---|---|---|---:|---:|---:|"]
        for r in reps:
            a = first.get((r["group"], r["key"]))
            if a and ok(a):
                md.append(f"| {r['label']} | {r['settings'].get('irqmode')} | {r['settings'].get('memory_backed')} | "
                          f"{cell_desc(r)} | {iops(a['iops'])} | {iops(r['iops'])} | {100 * (r['iops'] / a['iops'] - 1):+.3f}% |")
        md.append("")
    prev_path = os.path.join(args.outdir, "null.json")
    if os.path.exists(prev_path):
        try:
            prev = json.load(open(prev_path))
            pm = prev.get("meta", {})
            pr = {(r["view"], r["label"], r["key"], r.get("iomem")): r
                  for r in prev["rows"] if r.get("rep", 1) == 1 and ok(r)}
            if pm.get("runtime_ms") == meta.get("runtime_ms"):
                line = (f"Against the previous run in {args.outdir}/ ({pm.get('date', '?')}, git {pm.get('git', '?')}, "
                        f"another boot; the drivers may have been rebuilt in between):")
                for jobs in (1, 2):
                    k4 = lambda r: (r["view"], r["label"], r["key"], r.get("iomem"))
                    d = sorted((abs(r["iops"] / pr[k4(r)]["iops"] - 1), r["label"], r["key"])
                               for r in main if ok(r) and r["jobs"] == jobs and k4(r) in pr)
                    if d:
                        line += (f" {jobs}-job cells: {len(d)}, median |difference| {100 * statistics.median(x[0] for x in d):.3f}%, "
                                 f"{sum(x[0] <= 0.001 for x in d)} within 0.1%, largest {100 * d[-1][0]:.2f}% ({d[-1][1]}, {d[-1][2]});")
                md += [line.rstrip(";") + ".", ""]
        except Exception as e:
            print(f"(previous results not compared: {e})", file=sys.stderr)

    # Seeds.
    seeds = [r for r in main if r["view"] == "seeds"]
    seed_md = []
    if seeds:
        sby = {(r["label"], r["queue_set"].get("max_sectors_kb")): r for r in seeds}
        mskb = sorted(set(r["queue_set"].get("max_sectors_kb") for r in seeds))
        seed_md += ["### Seed (2015): bio mode splitting, fast vs deep clones",
                    "",
                    "rnull_split `queue_mode=0` splits each 1 MiB read itself to the disk's max_sectors_kb: "
                    "`split_clone=fast` (bio_split: the pieces share the parent's bio_vec table) against "
                    "`split_clone=deep` (the pre-2015 way: each piece a deep copy). For reference the "
                    "request-based drivers at the same limit (the block layer splits). All with "
                    "`max_sectors=2048` so that max_sectors_kb can reach 512, irqmode=0, no memory backing; "
                    "fio `--rw=read --bs=1M`, psync, QD1. 2015's figure: fast/deep = 1.72x at 16 KiB.",
                    "",
                    "| max_sectors_kb | pieces per read | bio-deep MB/s | bio-fast MB/s | fast/deep | rnull_split (mq) MB/s | null_blk MB/s | rnull_split/null_blk |",
                    "|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for m in mskb:
            g = lambda l: sby.get((l, m))
            mb = lambda r: f"{r['MBps']:,.1f}" if r and ok(r) else "-"
            io = lambda r: r["iops"] if r and ok(r) else None
            seed_md.append(f"| {m} | {math.ceil(1024 / m)} | {mb(g('bio-deep'))} | {mb(g('bio-fast'))} | "
                           f"{rs(ratio(io(g('bio-fast')), io(g('bio-deep'))))} | {mb(g('rnull_split'))} | "
                           f"{mb(g('null_blk'))} | {rs(ratio(io(g('rnull_split')), io(g('null_blk'))))} |")
        seed_md.append("")
        md += seed_md

    md += ["### Every row", "",
           "| view | driver | workload | settings | layout (max_sectors_kb) | IOPS | MB/s | ns/IO | usr/sys % | guest s |",
           "|---|---|---|---|---|---:|---:|---:|---|---:|"]
    for r in rows:
        p = " ".join(f"{k}={v}" for k, v in {**r.get("params", {}), **r.get("configfs", {})}.items()) or "(defaults)"
        q = " ".join(f"{k}={v}" for k, v in r.get("queue_set", {}).items())
        L = r.get("layout") or {}
        rep = " (run 2)" if r.get("rep") == 2 else ""
        if ok(r):
            md.append(f"| {r['view']} | {r['label']} | {cell_desc(r)}{rep} | {p} {q} | {lay(r, True)} ({L.get('max_sectors_kb')}) | "
                      f"{iops(r['iops'])} | {r['MBps']:,.1f} | {nsio(r):,.0f} | {r['usr_cpu']:.0f}/{r['sys_cpu']:.0f} | {r.get('guest_s', 0):.2f} |")
        else:
            md.append(f"| {r['view']} | {r['label']} | {cell_desc(r)}{rep} | {p} {q} | - | error | | | | |")
    write("null", md, {"rows": rows})
    out = md[:md.index("### Every row")]
    print("\n".join(out))

    plt = plt_or_none()
    if not plt:
        return
    from matplotlib.colors import TwoSlopeNorm
    combos = sorted(set((r["settings"]["irqmode"], r["settings"]["memory_backed"]) for r in same))
    cols = [(qd, j) for qd in (1, 8, 32, 128) for j in (1, 2)]
    ys = [(rw, bs) for rw in RW for bs in BS]
    for a, b in PAIRS:
        if not any(r["label"] == a for r in same):
            continue
        cm = [c for c in combos if any(r["label"] == a and ok(r) and (r["settings"]["irqmode"], r["settings"]["memory_backed"]) == c for r in same)]
        if not cm:
            continue
        fig, axes = plt.subplots(1, len(cm), figsize=(4.2 * len(cm) + 1, 5.2), squeeze=False)
        for ax, (irq, mem) in zip(axes[0], cm):
            grid = [[math.nan] * len(cols) for _ in ys]
            for r in same:
                if r["label"] != a or not ok(r) or (r["settings"]["irqmode"], r["settings"]["memory_backed"]) != (irq, mem):
                    continue
                c = by.get((b, r["key"]))
                if c and ok(c):
                    grid[ys.index((r["rw"], r["bs"]))][cols.index((r["qd"], r["jobs"]))] = r["iops"] / c["iops"]
            im = ax.imshow(grid, cmap="RdYlGn", norm=TwoSlopeNorm(vmin=0.5, vcenter=1.0, vmax=1.5), aspect="auto")
            for i in range(len(ys)):
                for j in range(len(cols)):
                    if not math.isnan(grid[i][j]):
                        ax.text(j, i, f"{grid[i][j]:.3f}", ha="center", va="center", fontsize=6)
            ax.set_xticks(range(len(cols)), [f"QD{q}\nx{j}" for q, j in cols], fontsize=7)
            ax.set_yticks(range(len(ys)), [f"{rw[4:]} {bs}" for rw, bs in ys], fontsize=7)
            ax.set_title(f"irqmode={irq} memory_backed={mem}", fontsize=9)
        fig.colorbar(im, ax=axes[0].tolist(), shrink=0.8, label=f"IOPS {a} / {b}")
        fig.suptitle(f"{a} / {b}, same settings, icount guest time ({meta.get('command', '')})", fontsize=9)
        fig.savefig(os.path.join(args.outdir, f"null-heat-{a}.png"), dpi=90)
        plt.close(fig)
    if seeds:
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
        for l, st in (("bio-deep", "o-"), ("bio-fast", "s-"), ("rnull_split", "^--"), ("null_blk", "v--")):
            pts = sorted((r["queue_set"]["max_sectors_kb"], r["MBps"]) for r in seeds if r["label"] == l and ok(r))
            if pts:
                ax1.plot(*zip(*pts), st, label=l)
        ax1.set_xscale("log", base=2)
        ax1.set_xlabel("max_sectors_kb")
        ax1.set_ylabel("MB/s (guest time)")
        ax1.set_title("1 MiB reads, QD1", fontsize=9)
        ax1.legend(fontsize=8)
        pts = []
        for m in sorted(set(r["queue_set"]["max_sectors_kb"] for r in seeds)):
            f, d = sby.get(("bio-fast", m)), sby.get(("bio-deep", m))
            if f and d and ok(f) and ok(d):
                pts.append((m, f["iops"] / d["iops"]))
        if pts:
            ax2.plot(*zip(*pts), "s-", label="rnull_split fast / deep")
        ax2.plot([16], [1.72], "r*", ms=12, label="2015: 1.72x at 16")
        ax2.set_xscale("log", base=2)
        ax2.set_xlabel("max_sectors_kb")
        ax2.set_ylabel("fast / deep")
        ax2.legend(fontsize=8)
        fig.suptitle("Seed: bio splitting with fast vs deep clones (icount)", fontsize=9)
        save_fig(plt, fig, "seeds.png")


# --------------------------------------------------------------------------
def spread(v):
    return (f"{statistics.median(v):,.0f} [{min(v):,.0f}–{max(v):,.0f}]" if len(v) > 1
            else f"{v[0]:,.0f}") if v else "-"


def report_virtio():
    samples = defaultdict(list)
    paired = defaultdict(list)
    prev = None
    for r in rows:
        if ok(r):
            samples[(r["label"], r["key"])].append(r["iops"])
            # A pair: the two drivers' runs of one cell, one right after the
            # other in one load, in either order (the plan alternates it).
            if prev and prev["key"] == r["key"] and prev["group"] == r["group"] \
                    and (prev["label"] == "virtio_blk") != (r["label"] == "virtio_blk"):
                c, rust = (prev, r) if prev["label"] == "virtio_blk" else (r, prev)
                paired[(rust["label"], r["key"])].append(rust["iops"] / c["iops"])
                r = None  # a run is in one pair at most
        prev = r
    keys = list(dict.fromkeys(r["key"] for r in rows))
    desc = {r["key"]: cell_desc(r) for r in rows}
    layout = {r["label"]: lay(r) for r in rows if r.get("layout")}
    med = lambda l, k: statistics.median(samples[(l, k)]) if samples[(l, k)] else None
    md = header("rvirtio_blk vs C virtio_blk, icount")
    if any(r.get("spin") for r in rows):
        md += ["**VIRTIO_SPIN=1**: a SCHED_IDLE busy loop on each vCPU kept the guest from idling, so "
               "waiting for QEMU's thread cost guest time in proportion to host time instead of an icount "
               "jump to the next timer.", ""]
    md += ["Two virtio-blk-pci disks on QEMU `null-co` (no data is stored), 2 virtqueues each, so 2 hardware "
           "queues for both drivers (" + ", ".join(f"{l}: {v}" for l, v in layout.items()) + "), scheduler "
           "none for both; fio libaio, 2 jobs x QD32, `--direct=1`. rvirtio_blk runs with runtime-chained "
           "SG lists (2 inline entries, chained beyond: the 2021 design, as C's `sg_alloc_table_chained`) "
           "and again with `sg_prealloc=1` (seg_max entries per request, preallocated: before 2021). "
           "Not deterministic even in icount: QEMU serves the virtqueues in its own thread, in host "
           "time, so completions land at varying guest instructions and idle jumps vary. Hence "
           "median [min–max] over the samples (C ran next to each rvirtio_blk load); ×C is the median "
           "of the ratios of each rvirtio_blk run to the C run just before it.",
           "",
           "| workload | virtio_blk IOPS | rvirtio_blk (chained) IOPS | ×C | rvirtio_blk sg_prealloc=1 IOPS | ×C | chained / prealloc |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    summ = []
    for k in keys:
        pc = paired[("rvirtio_blk", k)]
        pp = paired[("rvirtio_blk-prealloc", k)]
        cp = ratio(med("rvirtio_blk", k), med("rvirtio_blk-prealloc", k))
        md.append(f"| {desc[k]} | {spread(samples[('virtio_blk', k)])} | {spread(samples[('rvirtio_blk', k)])} | "
                  f"{rs(statistics.median(pc) if pc else None)} | {spread(samples[('rvirtio_blk-prealloc', k)])} | "
                  f"{rs(statistics.median(pp) if pp else None)} | {rs(cp)} |")
        summ.append({"key": k, "virtio_blk": samples[("virtio_blk", k)], "rvirtio_blk": samples[("rvirtio_blk", k)],
                     "rvirtio_blk-prealloc": samples[("rvirtio_blk-prealloc", k)],
                     "paired_ratio_chained": pc, "paired_ratio_prealloc": pp})
    md.append("")
    k4 = next((k for k in keys if k.startswith("randread 4k")), None)
    if k4 and med("rvirtio_blk", k4) and med("rvirtio_blk-prealloc", k4):
        md += [f"In the 2021 seed's shape (4 KiB randread 323K -> 321K IOPS, 0.99x): preallocated -> chained "
               f"{med('rvirtio_blk-prealloc', k4) / 1e3:,.0f}K -> {med('rvirtio_blk', k4) / 1e3:,.0f}K IOPS, "
               f"{med('rvirtio_blk', k4) / med('rvirtio_blk-prealloc', k4):.2f}x (C virtio_blk "
               f"{med('virtio_blk', k4) / 1e3:,.0f}K).", ""]
    mem = ["## rvirtio_blk SG memory: runtime-chained (2 inline) vs preallocated (seg_max inline)", "",
           f"From rvirtio_blk's debugfs after its first load's cells (`{meta.get('command', '')}`).", ""]
    cs = {("prealloc" if c["params"].get("sg_prealloc") else "runtime"): c["counters"] for c in counters}
    ks = ["pdu_bytes", "inline_sg", "queue_depth", "nr_hw_queues", "tagset_sg_bytes", "requests", "chained",
          "sg_bytes_peak", "ring_full"]
    modes = [m for m in ("runtime", "prealloc") if m in cs]
    mem += ["| counter | " + " | ".join(modes) + " |", "|---|" + "---:|" * len(modes)]
    for k in ks:
        if any(k in cs[m] for m in modes):
            mem.append(f"| {k} | " + " | ".join(str(cs[m].get(k, "")) for m in modes) + " |")
    mem.append("")
    write("virtio", md + mem, {"rows": rows, "counters": counters, "summary": summ})
    open(os.path.join(args.outdir, "virtio-memory.md"), "w").write("\n".join(mem) + "\n")
    print("\n".join(md + mem))
    plt = plt_or_none()
    if not plt:
        return
    labels = ["virtio_blk", "rvirtio_blk", "rvirtio_blk-prealloc"]
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(keys)), 4))
    w = 0.27
    for i, l in enumerate(labels):
        m = [med(l, k) or 0 for k in keys]
        lo = [m_ - min(samples[(l, k)] or [0]) for m_, k in zip(m, keys)]
        hi = [max(samples[(l, k)] or [0]) - m_ for m_, k in zip(m, keys)]
        ax.bar([x + (i - 1) * w for x in range(len(keys))], m, w, yerr=[lo, hi], label=l, capsize=2)
    ax.set_xticks(range(len(keys)), [desc[k].replace(" QD32x2 libaio", "") for k in keys], fontsize=8, rotation=20)
    ax.set_ylabel("IOPS (guest time)")
    ax.set_yscale("log")
    ax.legend(fontsize=8)
    ax.set_title("virtio, icount, libaio 2 jobs x QD32 (median, min–max)", fontsize=9)
    save_fig(plt, fig, "virtio.png")


# --------------------------------------------------------------------------
def report_wallclock():
    """OUTDIR/wallclock.{json,md,png}: the same-settings cells in real time
    under multi-threaded TCG. Per cell and driver the median, the range and
    the number of samples; a ratio to C only where the two drivers' ranges
    do not overlap, "within noise" where they do: on a shared host the
    samples of one driver swing by tens of percent, far more than the
    drivers differ, and a ratio of two medians inside that would read as a
    result."""
    samples = defaultdict(list)
    for r in rows:
        if ok(r):
            samples[(r["label"], r["key"])].append(r["iops"])
    keys = list(dict.fromkeys(r["key"] for r in rows))
    labels = list(dict.fromkeys(r["label"] for r in rows))
    desc = {r["key"]: cell_desc(r) for r in rows}
    layout = {r["label"]: lay(r) for r in rows if r.get("layout")}

    def versus_c(v, c):
        """The ratio of the medians of `v` to C's `c` where their ranges
        are apart, else why not."""
        if len(v) < 2 or len(c) < 2:
            return None, "too few samples"
        if max(v) < min(c) or min(v) > max(c):
            return statistics.median(v) / statistics.median(c), None
        return None, "within noise"

    pct = lambda x: f"{round(100 * x):+d}%" if round(100 * x) else "0%"

    swing = max(((max(v) - min(v)) / statistics.median(v) for v in samples.values() if len(v) > 1), default=0)
    md = header("Wall clock: multi-threaded TCG on a shared host (not hardware timings)")
    md += ["**These are not hardware timings.** The guest runs under multi-threaded TCG (QEMU translates "
           "its code; each vCPU is a host thread) on a host it shares with whatever else runs there, so "
           "host load, TCG's code translation and where the host schedules the vCPU threads are all in "
           f"the numbers: here one driver's samples of one cell lie up to {100 * swing:.0f}% of their median "
           "apart. The same-settings view (irqmode=0, no memory backing; "
           + ", ".join(f"{l}: {v}" for l, v in layout.items()) + "); drivers loaded one at a time, the "
           "order rotating per sample. Per driver: the median IOPS, the range (min–max) and how far it "
           "reaches below and above the median, and the number of samples. ×C is the ratio of the "
           "medians, given only where the driver's range and C null_blk's do not overlap; where they "
           "overlap it says *within noise*: this host cannot tell the two apart. The deterministic "
           "comparison is the icount view (`null.md`).", "",
           "| workload | driver | IOPS median | range (min–max) | range vs median | samples | ×C |",
           "|---|---|---:|---:|---:|---:|---:|"]
    cells = []
    for k in keys:
        c = samples[("null_blk", k)]
        for l in labels:
            v = samples[(l, k)]
            if not v:
                md.append(f"| {desc[k]} | {l} | - | - | - | 0 | - |")
                continue
            m = statistics.median(v)
            x, why = versus_c(v, c) if l != "null_blk" else (None, None)
            md.append(f"| {desc[k]} | {l} | {m:,.0f} | {min(v):,.0f}–{max(v):,.0f} | "
                      f"{pct(min(v) / m - 1)} / {pct(max(v) / m - 1)} | {len(v)} | "
                      + ("-" if l == "null_blk" else rs(x) if x else f"*{why}*") + " |")
            cells.append({"key": k, "label": l, "median": m, "min": min(v), "max": max(v), "n": len(v),
                          "ratio": x, "why_no_ratio": why})
    md.append("")
    apart = [d for d in cells if d["ratio"]]
    md += [f"Ratios given: {len(apart)} of {sum(d['label'] != 'null_blk' for d in cells)} (the other Rust "
           "drivers' ranges overlap C null_blk's)" + (": " + ", ".join(f"{d['label']} {desc[d['key']]} "
                                                                    f"{d['ratio']:.3f}x" for d in apart)
                                                      if apart else "") + ".", ""]
    write("wallclock", md, {"rows": rows, "samples": {f"{l} {k}": v for (l, k), v in samples.items()},
                            "cells": cells})
    print("\n".join(md))
    plt = plt_or_none()
    if not plt:
        return
    fig, axes = plt.subplots(1, len(keys), figsize=(3.5 * len(keys), 3.5), squeeze=False)
    for ax, k in zip(axes[0], keys):
        for i, l in enumerate(labels):
            v = samples[(l, k)]
            if v:
                ax.bar(i, statistics.median(v), color="#4a7ab5")
                ax.plot([i] * len(v), v, "k.", ms=4)
        ax.set_xticks(range(len(labels)), labels, fontsize=7, rotation=20)
        ax.set_title(desc[k], fontsize=8)
    fig.suptitle("wall clock, multi-threaded TCG on a shared host, not hardware timings "
                 "(bars: median, dots: samples)", fontsize=9)
    save_fig(plt, fig, "wallclock.png")


# Two-sided 95% quantiles of Student's t by degrees of freedom (1..30).
T975 = [12.71, 4.30, 3.18, 2.78, 2.57, 2.45, 2.36, 2.31, 2.26, 2.23, 2.20, 2.18, 2.16, 2.14, 2.13,
        2.12, 2.11, 2.10, 2.09, 2.09, 2.08, 2.07, 2.07, 2.06, 2.06, 2.06, 2.05, 2.05, 2.05, 2.04]


def ratio_interval(c, r):
    """The ratio of the means of the samples `r` (Rust) and `c` (C), with a
    95% interval (delta method, Welch's degrees of freedom), or None with
    fewer than two samples a side. Samples of one guest are taken as
    independent, which makes the interval somewhat narrower than it is."""
    if len(c) < 2 or len(r) < 2:
        return None
    mc, mr = statistics.mean(c), statistics.mean(r)
    a = (statistics.stdev(r) / mr) ** 2 / len(r)
    b = (statistics.stdev(c) / mc) ** 2 / len(c)
    x = mr / mc
    if a + b == 0:
        return x, x, x
    df = (a + b) ** 2 / (a * a / (len(r) - 1) + b * b / (len(c) - 1))
    t = T975[min(len(T975), max(1, int(df))) - 1] if df <= len(T975) else 1.96
    h = t * x * math.sqrt(a + b)
    return x, x - h, x + h


SAME_SLEEPS = 0.05  # context switches per I/O within which two loads count as in one phase


def same_sleep_interval(c, r):
    """The verdict's view at equal sleeps: `ratio_interval` over the loads of
    `c` (C) and `r` (Rust), each (IOPS, context switches per I/O), of the
    phase both drivers' loads share most. In icount whether a job finds its
    I/O done before it sleeps depends on where the vCPUs' turns and the
    guest's timers fall (results/interleave.md), a phase that holds for a
    load and moves a cell by a few percent with no change in the path;
    loads in the same phase compare the paths. A phase is a run of loads whose
    sleeps per I/O lie within SAME_SLEEPS of the next (both drivers' loads
    sorted together); the one with the most loads of its scarcer driver is
    taken. Returns the interval (None if no phase has two loads of each
    driver) and how many loads of C and of Rust it rests on."""
    pts = sorted([(s, 0, x) for x, s in c if s is not None] + [(s, 1, x) for x, s in r if s is not None])
    phases, cur = [], []
    for p in pts:
        if cur and p[0] - cur[-1][0] > SAME_SLEEPS:
            phases.append(cur)
            cur = []
        cur.append(p)
    if cur:
        phases.append(cur)
    best = None
    for ph in phases:
        cx, rx = [x for _, d, x in ph if d == 0], [x for _, d, x in ph if d == 1]
        key = (min(len(cx), len(rx)), len(ph))
        if key[0] >= 2 and (best is None or key > best[0]):
            best = (key, cx, rx)
    return (ratio_interval(best[1], best[2]), (len(best[1]), len(best[2]))) if best else (None, (0, 0))


def verdict_of(ci):
    """below / not below / undecided for a ratio interval (or n/a)."""
    return ("n/a" if ci is None else "below" if ci[2] < 0.99
            else "not below" if ci[1] >= 0.99 else "undecided")


def emph(verdict):
    """A verdict as the confirm's table shows it: below bold, undecided in italics."""
    return {"below": "**below**", "undecided": "*undecided*"}.get(verdict, verdict)


def report_confirm():
    def runs(r):
        """A cell's fio runs (bench/guest.py: a two-job cell is the median
        of its windowed runs), lowest first."""
        return sorted(cell_runs(r))

    def table(rs):
        return {(r["label"], r["key"]): r for r in rs
                if r.get("view") == "same" and ok(r) and r.get("rep", 1) == 1}
    # A report's JSON (its "rows") or bench/guest.py's JSON lines.
    first = (json.load(open(args.first))["rows"] if args.first.endswith(".json")
             else [json.loads(l) for l in open(args.first) if l.strip()])
    first = table(first)
    # The second run: one table per round of fresh guests (scripts/run.sh,
    # CONFIRM_ROUNDS), in which each Rust cell has C's beside it.
    rounds = sorted({r.get("round", 1) for r in rows})
    again = {n: table(r for r in rows if r.get("round", 1) == n) for n in rounds}
    abba = any("passes" in r for r in rows)
    cells = sorted({(l, k) for t in again.values() for (l, k) in t
                    if l != "null_blk" and (l, k) in first and ("null_blk", k) in first},
                   key=lambda lk: ratio(first[lk]["iops"], first[("null_blk", lk[1])]["iops"]))

    def spread(r):
        rr = runs(r)
        return f"{rr[0]:,.0f}" if len(rr) == 1 else f"{rr[0]:,.0f}-{rr[-1]:,.0f} ({len(rr)})"

    n = len(rounds)
    md = header("Null block drivers: the cells below 0.99x run again")
    md += ["Every same-settings cell of the first run (`" + os.path.relpath(args.first) + "`) whose Rust "
           "driver was below 0.99x C null_blk, run again with C's cell (the loads of those cells only, "
           f"`bench/plan.py confirm`) in {n} round(s) of fresh guests (`CONFIRM_ROUNDS`). In icount a "
           "one-job cell repeats within about 0.1% in one guest, but what the guest ran before (memory, "
           "worker threads) moves a cell whose I/O goes through io_uring's workers, or whose two jobs "
           "interleave on the vCPUs, by a few percent either way, and a guest can keep such a state for a "
           "whole load. So a two-job cell is the median of its windowed fio runs in a guest (`bench/guest.py`; "
           "their spread in the last column), each round's ratio compares C and Rust measured in the same "
           "guest, and the second run's ratio is the median of the rounds'. A cell is below only if it is "
           "below in the first run and in that median."
           + (" Each round ran every setting's loads forwards and then backwards (ABBA: C, Rust, Rust, C; "
              "`CONFIRM_ABBA`), and a driver's cell counts with the mean of its two passes, so that the "
              "guest's drift over the round (a few tenths of a percent per load) is not charged to the driver "
              "loaded later; the last column then lists both passes' windowed runs." if abba else ""), "",
           "The column \"all loads\" takes every load of the second run (each pass of each round) as a "
           "sample: the ratio of the means with its 95% interval (`ratio_interval`). A cell whose interval "
           "lies below 0.99 is **below**, one whose interval lies at or above 0.99 is not, and one whose "
           "interval holds 0.99 is *undecided*: its loads spread too much for a 1% verdict.", "",
           "\"sleeps/IO\" is how often the fio jobs context-switched per I/O in the second run's loads "
           "(fio's `ctx`; C's range; Rust's range). In icount a job that finds its I/O done before it "
           "sleeps saves the scheduler's work both ways, and how often that happens is a phase of the "
           "vCPUs' turns and the guest's timers that holds for a load (`results/interleave.md`), not the "
           "driver's path. \"at equal sleeps\" is therefore the verdict again over the loads of the phase "
           "the two drivers' loads share most (`same_sleep_interval`: a phase is a run of loads whose "
           f"sleeps per I/O lie within {SAME_SLEEPS} of the next): the same rule on the same 95% interval, "
           "for loads that slept alike. A cell whose C and Rust loads never slept alike has *no common "
           "phase*: icount cannot tell its drivers' paths apart at 1% (`results/profiles/interleave-fine.md` sweeps "
           "such a cell over `completion_nsec`).", "",
           "| driver | workload | irq | mem | first: C / Rust IOPS | ×C | again: ×C per round | ×C (median) | below in both | all loads: ×C [95%] | verdict | sleeps/IO: C; Rust | at equal sleeps: ×C [95%] (loads), verdict | runs again, per round: C; Rust |",
           "|---|---|---|---|---:|---:|---|---:|---|---|---|---|---|---|"]
    out, both = [], 0
    verdicts, same_verdicts = defaultdict(int), defaultdict(int)
    for l, k in cells:
        r1, c1 = first[(l, k)], first[("null_blk", k)]
        x1 = ratio(r1["iops"], c1["iops"])
        per = []  # (round, C row, Rust row, ratio) where both ran
        for m in rounds:
            r2, c2 = again[m].get((l, k)), again[m].get(("null_blk", k))
            if r2:
                per.append((m, c2, r2, ratio(r2["iops"], c2["iops"]) if c2 else None))
        xs = [x for *_, x in per if x is not None]
        x2 = statistics.median(xs) if xs else None
        low = x1 < 0.99 and x2 is not None and x2 < 0.99
        both += low
        loads = lambda row: row.get("passes") or [row["iops"]]
        ci = ratio_interval([x for _, c2, _, _ in per if c2 for x in loads(c2)],
                            [x for _, _, r2, _ in per for x in loads(r2)])
        verdict = verdict_of(ci)
        verdicts[verdict] += 1
        with_ctx = lambda row: list(zip(loads(row), row.get("passes_ctx") or [row.get("ctx_per_io")]))
        c_loads = [x for _, c2, _, _ in per if c2 for x in with_ctx(c2)]
        r_loads = [x for _, _, r2, _ in per for x in with_ctx(r2)]
        ci_same, n_same = same_sleep_interval(c_loads, r_loads)
        v_same = verdict_of(ci_same) if ci_same else "no common phase"
        same_verdicts[v_same] += 1
        sl = lambda ls: (lambda v: f"{min(v):.2f}-{max(v):.2f}" if v else "-")([x for _, x in ls if x is not None])
        st = r1["settings"]
        md.append(f"| {l} | {cell_desc(r1)} | {st.get('irqmode')} | {st.get('memory_backed')} | "
                  f"{c1['iops']:,.0f} / {r1['iops']:,.0f} | {x1:.3f} | "
                  + " ".join(rs(x) for *_, x in per) + f" | {rs(x2)} | "
                  + ("**yes**" if low else "no") + " | "
                  + (f"{ci[0]:.3f} [{ci[1]:.3f}-{ci[2]:.3f}]" if ci else "-") + f" | {emph(verdict)} | "
                  + f"{sl(c_loads)}; {sl(r_loads)} | "
                  + (f"{ci_same[0]:.3f} [{ci_same[1]:.3f}-{ci_same[2]:.3f}] ({n_same[0]}; {n_same[1]}) "
                     if ci_same else "") + emph(v_same) + " | "
                  + " / ".join((spread(c2) + "; " if c2 else "-; ") + spread(r2) for _, c2, r2, _ in per)
                  + " |")
        out.append({"label": l, "key": k, "first": {"c": c1["iops"], "rust": r1["iops"], "ratio": x1},
                    "again": {"ratio": x2, "rounds": [
                        {"round": m, "c": c2["iops"] if c2 else None, "rust": r2["iops"], "ratio": x,
                         "c_passes": c2.get("passes") if c2 else None, "rust_passes": r2.get("passes"),
                         "c_runs": runs(c2) if c2 else None, "rust_runs": runs(r2)}
                        for m, c2, r2, x in per]},
                    "all_loads": ({"ratio": ci[0], "lo95": ci[1], "hi95": ci[2]} if ci else None),
                    "sleeps_per_io": {"c": [x for _, x in c_loads], "rust": [x for _, x in r_loads]},
                    "same_sleeps": {"interval": ({"ratio": ci_same[0], "lo95": ci_same[1], "hi95": ci_same[2]}
                                                 if ci_same else None),
                                    "loads": {"c": n_same[0], "rust": n_same[1]}, "verdict": v_same},
                    "verdict": verdict, "below_in_both": low})
    md += ["", f"{len(cells)} cells run again in {n} round(s); {both} below 0.99x in the first run "
           "and in the median of the rounds. Over all loads of the second run: "
           f"{verdicts['below']} below, {verdicts['not below']} not below, {verdicts['undecided']} undecided. "
           f"At equal sleeps: {same_verdicts['below']} below, {same_verdicts['not below']} not below, "
           f"{same_verdicts['undecided']} undecided, {same_verdicts['no common phase']} with no common phase.", ""]
    write("null-confirm", md, {"cells": out, "rounds": n, "abba": abba, "below_in_both": both,
                               "verdicts": dict(verdicts), "same_sleep_verdicts": dict(same_verdicts)})
    print("\n".join(md))


# --------------------------------------------------------------------------
def report_interleave():
    """OUTDIR/interleave.{json,md,png}: C null_blk and rnull_split at
    irqmode=2 over completion_nsec (bench/plan.py interleave): per cell and
    completion_nsec, both drivers' IOPS, the ratio, and the fio jobs'
    context switches per I/O."""
    by = {}
    for r in rows:
        if r.get("view") == "interleave" and ok(r):
            st = r["settings"]
            by[(st["memory_backed"], r["jobs"], st["completion_nsec"], r["label"])] = r
    mems = sorted({k[0] for k in by})
    jobs = sorted({k[1] for k in by})
    nsecs = sorted({k[2] for k in by})
    md = header("Null block drivers at irqmode=2 over completion_nsec: one job and two")
    md += ["C null_blk and rnull_split, both with the matrix's same settings (1 hardware queue, 256 tags, "
           "scheduler none, 512 B blocks) at `irqmode=2`, `completion_nsec` swept around the matrix's "
           "10000; randread 4 KiB psync QD1 (`bench/plan.py interleave`). A two-job cell is the median "
           "of its windowed fio runs (`bench/guest.py`). \"ctx/IO\" is the fio jobs' context switches "
           "per I/O (fio's `ctx`): a QD1 job that sleeps for each I/O has about 1.", "",
           "In icount the vCPUs take turns and the guest clock counts both vCPUs' instructions. Two "
           "jobs at QD1 each wait for a timer `completion_nsec` of guest time away, and whether that "
           "timer fires before its job has gone to sleep (the job then does not sleep, and saves the "
           "scheduler's work both ways) depends on how the other vCPU's turns fall, which moves with "
           "every instruction either path adds or saves. On a real machine a 10 us timer always "
           "outlasts the few hundred nanoseconds from `queue_rq` to `schedule()`.", ""]
    out, ratios = [], {}
    for mem in mems:
        for j in jobs:
            md += [f"### memory_backed={mem}, {j} job(s)", "",
                   "| completion_nsec | C null_blk IOPS | rnull_split IOPS | x C | C ctx/IO | rnull_split ctx/IO |",
                   "|---:|---:|---:|---:|---:|---:|"]
            for ns in nsecs:
                c, r = by.get((mem, j, ns, "null_blk")), by.get((mem, j, ns, "rnull_split"))
                x = ratio(r["iops"] if r else None, c["iops"] if c else None)
                if x:
                    ratios.setdefault((mem, j), []).append(x)
                cx = lambda row: rs(row.get("ctx_per_io")) if row and row.get("ctx_per_io") is not None else "-"
                md.append(f"| {ns} | {iops(c['iops'] if c else None)} | {iops(r['iops'] if r else None)} | "
                          f"{rs(x)} | {cx(c)} | {cx(r)} |")
                out.append({"memory_backed": mem, "jobs": j, "completion_nsec": ns,
                            "c": c["iops"] if c else None, "rust": r["iops"] if r else None, "ratio": x,
                            "c_ctx_per_io": c.get("ctx_per_io") if c else None,
                            "rust_ctx_per_io": r.get("ctx_per_io") if r else None,
                            "c_runs": cell_runs(c) if c else None, "rust_runs": cell_runs(r) if r else None})
            xs = ratios.get((mem, j), [])
            if xs:
                md += ["", f"rnull_split / C over the sweep: {min(xs):.3f}-{max(xs):.3f}, geometric mean "
                       f"{math.exp(statistics.mean(math.log(x) for x in xs)):.3f}.", ""]
    write("interleave", md, {"points": out})
    print("\n".join(md))
    plt = plt_or_none()
    if not plt or not out:
        return
    fig, axes = plt.subplots(1, len(mems), figsize=(5 * len(mems), 3.6), squeeze=False)
    for ax, mem in zip(axes[0], mems):
        for j in jobs:
            pts = [(p["completion_nsec"], p["ratio"]) for p in out
                   if p["memory_backed"] == mem and p["jobs"] == j and p["ratio"]]
            ax.plot([a for a, _ in pts], [b for _, b in pts], marker="o", label=f"{j} job(s)")
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.axhline(0.99, color="red", lw=0.8, ls="--")
        ax.set_title(f"rnull_split / C null_blk, irqmode=2, memory_backed={mem}", fontsize=9)
        ax.set_xlabel("completion_nsec")
        ax.set_ylabel("x C (IOPS, icount)")
        ax.legend(fontsize=8)
    save_fig(plt, fig, "interleave.png")


{"null": report_null, "virtio": report_virtio, "wallclock": report_wallclock,
 "confirm": report_confirm, "interleave": report_interleave}[args.kind]()
