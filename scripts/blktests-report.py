#!/usr/bin/env python3
"""The table of `make blktests` (scripts/blktests.sh), from what the guests
left in OUT/<driver>/ (scripts/blktests-guest.sh): every test, its result
on C null_blk and on the Rust side, a summary line and the time per run.

  scripts/blktests-report.py OUT TREE DRIVER... > results/blktests.md

OUT/<driver>/blktests.env holds the run's settings (BT_*). Results come
from blktests' own output, <run>.log: the status line of each test
([passed], [failed], [not run] and its indented reasons), the "runtime"
line, and for a failure the results file <run>/<dev|nodev>[_cond]/<test>
(reason output/exit/dmesg) with its .out.bad diff or .dmesg report.
"""
import os
import re
import shlex
import sys
from collections import OrderedDict

COLS = {"c": "C null_blk", "rust": "Rust"}
PLACEHOLDER = "not run: no null_blk-compatible build yet"
STATES = ("passed", "failed", "not run")

out, tree, drivers = sys.argv[1], sys.argv[2], sys.argv[3:]


def read(path, default=""):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return default


def env(drv):
    e = {}
    for line in read(os.path.join(out, drv, "blktests.env")).splitlines():
        k, _, v = line.partition("=")
        e[k] = " ".join(shlex.split(v)) if v else ""
    return e


def description(test):
    m = re.search(r'^DESCRIPTION="(.*)"', read(os.path.join(tree, "tests", test)), re.M)
    return m.group(1) if m else ""


def device_test(test):
    """(defines test_device(), has a fallback_device())"""
    src = read(os.path.join(tree, "tests", test))
    return (re.search(r"^test_device\(\)", src, re.M) is not None,
            re.search(r"^fallback_device\(\)", src, re.M) is not None)


def tests_of(f):
    d = os.path.join(tree, "tests", f)
    if os.path.isdir(d):
        return sorted(f + "/" + t for t in os.listdir(d) if re.fullmatch(r"\d{3}", t))
    return [f] if os.path.isfile(d) else []


# check's lines: "T[ => DEV] [(COND) ](DESCRIPTION)" padded, then, once the
# test ran, the same with " [STATUS]"; group requirements: "G/***[ => DEV]".
HEAD = re.compile(r"^(?P<test>[^\s/]+/(?:\d{3}|\*\*\*))(?: => (?P<dev>\S+))?(?P<mid>.*?)\s*"
                  r"(?:\[(?P<st>passed|failed|not run)\])?\s*$")
MARK = re.compile(r"^blktests-guest: test (\S+)\s*$")
KILLED = re.compile(r"^blktests-guest: killed (\S+): (.*?)\s*$")


def split_head(m):
    test, dev, mid = m.group("test"), m.group("dev") or "", m.group("mid").strip()
    desc = description(test) if not test.endswith("***") else ""
    if desc and mid.endswith("(" + desc + ")"):
        mid = mid[: -len(desc) - 2].strip()
    cond = mid[1:-1] if mid.startswith("(") and mid.endswith(")") else ""
    return test, cond, dev


def failure_output(free):
    """the first line of check's diff that differs: -expected, +got"""
    diff = [x.strip() for x in free if x[:1] in "+-" and x[:3] not in ("+++", "---")]
    minus = next((x[1:].strip() for x in diff if x.startswith("-")), None)
    plus = next((x[1:].strip() for x in diff if x.startswith("+")), None)
    s = "output: " + ("got '%s'" % plus if plus is not None else "missing lines")
    if minus is not None:
        s += ", expected '%s'" % minus
    return s + (" (...)" if len(diff) > 2 else "")


def failure(resdir, test, cond, dev, free):
    sub = (dev or "nodev") + ("_" + re.sub(r"[ =]", "_", cond) if cond else "")
    base = os.path.join(resdir, sub, test)
    info = dict(line.split("\t", 1) for line in read(base).splitlines() if "\t" in line)
    reason = info.get("reason", "")
    if reason == "output":
        return failure_output(free)
    if reason == "exit":
        return "exit status " + info.get("exit_status", "?")
    if reason == "dmesg":
        bad = [x for x in read(base + ".dmesg").splitlines()
               if re.search(r"BUG|WARNING|Oops|locking|RCU|protection fault|blktests failure", x)]
        return "dmesg: " + (re.sub(r"^\[[^]]*\]\s*", "", bad[0]) if bad else "report")
    if any(x.startswith("--- ") for x in free):  # no results file: check's diff
        return failure_output(free)
    return reason or (free[0] if free else "")


