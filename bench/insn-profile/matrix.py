#!/usr/bin/env python3
"""The virtio instruction matrix (scripts/profile-virtio-matrix.sh): from
the per-workload profiles in DIR (<rw>-<bs>.json, bench/insn-profile/
report.py), one table of kernel instructions per I/O, C virtio_blk against
rvirtio_blk, in the steady-state window and over the whole fio run, with
the drivers' own modules and the Rust helpers apart, and, from profiles
made with a plugin that counts them, a table of locked instructions per
I/O (total and on cache lines shared between vCPUs); OUT.{md,json,png}.

    matrix.py DIR OUT
"""
import json
import os
import sys

SIZES = {"512": 512, "4k": 4 << 10, "32k": 32 << 10, "256k": 256 << 10, "1M": 1 << 20}
MODS = {"c": "virtio_blk module (C driver)", "rust": "rvirtio_blk module (Rust driver)"}
HELPERS = "Rust helpers (rust_helper_*, vmlinux)"


def cell(prof, view):
    """Per-I/O figures of one view ("window" or "whole") of a profile."""
    v = prof[view]
    t, g = v["totals"], v["groups"]
    out = {}
    for k in ("c", "rust"):
        out[k] = {"ios": t[k]["ios"], "kernel": t[k]["kernel_insns_per_io"],
                  "user": t[k]["user_insns_per_io"],
                  "module": g.get(MODS[k], {}).get(k, 0.0),
                  "helpers": g.get(HELPERS, {}).get(k, 0.0),
                  "guest_ns": t[k].get("guest_ns_per_io")}
        if "locked_insns_per_io" in t[k]:
            out[k]["locked"] = t[k]["locked_insns_per_io"]
            out[k]["locked_shared"] = t[k]["locked_shared_insns_per_io"]
    if "locked" in v:
        out["locked_driver"] = v["locked"]["driver"]
    out["ratio"] = out["rust"]["kernel"] / out["c"]["kernel"]
    out["driver_diff"] = (out["rust"]["module"] + out["rust"]["helpers"]
                          - out["c"]["module"] - out["c"]["helpers"])
    return out


