#!/usr/bin/env python3
"""Per-function guest kernel instructions per I/O, C virtio_blk vs
rvirtio_blk, from an insn_profile run (scripts/profile-virtio.sh).

    bench/insn-profile/report.py DIR OUT_PREFIX [--c-phase N] [--rust-phase N] [--top N]

DIR holds profile.txt (the plugin's phases: "phase N ..." headers, then
"vaddr ninsns count" lines, then "L vaddr count shared" lines, one per
locked instruction executed, when the plugin counted them), kallsyms (the
guest's /proc/kallsyms with the modules loaded; kallsyms-c and
kallsyms-rust instead when the drivers were loaded one at a time, each
taken while its driver was loaded), fio-c.json and fio-rust.json (fio
--output-format=json).
Each translation block is charged to the text symbol at or below its start
address (a block that runs on past the function's end is charged whole to
the function it starts in); each locked instruction to the symbol at or
below its address, with its executions and those on cache lines that more
than one vCPU wrote with locked instructions in the phase (insn_profile.c).
Writes OUT_PREFIX.md and OUT_PREFIX.json.
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
    # [{"header": {...}, "tbs": [(vaddr, ninsns, count)], "locked": [(vaddr, count, shared)]}]
    # ("locked" empty, and no locked_insns in the header, from a plugin without it)
    phases = []
    for line in open(path):
        if line.startswith("phase "):
            w = line.split()
            hdr = {"phase": int(w[1])}
            for kv in w[2:]:
                k, v = kv.split("=")
                hdr[k] = int(v) if v.isdigit() else v
            phases.append({"header": hdr, "tbs": [], "locked": []})
        elif line.startswith("L "):
            _, a, c, sh = line.split()
            phases[-1]["locked"].append((int(a, 16), int(c), int(sh)))
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


def per_function_locked(phase, syms, addrs):
    """Locked instructions of a phase by function: ({(name, mod): [count, shared]},
    {(name, mod, offset): [count, shared]}, [unattributed count, shared])."""
    funcs = defaultdict(lambda: [0, 0])
    insns = defaultdict(lambda: [0, 0])
    unknown = [0, 0]
    for a, c, sh in phase["locked"]:
        i = bisect.bisect_right(addrs, a) - 1
        if i < 0:
            unknown[0] += c
            unknown[1] += sh
            continue
        base, name, mod = syms[i]
        for d in (funcs[(name, mod)], insns[(name, mod, a - base)]):
            d[0] += c
            d[1] += sh
    return funcs, insns, unknown


RUST_ONLY_GROUPS = ("Rust helpers (rust_helper_*, vmlinux)", "Rust in vmlinux (kernel crate)")


def compare_locked(res, ios, names, mods):
    """The locked-instruction part of compare(): per I/O, by group, function
    and instruction, C against Rust; "driver": the C driver's module against
    the Rust driver's module, rust_helper_* and the kernel crate's Rust in
    vmlinux (code that runs only for a Rust driver)."""
    def rows_of(k_funcs, extra):
        rows = []
        for key in set(res["c"][k_funcs]) | set(res["rust"][k_funcs]):
            c, cs = res["c"][k_funcs].get(key, (0, 0))
            r, rs = res["rust"][k_funcs].get(key, (0, 0))
            name, mod = key[0], key[1]
            row = {"function": names.get(name, name), "symbol": name, "module": mod or "vmlinux"}
            row.update(extra(key))
            row.update({"c": c / ios["c"], "c_shared": cs / ios["c"],
                        "rust": r / ios["rust"], "rust_shared": rs / ios["rust"]})
            row["diff"] = row["rust"] - row["c"]
            row["shared_diff"] = row["rust_shared"] - row["c_shared"]
            rows.append(row)
        rows.sort(key=lambda x: (-abs(x["shared_diff"]), -abs(x["diff"]), x["symbol"], x.get("offset", 0)))
        return rows
    funcs = rows_of("locked_funcs", lambda key: {"group": group_of(key[0], key[1])})
    insns = rows_of("locked_insns", lambda key: {"offset": key[2]})
    groups = defaultdict(lambda: {"c": 0.0, "c_shared": 0.0, "rust": 0.0, "rust_shared": 0.0})
    for x in funcs:
        for f in ("c", "c_shared", "rust", "rust_shared"):
            groups[x["group"]][f] += x[f]
    driver = {"c": 0.0, "c_shared": 0.0, "rust": 0.0, "rust_shared": 0.0}
    for x in funcs:
        if x["module"] == mods[0]:
            driver["c"] += x["c"]
            driver["c_shared"] += x["c_shared"]
        if x["module"] == mods[1] or x["group"] in RUST_ONLY_GROUPS:
            driver["rust"] += x["rust"]
            driver["rust_shared"] += x["rust_shared"]
    return {"groups": dict(groups), "driver": driver, "functions": funcs, "insns": insns}


def compare(phases, syms, pc, pr, ios, fio, dem, window_us=None, mods=("virtio_blk", "rvirtio_blk")):
    """syms: {"c": (symbols, addresses), "rust": ...}, the symbol table of each side."""
    res = {}
    for k, pn in (("c", pc), ("rust", pr)):
        ph = next((p for p in phases if p["header"]["phase"] == pn), None)
        if ph is None:
            sys.exit(f"no phase {pn} in profile.txt")
        funcs, unknown = per_function(ph, *syms[k])
        res[k] = {"funcs": funcs, "unknown": unknown, "user": ph["header"]["user_insns"],
                  "kernel": sum(funcs.values()) + unknown,
                  # a plugin that counts locked instructions says so in the header
                  "has_locked": "locked_insns" in ph["header"]}
        if res[k]["has_locked"]:
            lf, li, lu = per_function_locked(ph, *syms[k])
            res[k].update({"locked_funcs": lf, "locked_insns": li, "locked_unknown": lu,
                           "locked": sum(v[0] for v in lf.values()) + lu[0],
                           "locked_shared": sum(v[1] for v in lf.values()) + lu[1]})
    # sanity: the C phase runs virtio_blk's code, the Rust phase rvirtio_blk's
    for k, mod, pn in (("c", mods[0], pc), ("rust", mods[1], pr)):
        if not any(m == mod for (_, m) in res[k]["funcs"]):
            sys.exit(f"phase {pn} ({k}) ran no {mod} code: wrong phase numbers?")
    has_locked = res["c"]["has_locked"] and res["rust"]["has_locked"]
    keys = set(res["c"]["funcs"]) | set(res["rust"]["funcs"])
    lkeys = set(res["c"].get("locked_funcs", ())) | set(res["rust"].get("locked_funcs", ()))
    names = dem(sorted({n for n, _ in keys | lkeys}))
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
        if has_locked:
            tot[k]["locked_insns_per_io"] = res[k]["locked"] / ios[k]
            tot[k]["locked_shared_insns_per_io"] = res[k]["locked_shared"] / ios[k]
            tot[k]["unattributed_locked_insns_per_io"] = res[k]["locked_unknown"][0] / ios[k]
    out = {"phases": {"c": pc, "rust": pr}, "totals": tot,
           "groups": {g: {"c": c, "rust": r} for g, (c, r) in groups.items()}, "functions": rows}
    if has_locked:
        out["locked"] = compare_locked(res, ios, names, mods)
    return out


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
    if "locked" in cmp:
        md += locked_section(cmp, top, mods)
    return md + [""]


def fmt3(v):
    return f"{v:,.3f}"


LOCKED_MIN = 0.01   # per I/O: functions below this on both sides are summed, not listed


def locked_section(cmp, top, mods):
    lk, tot = cmp["locked"], cmp["totals"]
    md = ["", "Locked instructions (kernel; per I/O; total / on shared lines, a line being "
          "shared when more than one vCPU wrote it with locked instructions in the phase):", "",
          f"| | C {mods[0]} | {mods[1]} | Rust - C |", "|---|---:|---:|---:|"]
    for lab, k in (("locked instructions", "locked_insns_per_io"),
                   ("on shared lines", "locked_shared_insns_per_io"),
                   ("not attributed to a symbol", "unattributed_locked_insns_per_io")):
        c, r = tot["c"][k], tot["rust"][k]
        md.append(f"| {lab} | {fmt3(c)} | {fmt3(r)} | {fmt3(r - c)} |")
    md += ["", "Locked instructions by group (per I/O, total / shared):", "",
           "| group | C | Rust | Rust - C |", "|---|---:|---:|---:|"]
    for g, v in sorted(lk["groups"].items(), key=lambda kv: (-abs(kv[1]["rust_shared"] - kv[1]["c_shared"]),
                                                          -abs(kv[1]["rust"] - kv[1]["c"]), kv[0])):
        md.append(f"| {g} | {fmt3(v['c'])} / {fmt3(v['c_shared'])} | {fmt3(v['rust'])} / "
                  f"{fmt3(v['rust_shared'])} | {fmt3(v['rust'] - v['c'])} / "
                  f"{fmt3(v['rust_shared'] - v['c_shared'])} |")
    d = lk["driver"]
    md += ["", f"Driver code (C: the {mods[0]} module; Rust: the {mods[1]} module, `rust_helper_*` and "
           f"the kernel crate's Rust in vmlinux): C {fmt3(d['c'])} / {fmt3(d['c_shared'])}, Rust "
           f"{fmt3(d['rust'])} / {fmt3(d['rust_shared'])} locked instructions per I/O (total / on "
           "shared lines)."]
    rows = lk["functions"]
    shown = [x for x in rows if max(x["c"], x["rust"]) >= LOCKED_MIN][:top]
    shown_ids = {id(x) for x in shown}
    rest = [x for x in rows if id(x) not in shown_ids]
    md += ["", f"Locked instructions by function, by \\|Rust - C\\| on shared lines then in all (per "
           f"I/O, total / shared; functions with at least {LOCKED_MIN} on a side, top {top}):", "",
           "| function | module | group | C | Rust | Rust - C |", "|---|---|---|---:|---:|---:|"]
    for x in shown:
        md.append(f"| `{x['function']}` | {x['module']} | {x['group']} | {fmt3(x['c'])} / "
                  f"{fmt3(x['c_shared'])} | {fmt3(x['rust'])} / {fmt3(x['rust_shared'])} | "
                  f"{fmt3(x['diff'])} / {fmt3(x['shared_diff'])} |")
    if rest:
        md.append(f"| {len(rest)} other function{'s' if len(rest) != 1 else ''} | | | {fmt3(sum(x['c'] for x in rest))} / "
                  f"{fmt3(sum(x['c_shared'] for x in rest))} | {fmt3(sum(x['rust'] for x in rest))} / "
                  f"{fmt3(sum(x['rust_shared'] for x in rest))} | |")
    more = sorted((x for x in rows if x["shared_diff"] > 0), key=lambda x: (-x["shared_diff"], x["symbol"]))
    md += ["", "Functions with more locked instructions on shared lines per I/O in the Rust phase "
           "than in the C phase: " + (", ".join(f"`{x['function']}` (+{x['shared_diff']:.3f})"
                                                for x in more[:top]) or "none") + "."]
    return md


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
           + ("Locked instructions are counted at their stores, exactly; a cache line counts as "
              "shared when locked instructions of more than one vCPU wrote it in the phase (guest "
              "virtual addresses; plain loads and stores are not tracked, so a line one vCPU locks "
              "and another only reads or stores to plainly counts as not shared). "
              if "locked" in out["whole"] else "")
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