def parse_log(path, resdir, finished):
    """(test, cond, dev) -> (status, detail, runtime)"""
    res = OrderedDict()
    lines = read(path).splitlines()
    current = pending = None
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        m = MARK.match(line)
        if m:
            current, pending = m.group(1), None
            continue
        m = KILLED.match(line)
        if m:
            key = pending or (m.group(1), "", "")
            res[key] = ("failed", "killed: " + m.group(2), "")
            pending = None
            continue
        m = HEAD.match(line)
        if not m:
            continue
        test, cond, dev = split_head(m)
        st = m.group("st")
        if st is None:
            pending = (test, cond, dev)
            continue
        pending = None
        body = []
        while i < len(lines) and lines[i].startswith("    "):
            body.append(lines[i][4:])
            i += 1
        runtime = ""
        for b in body:
            r = re.match(r"runtime\s+.*\.\.\.\s+(\S+)$", b)
            if r:
                runtime = r.group(1)
        # the key/value lines ("name ... value") are not reasons
        free = [b for b in body if not re.search(r"\s\.\.\.(\s|$)", b)]
        if st == "not run":
            detail = "; ".join(free)
        elif st == "failed":
            detail = failure(resdir, test, cond, dev, free)
        else:
            detail = ""
        if test.endswith("/***"):
            # the group's requirements failed, for the test run (or all)
            for t in [current] if current else tests_of(test[:-4]):
                res[(t, cond, dev)] = (st, detail, "")
        else:
            res[(test, cond, dev)] = (st, detail, runtime)
    if pending and not finished:
        res[pending] = ("failed", "no result: the guest ended during this test", "")
    return res


def runs(drv):
    """the last line of each run in runs.tsv"""
    r = OrderedDict()
    for line in read(os.path.join(out, drv, "runs.tsv")).splitlines():
        p = line.split("\t")
        if len(p) == 4:
            r[p[0]] = dict(name=p[0], kind=p[1], seconds=p[2], killed=p[3])
    return list(r.values())


def devices(drv):
    d = {}
    for line in read(os.path.join(out, drv, "devices.tsv")).splitlines():
        p = line.split("\t")
        if len(p) == 3:
            d[p[0]] = (p[1], p[2])
    return d


envs = {d: env(d) for d in drivers}
e0 = envs[drivers[0]] if drivers else {}
groups = e0.get("BT_GROUPS", "").split()
dev_tests = e0.get("BT_DEV_TESTS", "").split()
exclude = e0.get("BT_EXCLUDE", "").split()
null_ko = envs.get("rust", {}).get("BT_NULL_BLK_KO", "")

# results[drv][(test, cond, where)] = (status, detail, runtime); "where" is
# the device as blktests names it (a fallback device: nullb1), or the role
# "null"/"virtio" for the device-only runs, so that C's nullb0 and Rust's
# rnullb0 share a row.
results = {d: OrderedDict() for d in drivers}
placeholder = {d: False for d in drivers}
runinfo = {d: runs(d) for d in drivers}
devinfo = {d: devices(d) for d in drivers}
run_counts = {}
seen = set()
for drv in drivers:
    role = {v[0]: k for k, v in devinfo[drv].items() if v[0] != "-"}
    for r in runinfo[drv]:
        if r["kind"] == "placeholder":
            placeholder[drv] = True
            continue
        parsed = parse_log(os.path.join(out, drv, r["name"] + ".log"),
                           os.path.join(out, drv, r["name"]), r["killed"] != "running")
        counts = dict.fromkeys(STATES, 0)
        for (test, cond, dev), v in parsed.items():
            where = role.get(dev, dev) if r["kind"] == "devices" else dev
            results[drv][(test, cond, where)] = v
            counts[v[0]] += 1
            seen.add(test)
        run_counts[(drv, r["name"])] = counts
    if not runinfo[drv]:
        results[drv][("(guest)", "", "")] = (
            "failed", "the guest left no results (out/blktests/%s/vm.log)" % drv, "")

# Tests of the groups no run reported: excluded, or device tests without
# a null_blk fallback (check skips them silently without TEST_DEVS).
extra = OrderedDict()
for g in groups:
    for t in tests_of(g):
        if t in seen:
            continue
        if t in exclude or t.split("/")[0] in exclude:
            extra[(t, "", "")] = "not run: excluded (BLKTESTS_EXCLUDE)"
        elif t not in dev_tests and device_test(t) == (True, False):
            extra[(t, "", "")] = "not run: device test without a null_blk fallback, not in BLKTESTS_DEV_TESTS"

keys = list(extra)
for drv in drivers:
    keys += [k for k in results[drv] if k not in keys]


def order(k):
    t, cond, where = k
    return (t.startswith("("), t, {"": 0, "null": 2, "virtio": 3}.get(where, 1), where, cond)


keys.sort(key=order)


def cell(drv, k):
    if k in extra and k not in results[drv]:
        return extra[k]
    t, cond, where = k
    v = results[drv].get(k)
    if v is None:
        if where in ("null", "virtio"):
            disk, note = devinfo[drv].get(where, ("-", "no device-only run"))
            return ("not run: " + note) if disk == "-" else "-"
        return PLACEHOLDER if placeholder[drv] else "-"
    st, detail, runtime = v
    s = st + (" (%s)" % runtime if runtime and st != "not run" else "")
    if detail:
        s += (": " if st == "not run" else " - ") + detail
    return s


