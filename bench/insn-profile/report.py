#!/usr/bin/env python3
"""Per-function guest kernel instructions per I/O, C virtio_blk vs
rvirtio_blk, from an insn_profile run (scripts/profile-virtio.sh).

    bench/insn-profile/report.py DIR OUT_PREFIX [--c-phase N] [--rust-phase N] [--top N]

DIR holds profile.txt (the plugin's phases: "phase N ..." headers, then
"vaddr ninsns count" lines), kallsyms (the guest's /proc/kallsyms with the
modules loaded; kallsyms-c and kallsyms-rust instead when the drivers were
loaded one at a time, each taken while its driver was loaded), fio-c.json
and fio-rust.json (fio --output-format=json).
Each translation block is charged to the text symbol at or below its start
address (a block that runs on past the function's end is charged whole to
the function it starts in). Writes OUT_PREFIX.md and OUT_PREFIX.json.
"""
import argparse, bisect, json, os, re, shutil, subprocess, sys
from collections import defaultdict

# Where a vmlinux function belongs, first match wins (modules go by module).
GROUPS = [
    ("Rust helpers (rust_helper_*, vmlinux)", r"^rust_helper_"),
    ("idle", r"^(do_idle|default_idle|default_idle_call|arch_cpu_idle|cpu_idle_poll|cpuidle_.*|"
             r"poll_idle|.*safe_halt|mwait_idle.*|amd_e400_idle|cpu_startup_entry|tick_nohz_idle_.*|"
             r"acpi_idle.*|intel_idle.*|halt)$"),
    ("virtio core/ring/pci (vmlinux)", r"^(virtqueue_|vring_|virtio_|vp_|detach_buf|__vring|.*_split|"
                                       r".*_packed$|vm_notify)"),
    ("blk-mq / block core", r"^(__?blk_|blk_|bio_|__bio_|submit_bio|bvec_|bdev_|__submit_bio|"
                            r"sbitmap|__sbitmap|sbq_|elv_|disk_|part_|__rq_|rq_|iov_iter_get_pages|"
                            r"__bio_iov|bio$)"),
    ("block device direct I/O", r"^(blkdev_|__blkdev_|def_blk_)"),
    ("aio / io syscalls", r"^(aio_|__x64_sys_io_|__do_sys_io_|io_submit|io_getevents|lookup_ioctx|"
                          r"do_io_getevents|read_events|__se_sys_io|kiocb_|refill_reqs_available|"
                          r"user_refill_reqs|put_reqs_available|get_reqs_available|iocb_)"),
    ("interrupts / softirq / IPI", r"^(__?irq_|irq_|handle_|common_interrupt|asm_|__sysvec_|sysvec_|"
                                   r"do_softirq|__do_softirq|irq_exit|__irq_exit|handle_softirqs|"
                                   r"generic_smp_|__flush_smp|smp_call_|native_send_call|"
                                   r"default_send_IPI|x2apic_|lapic_|native_apic|__x2apic|msi_|"
                                   r"apic_|ack_|note_interrupt|__handle_irq)"),
    ("scheduler / timers", r"^(__?schedule|schedule|.*_task_fair|.*_fair$|update_|pick_|enqueue_|"
                           r"dequeue_|try_to_wake_up|wake_up|__wake_up|ttwu_|sched_|__sched|"
                           r"hrtimer_|__hrtimer|tick_|timerqueue_|ktime_|clockevents_|lapic_next|"
                           r"native_sched_clock|sched_clock|psi_|finish_task_switch|__switch_to|"
                           r"rcu_|__rcu|account_|cpuacct_|cgroup_rstat|set_next_|put_prev|"
                           r"check_preempt|resched_|raw_spin_rq|select_task_rq|activate_task|"
                           r"newidle_balance|load_balance|_nohz|nohz_|run_rebalance|"
                           r"__update_load|reweight_|available_idle_cpu|idle_cpu|__calc_delta)"),
    ("syscall entry / exit", r"^(entry_SYSCALL|do_syscall_64|x64_sys_call|syscall_exit|"
                             r"__x64_sys_|exit_to_user|syscall_|fpregs_|switch_fpu|restore_fpregs|"
                             r"arch_exit_to_user|entry_)"),
    ("memory / pages / slab", r"^(kmem_|__kmem|kmalloc|__kmalloc|kfree|__slab|slab_|___slab|"
                              r"mempool_|get_page|put_page|folio_|__folio|pin_user|gup_|__gup|"
                              r"follow_|try_grab|unpin_|__get_user_pages|get_user_pages|"
                              r"internal_get_user|memcg|mod_objcg|obj_cgroup|__mod_|"
                              r"dma_|__dma|swiotlb|iommu|sg_|__sg_|memcpy|memset|memmove|"
                              r"page_|__page|alloc_pages|free_|__free|rmqueue|__rmqueue)"),
    ("locking / percpu", r"^(_raw_spin|_raw_|__raw_|queued_spin|native_queued|__pv_queued|mutex_|"
                         r"__mutex|percpu_|__percpu|rwsem|down_|up_|up$|down$)"),
]
GROUP_RE = [(g, re.compile(r)) for g, r in GROUPS]