def main():
    d, out = sys.argv[1], sys.argv[2]
    meta = json.load(open(os.path.join(d, "meta.json")))
    rows = []
    for name in sorted(os.listdir(d)):
        if not name.endswith(".json") or name == "meta.json":
            continue
        rw, bs = name[:-5].split("-", 1)
        prof = json.load(open(os.path.join(d, name)))
        row = {"rw": rw, "bs": bs, "whole": cell(prof, "whole")}
        if "window" in prof:
            row["window"] = cell(prof, "window")
        rows.append(row)
    if not rows:
        sys.exit(f"no profiles in {d}")
    rows.sort(key=lambda r: (r["rw"], SIZES.get(r["bs"], 0)))
    view = lambda r: r.get("window") or r["whole"]
    worst = max(view(r)["ratio"] for r in rows)
    md = ["## rvirtio_blk vs C virtio_blk: guest kernel instructions per I/O", "",
          f"Made by `{meta.get('command', '?')}` on {meta.get('date', '?')} (git {meta.get('git', '?')}); "
          f"kernel {meta.get('kernel', '?')}, {meta.get('qemu', '?')} `{meta.get('qemu_accel_args', '')}`, "
          f"{meta.get('vcpus', '?')} vCPUs, the insn_profile TCG plugin (`scripts/profile-virtio.sh` per "
          f"workload); fio runs {meta.get('runtime_ms', '?')} ms of guest time per driver.", "",
          "Both drivers in one icount guest per workload, each on its own QEMU `null-co` disk (2 "
          "virtqueues, scheduler none), fio libaio 2 jobs x QD32 `--direct=1`, every fio run's buffers "
          "in the same tmpfs pages (so both drivers' requests have the same segments). The counts are "
          "the guest kernel's instructions (both vCPUs) per I/O: the I/O path whole, the block layer and "
          "the interrupt included, which icount's IOPS would be the inverse of if QEMU answered in guest "
          "time. It does not: it serves the virtqueues in host time, which moves IOPS by up to 12% "
          "between samples at 32 KiB-1 MiB (`results/full/virtio.md`), and also moves how many "
          "completions one interrupt reaps, so these counts carry some of that too. They do not see "
          "cache misses or the real cost of atomics.", "",
          "\"steady state\" is a window cut from the middle of a fio run; \"whole run\" is fio's run with "
          "its start-up and exit, C's first unless `PROFILE_ORDER=rust-first`: a guest's second whole "
          "run costs 6-9 million instructions more in fio's start-up and exit, whichever driver runs "
          "it. \"driver\" is the module's own instructions plus the Rust helpers "
          "(`rust_helper_*`), Rust minus C.", "",
          "| workload | C kernel insns / I/O | Rust kernel insns / I/O | Rust / C | driver: Rust - C | "
          "whole run: C | Rust | Rust / C |",
          "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        w, h = view(r), r["whole"]
        md.append(f"| {r['rw']} {r['bs']} QD32x2 libaio | {w['c']['kernel']:,.0f} | {w['rust']['kernel']:,.0f} | "
                  f"{w['ratio']:.4f} | {w['driver_diff']:+,.1f} | {h['c']['kernel']:,.0f} | "
                  f"{h['rust']['kernel']:,.0f} | {h['ratio']:.4f} |")
    md += ["", f"{len(rows)} workloads; rvirtio_blk's kernel instructions per I/O are at most "
           f"{worst:.4f}x C virtio_blk's (steady state); a workload's own profile (functions, groups) is "
           f"in `out/profile-virtio-matrix/<rw>-<bs>.md`.", ""]
    locked = [r for r in rows if "locked_driver" in view(r) and "locked_driver" in r["whole"]]
    if locked:
        md += ["### Locked instructions per I/O", "",
               "Locked guest kernel instructions (a LOCK prefix, or xchg with memory) per I/O, total / on "
               "shared lines: a cache line is shared when locked instructions of more than one vCPU wrote "
               "it in the phase (plain loads and stores are not tracked; insn_profile.c). \"driver\": C, "
               "the virtio_blk module; Rust, the rvirtio_blk module, `rust_helper_*` and the kernel crate's "
               "Rust in vmlinux. Steady state unless noted; a workload's functions are in its own "
               "profile.", "",
               "| workload | C: total / shared | Rust: total / shared | shared: Rust - C | driver C | "
               "driver Rust | whole run, shared: Rust - C |",
               "|---|---:|---:|---:|---:|---:|---:|"]
        for r in locked:
            w, h = view(r), r["whole"]
            d = w["locked_driver"]
            md.append(f"| {r['rw']} {r['bs']} QD32x2 libaio | {w['c']['locked']:,.3f} / "
                      f"{w['c']['locked_shared']:,.3f} | {w['rust']['locked']:,.3f} / "
                      f"{w['rust']['locked_shared']:,.3f} | "
                      f"{w['rust']['locked_shared'] - w['c']['locked_shared']:+,.3f} | "
                      f"{d['c']:,.3f} / {d['c_shared']:,.3f} | {d['rust']:,.3f} / {d['rust_shared']:,.3f} | "
                      f"{h['rust']['locked_shared'] - h['c']['locked_shared']:+,.3f} |")
        md += [""]
    with open(out + ".md", "w") as f:
        f.write("\n".join(md))
    with open(out + ".json", "w") as f:
        json.dump({"meta": meta, "rows": rows, "worst_ratio": worst}, f, indent=1)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        plt = None
    if plt:
        fig, ax = plt.subplots(figsize=(8, 3.5))
        labels = [f"{r['rw'][4:]} {r['bs']}" for r in rows]
        ax.bar(range(len(rows)), [view(r)["ratio"] for r in rows], color="tab:blue")
        ax.axhline(1.0, color="black", lw=0.8)
        ax.axhline(1.01, color="tab:red", lw=0.8, ls="--", label="1.01")
        ax.set_xticks(range(len(rows)), labels, rotation=30, ha="right")
        lo = min(0.97, min(view(r)["ratio"] for r in rows) - 0.005)
        ax.set_ylim(lo, max(1.03, worst + 0.005))
        ax.set_ylabel("Rust / C kernel insns per I/O")
        ax.set_title("rvirtio_blk vs virtio_blk, steady state (icount, insn_profile)")
        ax.legend()
        fig.tight_layout()
        fig.savefig(out + ".png", dpi=110)
    print("\n".join(md))


if __name__ == "__main__":
    main()