def label(k):
    t, cond, where = k
    s = t + (" (%s)" % cond if cond else "")
    if where in ("null", "virtio"):
        names = [devinfo[d].get(where, ("-", ""))[0] for d in drivers]
        s += " => %s disk (%s)" % (where, " / ".join(names))
    elif where:
        s += " => " + where
    return s


def md(s):
    return s.replace("|", "\\|")


def tally(drv):
    c = dict.fromkeys(STATES, 0)
    for k in keys:
        x = cell(drv, k)
        c[next((s for s in STATES if x.startswith(s)), "not run")] += 1
    return c


print("# blktests: C null_blk vs Rust\n")
print("blktests %s, unmodified; kernel flavour blktests (kernel/blktests.fragment); "
      "TIMEOUT=%s, RUN_ZONED_TESTS=%s; each test one ./check, killed after %s s; "
      "QEMU TCG guest `%s`. "
      "Groups over null_blk: %s%s. Device-only tests: %s, on the null disk (`%s`) "
      "and a 1 GiB virtio-blk disk. Rust column: the groups over %s; the device-only "
      "tests on rnull_split (rnullb0) and rvirtio_blk (rvdX).\n"
      % ((read(os.path.join(tree, "UPSTREAM-VERSION")).split() or ["?"])[0],
         e0.get("BT_TIMEOUT", "?"), e0.get("BT_ZONED", "?"), e0.get("BT_TEST_TIMEOUT", "?"),
         e0.get("BT_VM", "?"),
         " ".join(groups) or "none", (", excluding " + " ".join(exclude)) if exclude else "",
         " ".join(dev_tests) or "none", e0.get("BT_NULL_DEV_PARAMS", ""),
         ("`%s` installed as null_blk.ko" % os.path.basename(null_ko)) if null_ko
         else "a null_blk-compatible Rust build (none yet: placeholder)"))
print("| test | description | %s |" % " | ".join(COLS[d] for d in drivers))
print("|---|---|%s" % ("---|" * len(drivers)))
for k in keys:
    print("| %s | %s | %s |" % (md(label(k)), md(description(k[0])),
                               " | ".join(md(cell(d, k)) for d in drivers)))
print()
summary = []
for d in drivers:
    c = tally(d)
    ph = sum(1 for k in keys if cell(d, k) == PLACEHOLDER)
    summary.append("%s: %d passed, %d failed, %d not run%s" % (
        COLS[d], c["passed"], c["failed"], c["not run"], " (%d of them placeholders)" % ph if ph else ""))
print("**Summary** (%d rows): %s\n" % (len(keys), "; ".join(summary)))

# Rust against C, test by test: what `make blktests` is judged on (every
# test that passes with C null_blk passes with the Rust one).
if "c" in drivers and "rust" in drivers:
    both = [k for k in keys if cell("c", k).startswith("passed") and cell("rust", k).startswith("passed")]
    gaps = [k for k in keys if cell("c", k).startswith("passed") and not cell("rust", k).startswith("passed")]
    other = [k for k in keys if not cell("c", k).startswith("passed")]
    print("## Rust against C\n")
    print("Passed: passes with both. Failed: passes with C null_blk, not with the Rust "
          "drivers (failed or not run). Skipped: does not pass with C either.\n")
    for k in gaps:
        print("- gap: %s: %s" % (md(label(k)), md(cell("rust", k))))
    if gaps:
        print()
    print("%d passed, %d failed, %d skipped\n" % (len(both), len(gaps), len(other)))

print("## Time per run\n")
print("| run | %s |" % " | ".join(COLS[d] for d in drivers))
print("|---|%s" % ("---|" * len(drivers)))
names = []
for d in drivers:
    names += [r["name"] for r in runinfo[d] if r["name"] not in names]
for n in names:
    cells = []
    for d in drivers:
        r = next((x for x in runinfo[d] if x["name"] == n), None)
        if r is None:
            cells.append("-")
        elif r["kind"] == "placeholder":
            cells.append("placeholder")
        else:
            c = run_counts.get((d, n), dict.fromkeys(STATES, 0))
            t = "cut off" if r["killed"] == "running" else r["seconds"] + " s"
            k = "" if r["killed"] in ("0", "running") else ", %s killed" % r["killed"]
            cells.append("%s (%d passed, %d failed, %d not run%s)" % (
                t, c["passed"], c["failed"], c["not run"], k))
    print("| %s | %s |" % (n, " | ".join(cells)))
print("\nWhole guests (boot, setup, runs): %s." % ", ".join(
    "%s %s s" % (COLS[d], read(os.path.join(out, d, "guest-seconds")).strip() or "?") for d in drivers))
# BLKTESTS_STRICT=1: a failure on the Rust side fails `make blktests`.
if os.environ.get("BLKTESTS_STRICT") == "1" and "rust" in drivers and tally("rust")["failed"]:
    sys.exit(1)