def load_syms(path):
    syms = []  # (addr, name, module)
    for line in open(path):
        p = line.split()
        if len(p) < 3 or p[1] not in "tTwW":
            continue
        addr = int(p[0], 16)
        if addr == 0:
            continue
        mod = p[3].strip("[]") if len(p) > 3 else ""
        syms.append((addr, p[2], mod))
    syms.sort()
    return syms


def load_phases(path):
    phases = []  # [{"header": {...}, "tbs": [(vaddr, ninsns, count)]}]
    for line in open(path):
        if line.startswith("phase "):
            w = line.split()
            hdr = {"phase": int(w[1])}
            for kv in w[2:]:
                k, v = kv.split("=")
                hdr[k] = int(v) if v.isdigit() else v
            phases.append({"header": hdr, "tbs": []})
        else:
            a, n, c = line.split()
            phases[-1]["tbs"].append((int(a, 16), int(n), int(c)))
    return phases


def fio_ios(path):
    text = open(path).read()
    j = json.loads(text[text.index("{"):])["jobs"][0]
    # reads or writes, whichever the job did
    r = max((j[d] for d in ("read", "write")), key=lambda x: x["total_ios"])
    return {"total_ios": r["total_ios"], "iops": r["iops"], "runtime_ms": r["runtime"],
            "usr_cpu": j["usr_cpu"], "sys_cpu": j["sys_cpu"]}


def demangler():
    exe = shutil.which("rustfilt") or os.path.expanduser("~/.cargo/bin/rustfilt")
    if not os.path.exists(exe):
        return lambda names: {n: n for n in names}, False

    def run(names):
        names = list(names)
        out = subprocess.run([exe], input="\n".join(names) + "\n", capture_output=True,
                             text=True).stdout.splitlines()
        return dict(zip(names, out)) if len(out) == len(names) else {n: n for n in names}
    return run, True


def group_of(name, mod):
    if mod == "virtio_blk":
        return "virtio_blk module (C driver)"
    if mod == "rvirtio_blk":
        return "rvirtio_blk module (Rust driver)"
    if mod:
        return f"module {mod}"
    if name.startswith("_R"):
        return "Rust in vmlinux (kernel crate)"
    for g, r in GROUP_RE:
        if r.match(name):
            return g
    return "other kernel"


def per_function(phase, syms, addrs):
    funcs = defaultdict(int)
    unknown = 0
    for a, n, c in phase["tbs"]:
        i = bisect.bisect_right(addrs, a) - 1
        if i < 0:
            unknown += n * c
            continue
        _, name, mod = syms[i]
        funcs[(name, mod)] += n * c
    return funcs, unknown


