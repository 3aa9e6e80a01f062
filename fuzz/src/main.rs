//! rfuzz: a seeded interface fuzzer of rnull_split and rvirtio_blk, run in
//! the test guest on the debug kernel (tests/guest/fuzz.sh; `make fuzz`).
//!
//! Worker threads pick operations from the drivers' tables (rnull.rs,
//! virtio.rs) by weight and run them at once; a data checker per driver
//! (data.rs) checks every read of its disk; a monitor reads the kernel log
//! and a watchdog times every operation. The first kernel report, wrong
//! read or operation stuck past FUZZ_HANG seconds stops the run, which then
//! prints the seed and each thread's last operations.
//!
//! Each thread's sequence of operations and arguments is a function of the
//! seed alone (arguments are drawn before anything is looked at), so a seed
//! replays the same sequences; how the threads interleave is not replayed
//! (FUZZ_THREADS=1 replays one sequence exactly).
//!
//! Settings (environment): FUZZ_SEED, FUZZ_OPS (operations of the workers,
//! 0: no limit), FUZZ_SECONDS, FUZZ_THREADS, FUZZ_HANG, FUZZ_LOG (directory
//! for per-thread logs), FUZZ_RNULL_KO, FUZZ_VIRTIO_KO (the modules; a
//! driver without one is not fuzzed), FUZZ_VDEVS (the virtio-blk functions:
//! `pci|qemu id|node|device_add JSON` separated by `;`, the first the data
//! disk), FUZZ_QMP (the QMP relay directory), FUZZ_BAD (the kernel-log
//! regex of reports).

mod blk;
mod ctx;
mod data;
mod qmp;
mod rng;
mod rnull;
mod sys;
mod virtio;

use ctx::{Ctx, Env, Op, VDev, CFS};
use std::collections::BTreeMap;
use std::io::Read;
use std::sync::atomic::Ordering;
use std::sync::Mutex;
use std::time::{Duration, Instant};

fn var(k: &str) -> Option<String> {
    std::env::var(k).ok().filter(|v| !v.is_empty())
}

fn num(k: &str, d: u64) -> u64 {
    var(k)
        .map(|v| {
            v.parse()
                .unwrap_or_else(|_| panic!("{k}={v}: not a number"))
        })
        .unwrap_or(d)
}

/// Reads the kernel log from now on; a line matching `bad` fails the run.
fn monitor(env: &Env, bad: regex::Regex) {
    let Ok(mut f) = std::fs::File::open("/dev/kmsg") else {
        eprintln!("rfuzz: /dev/kmsg: cannot read the kernel log");
        return;
    };
    // SAFETY: lseek on a descriptor we own; /dev/kmsg's SEEK_END skips the
    // records before the run.
    unsafe { libc::lseek(std::os::fd::AsRawFd::as_raw_fd(&f), 0, libc::SEEK_END) };
    let mut buf = vec![0u8; 8192];
    let mut after: Option<u32> = None;
    loop {
        let n = match f.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.raw_os_error() == Some(libc::EPIPE) => continue,
            Err(_) => return,
        };
        let rec = String::from_utf8_lossy(&buf[..n]);
        let msg = rec
            .split_once(';')
            .map(|x| x.1)
            .unwrap_or(&rec)
            .lines()
            .next()
            .unwrap_or("")
            .to_string();
        if let Some(k) = after.as_mut() {
            // the report's first lines, for the summary
            if *k > 0 {
                env.failed.lock().unwrap().push(format!("kernel:   {msg}"));
                *k -= 1;
            }
        } else if bad.is_match(&msg) {
            env.fail(format!("kernel report: {msg}"));
            after = Some(25);
        }
    }
}

