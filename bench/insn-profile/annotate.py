#!/usr/bin/env python3
"""Per-instruction counts of one guest function from an insn_profile run:
where inside a function its instructions per I/O go.

    bench/insn-profile/annotate.py DIR {c|rust} OBJECT FUNCTION [--min X]

DIR is a scripts/profile-null.sh (or profile-virtio.sh) output directory
(profile.txt, kallsyms[-c|-rust], phases.json, fio-{c,rust}.json); OBJECT
the .ko (or vmlinux) the function was built into; FUNCTION a substring of
its (mangled) symbol name, unique in OBJECT. Prints the function's
disassembly with each instruction's executions per I/O of the phase
(`--min`: only instructions run at least that often, with the branch
targets' labels). A translation block's count is spread over the
instructions it covers, from its start on.
"""
import argparse, bisect, json, os, re, subprocess, sys

sys.path.insert(0, os.path.dirname(__file__))
from report import load_syms, load_phases, fio_ios  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("side", choices=("c", "rust"))
    ap.add_argument("object")
    ap.add_argument("function")
    ap.add_argument("--min", type=float, default=0.0)
    a = ap.parse_args()

    path = f"{a.dir}/kallsyms-{a.side}"
    syms = load_syms(path if os.path.exists(path) else f"{a.dir}/kallsyms")
    hits = [s for s in syms if a.function in s[1]]
    if len(hits) != 1:
        sys.exit(f"{len(hits)} kallsyms symbols match {a.function!r}: "
                 + ", ".join(s[1] for s in hits[:5]))
    base, name, _ = hits[0]
    addrs = [s[0] for s in syms]
    i = bisect.bisect_right(addrs, base)
    end = syms[i][0] if i < len(syms) else base + (1 << 20)

    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", f"--disassemble={name}",
                          a.object], capture_output=True, text=True, check=True).stdout
    insns = []  # (offset from the function's start, text)
    start = None
    for line in dis.splitlines():
        m = re.match(r"^([0-9a-f]+) <(.*)>:$", line)
        if m:
            start = int(m.group(1), 16)
            continue
        m = re.match(r"^\s+([0-9a-f]+):\s+(.*)$", line)
        if m and start is not None:
            insns.append((int(m.group(1), 16) - start, m.group(2).strip()))
    if not insns:
        sys.exit(f"no disassembly of {name} in {a.object}")
    offs = [o for o, _ in insns]

    pmap = json.load(open(f"{a.dir}/phases.json"))
    pn = pmap["whole"][a.side]
    phase = next(p for p in load_phases(f"{a.dir}/profile.txt") if p["header"]["phase"] == pn)
    ios = fio_ios(f"{a.dir}/fio-{a.side}.json")["total_ios"]

    counts = [0] * len(insns)
    total = 0
    for v, n, c in phase["tbs"]:
        if not base <= v < end:
            continue
        total += n * c
        k = bisect.bisect_left(offs, v - base)
        if k >= len(offs) or offs[k] != v - base:
            print(f"# TB at +{v - base:#x} is not an instruction boundary", file=sys.stderr)
            continue
        for j in range(k, min(k + n, len(insns))):
            counts[j] += c
    print(f"# {name}: {total / ios:.1f} instructions per I/O ({a.side}, phase {pn}, {ios} I/Os)")
    for (o, text), c in zip(insns, counts):
        per = c / ios
        if per >= a.min:
            print(f"{per:8.2f}  +{o:#06x}  {text}")


if __name__ == "__main__":
    main()