def compare(phases, syms, pc, pr, ios, fio, dem, window_us=None, mods=("virtio_blk", "rvirtio_blk")):
    """syms: {"c": (symbols, addresses), "rust": ...}, the symbol table of each side."""
    res = {}
    for k, pn in (("c", pc), ("rust", pr)):
        ph = next((p for p in phases if p["header"]["phase"] == pn), None)
        if ph is None:
            sys.exit(f"no phase {pn} in profile.txt")
        funcs, unknown = per_function(ph, *syms[k])
        res[k] = {"funcs": funcs, "unknown": unknown, "user": ph["header"]["user_insns"],
                  "kernel": sum(funcs.values()) + unknown}
    # sanity: the C phase runs virtio_blk's code, the Rust phase rvirtio_blk's
    for k, mod, pn in (("c", mods[0], pc), ("rust", mods[1], pr)):
        if not any(m == mod for (_, m) in res[k]["funcs"]):
            sys.exit(f"phase {pn} ({k}) ran no {mod} code: wrong phase numbers?")
    keys = set(res["c"]["funcs"]) | set(res["rust"]["funcs"])
    names = dem(sorted({n for n, _ in keys}))
    rows = []
    for key in keys:
        c = res["c"]["funcs"].get(key, 0) / ios["c"]
        r = res["rust"]["funcs"].get(key, 0) / ios["rust"]
        name, mod = key
        rows.append({"function": names.get(name, name), "symbol": name, "module": mod or "vmlinux",
                     "group": group_of(name, mod), "c": c, "rust": r, "diff": r - c})
    rows.sort(key=lambda x: (-abs(x["diff"]), x["symbol"]))
    groups = defaultdict(lambda: [0.0, 0.0])
    for x in rows:
        groups[x["group"]][0] += x["c"]
        groups[x["group"]][1] += x["rust"]
    tot = {}
    for k in ("c", "rust"):
        tot[k] = {"ios": ios[k],
                  "kernel_insns_per_io": res[k]["kernel"] / ios[k],
                  "user_insns_per_io": res[k]["user"] / ios[k],
                  "unattributed_kernel_insns_per_io": res[k]["unknown"] / ios[k]}
        tot[k]["insns_per_io"] = tot[k]["kernel_insns_per_io"] + tot[k]["user_insns_per_io"]
        if fio.get(k) and fio[k]["iops"]:
            tot[k]["guest_ns_per_io"] = 1e9 / fio[k]["iops"]
        elif window_us:
            tot[k]["guest_ns_per_io"] = window_us[k] * 1e3 / ios[k]
    return {"phases": {"c": pc, "rust": pr}, "totals": tot,
            "groups": {g: {"c": c, "rust": r} for g, (c, r) in groups.items()}, "functions": rows}


def fmt(v):
    return f"{v:,.1f}"