/// Fails the run when an operation takes longer than `hang` seconds, and
/// asks the kernel for the blocked tasks' stacks.
fn watchdog(env: &Env, hang: u64) {
    while !env.stopped() || env.busy.iter().any(|b| b.load(Ordering::SeqCst) != 0) {
        std::thread::sleep(Duration::from_secs(1));
        let now = env.ms();
        for (t, b) in env.busy.iter().enumerate() {
            let since = b.load(Ordering::SeqCst);
            if since != 0 && now.saturating_sub(since) > hang * 1000 {
                let cur = env.current[t].lock().unwrap().clone();
                // First, before the failure ends the run (and SysRq's
                // stacks may end it through the kernel-log monitor): a
                // task waiting for an I/O that never ends sleeps
                // interruptibly (io_uring) and is not in SysRq w's list:
                // the fuzzer's own threads' kernel stacks, and where the
                // block layer holds the requests (blk-mq debugfs: queue and
                // hctx state, dispatch lists, busy requests) and what the
                // drivers count in flight.
                let script = "for f in /proc/$PPID/task/*/stack; do echo \"== $f\"; cat \"$f\"; done; \
                    for g in '/sys/block/*/inflight' '/sys/kernel/debug/block/*/state' \
                    '/sys/kernel/debug/block/*/hctx*/state' '/sys/kernel/debug/block/*/hctx*/dispatch' \
                    '/sys/kernel/debug/block/*/hctx*/busy' '/sys/kernel/debug/block/*/requeue_list' \
                    '/sys/kernel/debug/rvirtio_blk' '/sys/kernel/debug/rnull_split'; do \
                    echo \"== $g\"; timeout 10 grep -r . $g 2>&1 | head -n 2000; done";
                if let Ok(o) = std::process::Command::new("bash")
                    .args(["-c", script])
                    .output()
                {
                    let f = format!("{}/block-hang.txt", env.log_dir);
                    if std::fs::write(&f, &o.stdout).is_ok() {
                        println!(
                            "rfuzz: the fuzzer's kernel stacks and the block layer's state: {f}"
                        );
                    }
                }
                env.fail(format!("hang: {cur} has not returned in {hang} s"));
                let _ = sys::write_file("/proc/sysrq-trigger", b"w");
                std::thread::sleep(Duration::from_secs(10));
                // the stacks are KERN_INFO, below the console's level
                if let Ok(o) = std::process::Command::new("dmesg").output() {
                    let f = format!("{}/dmesg-hang.txt", env.log_dir);
                    if std::fs::write(&f, &o.stdout).is_ok() {
                        println!("rfuzz: the kernel log with the blocked tasks' stacks: {f}");
                    }
                }
                report(env, &BTreeMap::new());
                exit(1);
            }
        }
    }
}

fn parse_vdevs(s: &str) -> Vec<VDev> {
    s.split(';')
        .filter(|x| !x.is_empty())
        .map(|d| {
            let f: Vec<&str> = d.splitn(4, '|').collect();
            assert!(
                f.len() == 4,
                "FUZZ_VDEVS entry {d:?}: want pci|id|node|props"
            );
            VDev {
                pci: f[0].into(),
                qdev: f[1].into(),
                node: f[2].into(),
                props: f[3].into(),
            }
        })
        .collect()
}

/// After the run: every configfs disk removed and both modules unloaded,
/// which fails when something still holds them (a leaked reference).
fn teardown(env: &Env) {
    if env.rnull_ko.is_some() {
        if let Ok(d) = std::fs::read_dir(CFS) {
            for e in d.filter_map(|e| e.ok()) {
                let p = e.path();
                if !p.is_dir() {
                    continue;
                }
                let _ = sys::write_file(&format!("{}/power", p.display()), b"0");
                if let Err(e) = sys::rmdir(&p.display().to_string()).or_else(|e| {
                    if e == libc::ENOENT {
                        Ok(0)
                    } else {
                        Err(e)
                    }
                }) {
                    env.fail(format!(
                        "teardown: rmdir {}: {}",
                        p.display(),
                        sys::errname(e)
                    ));
                }
            }
        }
    }
    for (ko, m) in [
        (&env.rnull_ko, "rnull_split"),
        (&env.virtio_ko, "rvirtio_blk"),
    ] {
        if ko.is_none() {
            continue;
        }
        let t = Instant::now();
        loop {
            match sys::delete_module(m) {
                Ok(_) | Err(libc::ENOENT) => break,
                Err(e) if t.elapsed() > Duration::from_secs(30) => {
                    env.fail(format!("teardown: rmmod {m}: {} for 30 s", sys::errname(e)));
                    break;
                }
                Err(_) => std::thread::sleep(Duration::from_millis(200)),
            }
        }
    }
}

