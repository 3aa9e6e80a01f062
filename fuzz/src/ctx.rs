//! What every operation works with: the run's settings (`Env`, shared) and
//! the thread's own state (`Ctx`: its random stream, its open disks, its log).

use crate::rng::Rng;
use crate::sys;
use std::io::Write;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// One virtio-blk function of the guest, as the host script made it.
#[derive(Clone)]
pub struct VDev {
    /// PCI address, e.g. 0000:00:11.0
    pub pci: String,
    /// QEMU's ids: the device (`-device ...,id=`) and its block node
    pub qdev: String,
    pub node: String,
    /// the -device arguments, for device_add after a device_del
    pub props: String,
}

pub struct Env {
    pub seed: u64,
    pub start: Instant,
    pub deadline: Option<Instant>,
    pub max_ops: u64,
    pub ops: AtomicU64,
    pub stop: AtomicBool,
    pub failed: Mutex<Vec<String>>,
    pub rnull_ko: Option<String>,
    pub virtio_ko: Option<String>,
    pub vpool: Vec<VDev>,
    pub vdata: Option<VDev>,
    pub qmp_dir: Option<String>,
    pub log_dir: String,
    /// per thread: when its current operation began (ms since start, 0:
    /// none) and what it is, for the hang watchdog
    pub busy: Vec<AtomicU64>,
    pub current: Vec<Mutex<String>>,
    pub tails: Vec<Mutex<std::collections::VecDeque<String>>>,
    /// held for reading around each worker operation, for writing by an
    /// exclusive one
    pub gate: std::sync::RwLock<()>,
    /// per worker: close the held disks before the next operation
    pub drop_slots: Vec<AtomicBool>,
    /// an rnull_split module cycle wants the data checker's disk gone;
    /// the checker says it is with `data_released`
    pub rnull_cycle: AtomicBool,
    pub data_released: AtomicBool,
}

pub const CFS: &str = "/sys/kernel/config/rnull_split";
pub const TAIL: usize = 40;

impl Env {
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
    pub fn fail(&self, why: String) {
        eprintln!("rfuzz: FAIL: {why}");
        self.failed.lock().unwrap().push(why);
        self.stop.store(true, Ordering::SeqCst);
    }
    pub fn ms(&self) -> u64 {
        self.start.elapsed().as_millis() as u64 + 1
    }
}

pub struct Ctx<'a> {
    pub env: &'a Env,
    pub tid: usize,
    pub rng: Rng,
    pub n: u64,
    /// open block devices this thread holds across operations
    pub slots: [Option<(String, OwnedFd)>; 4],
    log: std::fs::File,
}

impl<'a> Ctx<'a> {
    pub fn new(env: &'a Env, tid: usize, stream: u64) -> Self {
        let path = format!("{}/t{tid}.log", env.log_dir);
        let log = std::fs::File::create(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        Ctx {
            env,
            tid,
            rng: Rng::new(env.seed, stream),
            n: 0,
            slots: Default::default(),
            log,
        }
    }

    /// Records the operation about to run (its random arguments all drawn).
    pub fn begin(&mut self, what: String) {
        self.n += 1;
        let line = format!(
            "t{} #{} {:.3}s {what}",
            self.tid,
            self.n,
            self.env.start.elapsed().as_secs_f64()
        );
        let _ = self.log.write_all(format!("{line}\n").as_bytes());
        *self.env.current[self.tid].lock().unwrap() = line.clone();
        self.env.busy[self.tid].store(self.env.ms(), Ordering::SeqCst);
        let mut t = self.env.tails[self.tid].lock().unwrap();
        if t.len() == TAIL {
            t.pop_front();
        }
        t.push_back(line);
    }

    /// Records how it ended.
    pub fn end(&mut self, result: &str) {
        self.env.busy[self.tid].store(0, Ordering::SeqCst);
        let _ = self.log.write_all(format!("  = {result}\n").as_bytes());
        if let Some(l) = self.env.tails[self.tid].lock().unwrap().back_mut() {
            l.push_str(" = ");
            l.push_str(result);
        }
    }

    /// Runs one step: `begin` with `what`, then `f`, then `end` with its result.
    pub fn step(&mut self, what: String, f: impl FnOnce(&mut Self) -> String) {
        self.begin(what);
        let r = f(self);
        self.end(&r);
    }

    pub fn res(&mut self, what: String, f: impl FnOnce(&mut Self) -> sys::Res) {
        self.step(what, |c| sys::show(&f(c)));
    }
}

/// An operation of a driver's table: its name, weight and body (which draws
/// its random arguments, then runs through `Ctx::step`).
pub struct Op {
    pub name: &'static str,
    pub weight: u32,
    pub run: fn(&mut Ctx),
    /// runs alone: takes `Env::gate` for writing (the others take it for
    /// reading around each operation)
    pub exclusive: bool,
}