def section(title, what, cmp, top, mods=("virtio_blk", "rvirtio_blk")):
    tot, rows = cmp["totals"], cmp["functions"]
    md = [f"## {title}", "", what, "", f"| per I/O | C {mods[0]} | {mods[1]} | Rust - C |",
          "|---|---:|---:|---:|"]
    for lab, k in (("I/Os", "ios"), ("guest ns per I/O (fio's IOPS; window: its guest time)", "guest_ns_per_io"),
                   ("kernel instructions", "kernel_insns_per_io"),
                   ("user instructions (fio, libaio)", "user_insns_per_io"),
                   ("all instructions", "insns_per_io")):
        if k in tot["c"] and k in tot["rust"]:
            c, r = tot["c"][k], tot["rust"][k]
            md.append(f"| {lab} | {fmt(c)} | {fmt(r)} | {fmt(r - c)} |")
    md += ["", "By group (kernel instructions / I/O):", "", "| group | C | Rust | Rust - C |",
           "|---|---:|---:|---:|"]
    for g, v in sorted(cmp["groups"].items(), key=lambda kv: -abs(kv[1]["rust"] - kv[1]["c"])):
        md.append(f"| {g} | {fmt(v['c'])} | {fmt(v['rust'])} | {fmt(v['rust'] - v['c'])} |")
    md += ["", f"Functions by \\|Rust - C\\| (top {top}, kernel instructions / I/O):", "",
           "| function | module | group | C | Rust | Rust - C |", "|---|---|---|---:|---:|---:|"]
    for x in rows[:top]:
        md.append(f"| `{x['function']}` | {x['module']} | {x['group']} | {fmt(x['c'])} | "
                  f"{fmt(x['rust'])} | {fmt(x['diff'])} |")
    only_rust = sorted((x for x in rows if x["c"] == 0 and x["rust"] > 0), key=lambda x: -x["rust"])
    only_c = sorted((x for x in rows if x["rust"] == 0 and x["c"] > 0), key=lambda x: -x["c"])
    for lab, lst, k in (("Run only in the Rust phase (no C counterpart executed)", only_rust, "rust"),
                        ("Run only in the C phase", only_c, "c")):
        md += ["", f"{lab}, {sum(x[k] for x in lst):,.1f} instructions / I/O in all "
               f"(top {top}):", "", "| function | module | per I/O |", "|---|---|---:|"]
        for x in lst[:top]:
            md.append(f"| `{x['function']}` | {x['module']} | {fmt(x[k])} |")
    return md + [""]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("out")
    ap.add_argument("--c-phase", type=int, default=1)
    ap.add_argument("--rust-phase", type=int, default=2)
    ap.add_argument("--top", type=int, default=40)
    a = ap.parse_args()

    syms = {}
    for k in ("c", "rust"):
        path = f"{a.dir}/kallsyms-{k}"
        table = load_syms(path if os.path.exists(path) else f"{a.dir}/kallsyms")
        syms[k] = (table, [s[0] for s in table])
    phases = load_phases(f"{a.dir}/profile.txt")
    fio = {"c": fio_ios(f"{a.dir}/fio-c.json"), "rust": fio_ios(f"{a.dir}/fio-rust.json")}
    dem, demangled = demangler()
    disks = {}
    if os.path.exists(f"{a.dir}/disks.json"):
        disks = json.load(open(f"{a.dir}/disks.json"))
    bs = {"4k": "4 KiB", "256k": "256 KiB"}.get(disks.get("bs", "4k"), disks.get("bs", "4k"))
    pmap = {}
    if os.path.exists(f"{a.dir}/phases.json"):
        pmap = json.load(open(f"{a.dir}/phases.json"))
    whole = pmap.get("whole", {"c": a.c_phase, "rust": a.rust_phase})
    # scripts/profile-null.sh's disks.json names its modules and workload
    mods = tuple(disks.get("modules", ("virtio_blk", "rvirtio_blk")))
    out = {"fio": fio, "whole": compare(phases, syms, whole["c"], whole["rust"],
                                        {k: fio[k]["total_ios"] for k in fio}, fio, dem, mods=mods)}
    if "window" in pmap:
        out["window"] = compare(phases, syms, pmap["window"]["c"], pmap["window"]["rust"],
                                pmap["window_ios"], {}, dem, pmap.get("window_us"))

    if "workload" in disks:
        md = [f"# Guest instructions per I/O: C {mods[0]} vs {mods[1]}", "", disks["workload"] +
              " Kernel instructions executed in a phase (both vCPUs), charged to functions by the "
              "guest's kallsyms, divided by the I/Os of the phase.", ""]
    else:
        md = ["# Guest instructions per I/O: C virtio_blk vs rvirtio_blk", "",
              "From `scripts/profile-virtio.sh` (the insn_profile TCG plugin in an icount guest): "
              f"{bs} {disks.get('rw', 'randread')}, fio libaio 2 jobs x QD32, --direct=1"
              + (", every run's buffers in the same tmpfs pages (`PROFILE_SHARED=1`)" if disks.get("shared") else "")
              + ", on QEMU null-co disks, 2 queues each, scheduler none. Kernel instructions executed in a phase (both vCPUs), charged "
              "to functions by the guest's kallsyms, divided by the I/Os of the phase.", ""]
    if "window" in out:
        md += section("Steady state", "A window of fio's run cut from outside it (fio's start-up "
                      "and exit are out); I/Os: the disk's completed I/Os in the window "
                      "(/sys/block/*/stat).", out["window"], a.top, mods)
    md += section("Whole fio run", "One fio run per driver (start-up and exit included, after a "
                  "warm-up run); I/Os: fio's total_ios.", out["whole"], a.top, mods)
    md += ["Guest ns per I/O above the instructions per I/O is time icount skipped while every "
           "vCPU idled (waiting for QEMU's virtqueue thread).", "",
           "Caveats: a translation block is charged whole to the function it starts in "
           "(inlined code counts as its caller's; a block falling through into the next symbol "
           "stays with the first); a block left early (interrupt, exception) counts as run whole; "
           "user space is one total; the plugin's own cost is host-side and not counted. "
           + ("Rust symbols demangled with rustfilt." if demangled else "Rust symbols raw (no rustfilt)."),
           ""]
    with open(a.out + ".md", "w") as f:
        f.write("\n".join(md))
    with open(a.out + ".json", "w") as f:
        json.dump(out, f, indent=1)
    print("\n".join(md))
    print(f"(written {a.out}.md and {a.out}.json)")


if __name__ == "__main__":
    main()