fn main() {
    let seed = var("FUZZ_SEED")
        .map(|v| v.parse().expect("FUZZ_SEED"))
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
                % 1_000_000_000
        });
    let threads = num("FUZZ_THREADS", 4) as usize;
    let seconds = num("FUZZ_SECONDS", 60);
    let vdevs = parse_vdevs(&var("FUZZ_VDEVS").unwrap_or_default());
    let (vdata, vpool) = match vdevs.split_first() {
        Some((d, p)) => (Some(d.clone()), p.to_vec()),
        None => (None, Vec::new()),
    };
    let start = Instant::now();
    let nthreads = threads + 2;
    let env = Env {
        seed,
        start,
        deadline: (seconds > 0).then(|| start + Duration::from_secs(seconds)),
        max_ops: num("FUZZ_OPS", 0),
        ops: Default::default(),
        stop: Default::default(),
        failed: Mutex::new(Vec::new()),
        rnull_ko: var("FUZZ_RNULL_KO"),
        virtio_ko: var("FUZZ_VIRTIO_KO").filter(|_| vdata.is_some()),
        vpool,
        vdata,
        qmp_dir: var("FUZZ_QMP"),
        log_dir: var("FUZZ_LOG").unwrap_or_else(|| "/tmp/rfuzz".into()),
        busy: (0..nthreads).map(|_| Default::default()).collect(),
        current: (0..nthreads).map(|_| Mutex::new(String::new())).collect(),
        tails: (0..nthreads)
            .map(|_| Mutex::new(Default::default()))
            .collect(),
        gate: Default::default(),
        drop_slots: (0..nthreads).map(|_| Default::default()).collect(),
        rnull_cycle: Default::default(),
        data_released: Default::default(),
    };
    let _ = std::fs::create_dir_all(&env.log_dir);
    let hang = num("FUZZ_HANG", 180);
    let bad = regex::Regex::new(
        &var("FUZZ_BAD").unwrap_or_else(|| "WARNING:|BUG:|Oops|KASAN|Call Trace".into()),
    )
    .expect("FUZZ_BAD");

    let mut table: Vec<(&'static str, &Op)> = Vec::new();
    if env.rnull_ko.is_some() {
        table.extend(
            rnull::OPS
                .iter()
                .chain(&rnull::BLK_OPS)
                .map(|o| ("rnull", o)),
        );
    }
    if env.virtio_ko.is_some() {
        // PCI function resets (rvirtio_blk's reset_prepare/reset_done),
        // unless FUZZ_PCI_RESET=0.
        let reset = var("FUZZ_PCI_RESET").as_deref() != Some("0");
        table.extend(
            virtio::OPS
                .iter()
                .chain(&virtio::BLK_OPS)
                .filter(|o| reset || o.name != "pci_reset")
                .map(|o| ("virtio", o)),
        );
    }
    assert!(
        !table.is_empty(),
        "no driver to fuzz: set FUZZ_RNULL_KO and/or FUZZ_VIRTIO_KO with FUZZ_VDEVS"
    );
    println!(
        "rfuzz: seed {seed}, {threads} threads, {} s, {} ops, hang {hang} s, drivers:{}{}",
        seconds,
        env.max_ops,
        if env.rnull_ko.is_some() {
            " rnull_split"
        } else {
            ""
        },
        if env.virtio_ko.is_some() {
            " rvirtio_blk"
        } else {
            ""
        }
    );
    if let Some(ko) = &env.virtio_ko {
        let _ = sys::finit_module(ko, "");
    }
    let counts: Mutex<BTreeMap<String, (u64, u64)>> = Mutex::new(BTreeMap::new());
    let env: &'static Env = Box::leak(Box::new(env));
    // Both outlive the workers: the monitor blocks in read(), and the
    // watchdog ends the process itself when a worker never returns.
    std::thread::spawn(move || monitor(env, bad));
    std::thread::spawn(move || watchdog(env, hang));

    std::thread::scope(|s| {
        let table = &table;
        let counts = &counts;
        for t in 0..threads {
            s.spawn(move || {
                let mut c = Ctx::new(env, t, t as u64);
                let mut mine: BTreeMap<String, (u64, u64)> = BTreeMap::new();
                while !env.stopped() {
                    if env.deadline.is_some_and(|d| Instant::now() >= d) {
                        env.stop.store(true, Ordering::SeqCst);
                        break;
                    }
                    if env.max_ops > 0 && env.ops.fetch_add(1, Ordering::SeqCst) >= env.max_ops {
                        env.stop.store(true, Ordering::SeqCst);
                        break;
                    }
                    let i = c.rng.weighted(table.iter().map(|(_, o)| o.weight));
                    let (drv, op) = table[i];
                    let before = c.n;
                    // timed from here: a lookup before the op's `begin` is
                    // covered too
                    *env.current[t].lock().unwrap() = format!(
                        "t{t} after #{before}: {drv}/{} (arguments not logged yet)",
                        op.name
                    );
                    env.busy[t].store(env.ms(), Ordering::SeqCst);
                    if env.drop_slots[t].swap(false, Ordering::SeqCst) {
                        c.slots = Default::default();
                    }
                    if op.exclusive {
                        (op.run)(&mut c);
                    } else {
                        let _g = env.gate.read().unwrap();
                        (op.run)(&mut c);
                    }
                    env.busy[t].store(0, Ordering::SeqCst);
                    let ok = c.n > before
                        && env.tails[t]
                            .lock()
                            .unwrap()
                            .back()
                            .is_some_and(|l| l.contains(" = ok"));
                    let e = mine.entry(format!("{drv}/{}", op.name)).or_default();
                    e.0 += 1;
                    e.1 += ok as u64;
                }
                c.slots = Default::default();
                let mut all = counts.lock().unwrap();
                for (k, v) in mine {
                    let e = all.entry(k).or_default();
                    e.0 += v.0;
                    e.1 += v.1;
                }
            });
        }
        if env.rnull_ko.is_some() {
            s.spawn(move || data::rnull(&mut Ctx::new(env, threads, 1000)));
        }
        if env.virtio_ko.is_some() {
            s.spawn(move || data::virtio(&mut Ctx::new(env, threads + 1, 1001)));
        }
    });
    if env.failed.lock().unwrap().is_empty() {
        teardown(env);
    }
    // give a report of the teardown the time to reach the monitor
    std::thread::sleep(Duration::from_secs(2));
    report(env, &counts.lock().unwrap());
    let failed = !env.failed.lock().unwrap().is_empty();
    exit(failed as i32);
}

