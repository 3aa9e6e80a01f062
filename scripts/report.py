#!/usr/bin/python3
"""Turn benchmark samples (JSON lines) into results: a JSON summary, a
Markdown table and a bar plot with the median of each (workload, label) and
its ratio to a baseline label.

    scripts/report.py SAMPLES.jsonl OUTPREFIX --baseline LABEL [--pair A:B ...]

Writes OUTPREFIX.json, OUTPREFIX.md and OUTPREFIX.png; prints the table.
"""
import argparse, json, statistics, sys
from collections import defaultdict

ap = argparse.ArgumentParser()
ap.add_argument("samples")
ap.add_argument("outprefix")
ap.add_argument("--baseline", required=True, action="append",
                help="label the ratio is taken against; WORKLOAD=LABEL for one workload")
ap.add_argument("--title", default="")
args = ap.parse_args()

rows = [json.loads(l) for l in open(args.samples) if l.strip()]
groups = defaultdict(list)
order = []
for r in rows:
    k = (r["workload"], r["label"])
    if k not in groups:
        order.append(k)
    groups[k].append(r)

summary = []
for wl, label in order:
    g = groups[(wl, label)]
    summary.append({
        "workload": wl, "label": label, "samples": len(g),
        "iops_median": statistics.median(x["iops"] for x in g),
        "MBps_median": statistics.median(x["MBps"] for x in g),
        "iops_all": [round(x["iops"]) for x in g],
    })
default_base = next(b for b in args.baseline if "=" not in b)
per_wl = dict(b.split("=", 1) for b in args.baseline if "=" in b)
for s in summary:
    bl = per_wl.get(s["workload"], default_base)
    b = next((x for x in summary if x["workload"] == s["workload"] and x["label"] == bl), None)
    s["baseline"] = bl
    s["ratio"] = (s["iops_median"] / b["iops_median"]) if b and b["iops_median"] else None

lines = ["| workload | driver | samples | IOPS (median) | MB/s (median) | ratio | vs |",
         "|---|---|---:|---:|---:|---:|---|"]
for s in summary:
    r = s["ratio"]
    lines.append(f"| {s['workload']} | {s['label']} | {s['samples']} | {s['iops_median']:,.0f} | "
                 f"{s['MBps_median']:,.1f} | {'%.3f' % r if r is not None else '-'} | {s['baseline']} |")
table = "\n".join(lines)
json.dump({"title": args.title, "baselines": args.baseline, "summary": summary, "samples": rows},
          open(args.outprefix + ".json", "w"), indent=1)
open(args.outprefix + ".md", "w").write((f"### {args.title}\n\n" if args.title else "") + table + "\n")
print(table)

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    wls = list(dict.fromkeys(s["workload"] for s in summary))
    fig, axes = plt.subplots(1, len(wls), figsize=(4.5 * len(wls), 3.8), squeeze=False)
    for ax, wl in zip(axes[0], wls):
        ss = [s for s in summary if s["workload"] == wl]
        metric = "MBps_median" if "1m" in wl else "iops_median"
        ax.bar([s["label"] for s in ss], [s[metric] for s in ss], color="#4a7ab5")
        for i, s in enumerate(ss):
            ax.plot([i] * len(s["iops_all"]),
                    [v * (s[metric] / s["iops_median"]) if s["iops_median"] else 0 for v in s["iops_all"]],
                    "k.", ms=4)
        ax.set_title(wl)
        ax.set_ylabel("MB/s" if metric == "MBps_median" else "IOPS")
        ax.tick_params(axis="x", labelrotation=20)
    fig.suptitle(args.title or "benchmark (median, dots = samples)")
    fig.tight_layout()
    fig.savefig(args.outprefix + ".png", dpi=90)
except Exception as e:  # the numbers above are the result; the plot is a view
    print(f"(no plot: {e})", file=sys.stderr)