/// Ends the process, after writing `code` to FUZZ_RC_FILE: a thread stuck
/// in the kernel keeps the process from ending, and the guest script waits
/// for the file.
fn exit(code: i32) -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    if let Some(f) = var("FUZZ_RC_FILE") {
        let _ = std::fs::write(f, format!("{code}\n"));
    }
    std::process::exit(code)
}

fn report(env: &Env, counts: &BTreeMap<String, (u64, u64)>) {
    let total: u64 = counts.values().map(|v| v.0).sum();
    println!("rfuzz: operations (succeeded/run):");
    for (k, (n, ok)) in counts {
        println!("rfuzz:   {k:24} {ok:6}/{n}");
    }
    let failed = env.failed.lock().unwrap();
    if failed.is_empty() {
        println!(
            "rfuzz: seed {}: {total} operations in {:.0} s, no report",
            env.seed,
            env.start.elapsed().as_secs_f64()
        );
        return;
    }
    println!(
        "rfuzz: seed {}: FAILED after {total} operations, {:.0} s:",
        env.seed,
        env.start.elapsed().as_secs_f64()
    );
    for f in failed.iter() {
        println!("rfuzz:   {f}");
    }
    println!(
        "rfuzz: the last operations of each thread (replay: make fuzz FUZZ_SEED={}):",
        env.seed
    );
    for (t, tail) in env.tails.iter().enumerate() {
        for l in tail.lock().unwrap().iter().skip(TAIL_SHOWN_SKIP) {
            println!("rfuzz:   [{t}] {l}");
        }
    }
}

const TAIL_SHOWN_SKIP: usize = ctx::TAIL - 15;
