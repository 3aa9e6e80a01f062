//! The data checkers: one thread per driver writes stamped sectors to a disk
//! no destructive operation targets, remembers what each sector must hold,
//! and checks every read against it while the other threads change
//! everything around that disk (queue knobs, scheduler, binding, resets,
//! module loads). A sector holds its number and the generation of the write
//! that stored it; a write or trim that failed leaves its sectors unknown.

use crate::ctx::{Ctx, CFS};
use crate::sys::{self, Buf};
use std::os::fd::OwnedFd;
use std::sync::atomic::Ordering;

const UNKNOWN: u64 = 0;
const ZERO: u64 = 1;

pub struct Shadow {
    pub sectors: Vec<u64>,
    next_gen: u64,
}

fn stamp(sector: u64, gen: u64, out: &mut [u8]) {
    let mut x = sector.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ gen;
    out[..8].copy_from_slice(b"RFZSECT!");
    out[8..16].copy_from_slice(&sector.to_le_bytes());
    out[16..24].copy_from_slice(&gen.to_le_bytes());
    for chunk in out[24..].chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let b = x.to_le_bytes();
        let n = chunk.len();
        chunk.copy_from_slice(&b[..n]);
    }
}

impl Shadow {
    pub fn new(bytes: u64, init: u64) -> Self {
        Shadow {
            sectors: vec![init; (bytes / 512) as usize],
            next_gen: 2,
        }
    }

    /// Fills `buf` for a write at `off` and returns its generation.
    fn fill(&mut self, off: u64, buf: &mut [u8]) -> u64 {
        let gen = self.next_gen;
        self.next_gen += 1;
        for (i, s) in buf.chunks_mut(512).enumerate() {
            stamp(off / 512 + i as u64, gen, s);
        }
        gen
    }

    fn set(&mut self, off: u64, len: u64, v: u64) {
        let (a, b) = ((off / 512) as usize, ((off + len) / 512) as usize);
        let b = b.min(self.sectors.len());
        for s in &mut self.sectors[a.min(b)..b] {
            *s = v;
        }
    }

    /// Checks what a read of `buf.len()` bytes at `off` returned; the first
    /// wrong sector, described.
    fn check(&self, off: u64, buf: &[u8]) -> Option<String> {
        let mut want = [0u8; 512];
        for (i, got) in buf.chunks(512).enumerate() {
            let s = off / 512 + i as u64;
            let Some(&g) = self.sectors.get(s as usize) else {
                break;
            };
            if got.len() < 512 || g == UNKNOWN {
                continue;
            }
            if g == ZERO {
                want.fill(0);
            } else {
                stamp(s, g, &mut want);
            }
            if got != want {
                let found = if got[..8] == *b"RFZSECT!" {
                    format!(
                        "sector {} of generation {}",
                        u64::from_le_bytes(got[8..16].try_into().unwrap()),
                        u64::from_le_bytes(got[16..24].try_into().unwrap())
                    )
                } else if got.iter().all(|&b| b == 0) {
                    "zeroes".into()
                } else {
                    format!("{:02x?}", &got[..16])
                };
                let w = if g == ZERO {
                    "zeroes".into()
                } else {
                    format!("generation {g}")
                };
                return Some(format!("sector {s}: want {w}, read {found}"));
            }
        }
        None
    }
}

/// One checked step on an open disk of `bytes` bytes and block size `bs`:
/// a write, a read, a trim or write-zeroes, a flush. Returns false when the
/// disk failed in a way that says it is gone (the caller reopens it).
pub fn step(
    c: &mut Ctx,
    name: &str,
    fd: &OwnedFd,
    sh: &mut Shadow,
    bs: u64,
    trim_zeroes: bool,
) -> bool {
    let bytes = sh.sectors.len() as u64 * 512;
    let kind = c.rng.below(100);
    let blocks = c.rng.range(1, 64);
    let nr = c.rng.range(1, 4) as usize;
    let off = c.rng.below(bytes / bs - blocks * nr as u64) * bs;
    let len = (blocks * bs) as usize;
    let engine = c.rng.below(5);
    let what = format!(
        "data {name} {} off {off} len {len} x{nr} engine {engine}",
        match kind {
            0..=39 => "write",
            40..=84 => "read",
            85..=89 => "trim",
            90..=94 => "zeroout",
            _ => "flush",
        }
    );
    let mut alive = true;
    c.step(what, |c| {
        let mut buf = Buf::new(len * nr);
        let res = match kind {
            0..=39 => {
                let mut gens = Vec::new();
                for i in 0..nr {
                    let o = off + (i * len) as u64;
                    gens.push(sh.fill(o, &mut buf.as_mut()[i * len..(i + 1) * len]));
                }
                let rs: Vec<sys::Res> = match engine {
                    0 | 1 => (0..nr)
                        .map(|i| {
                            let f = if engine == 1 { sys::RWF_DSYNC } else { 0 };
                            sys::rw(
                                fd,
                                true,
                                &mut buf.as_mut()[i * len..(i + 1) * len],
                                off + (i * len) as u64,
                                f,
                            )
                        })
                        .collect(),
                    _ => {
                        let ops: Vec<_> = (0..nr)
                            .map(|i| (true, off + (i * len) as u64, len))
                            .collect();
                        sys::uring(fd, false, buf.as_mut(), &ops)
                            .unwrap_or_else(|e| vec![Err(e); nr])
                    }
                };
                for (i, r) in rs.iter().enumerate() {
                    let o = off + (i * len) as u64;
                    match r {
                        Ok(n) if *n == len as u64 => sh.set(o, len as u64, gens[i]),
                        _ => sh.set(o, len as u64, UNKNOWN),
                    }
                }
                rs
            }
            40..=84 => {
                let rs: Vec<sys::Res> = match engine {
                    0..=2 => (0..nr)
                        .map(|i| {
                            sys::rw(
                                fd,
                                false,
                                &mut buf.as_mut()[i * len..(i + 1) * len],
                                off + (i * len) as u64,
                                0,
                            )
                        })
                        .collect(),
                    _ => {
                        let ops: Vec<_> = (0..nr)
                            .map(|i| (false, off + (i * len) as u64, len))
                            .collect();
                        sys::uring(fd, false, buf.as_mut(), &ops)
                            .unwrap_or_else(|e| vec![Err(e); nr])
                    }
                };
                for (i, r) in rs.iter().enumerate() {
                    if let Ok(n) = r {
                        let o = off + (i * len) as u64;
                        let got = &buf.as_ref()[i * len..i * len + (*n as usize).min(len)];
                        if let Some(bad) = sh.check(o, got) {
                            c.env
                                .fail(format!("data: {name}: read at {o} len {len}: {bad}"));
                        }
                    }
                }
                rs
            }
            85..=94 => {
                let req = if kind < 90 { 0x1277 } else { 0x127f };
                let mut r = [off, len as u64 * nr as u64];
                let res = sys::ioctl_ptr(fd, req, r.as_mut_ptr().cast());
                let v = match (&res, kind < 90) {
                    (Ok(_), false) => ZERO,
                    (Ok(_), true) if trim_zeroes => ZERO,
                    (Err(libc::EOPNOTSUPP), _) => return "EOPNOTSUPP".into(),
                    _ => UNKNOWN,
                };
                sh.set(off, len as u64 * nr as u64, v);
                vec![res]
            }
            _ => vec![sys::fsync(fd)],
        };
        if rs_gone(&res) {
            alive = false;
        }
        res.iter().map(sys::show).collect::<Vec<_>>().join(",")
    });
    alive
}

fn rs_gone(rs: &[sys::Res]) -> bool {
    rs.iter()
        .any(|r| matches!(r, Err(libc::ENODEV) | Err(libc::ENXIO)))
}

/// rnull_split's checker: epochs of a memory-backed configfs disk `fzdata`
/// with a random valid configuration, checked I/O, then its removal (so the
/// module can be unloaded between epochs).
pub fn rnull(c: &mut Ctx) {
    let dir = format!("{CFS}/fzdata");
    while !c.env.stopped() {
        let bs = *c.rng.pick(&[512u64, 1024, 2048, 4096]);
        let blk_mq = c.rng.pct(60);
        // mkdir takes the module parameters as defaults, which a module
        // cycle may have loaded with zoned=1 (unwritten sectors then read
        // as 0xFF), a bandwidth limit or shared tags: set them back
        let mut sets: Vec<(&str, String)> = vec![
            ("zoned", "0".into()),
            ("mbps", "0".into()),
            ("shared_tags", "0".into()),
            ("memory_backed", "1".into()),
            ("size", "64".into()),
            ("blocksize", bs.to_string()),
            ("queue_mode", if blk_mq { "2" } else { "0" }.into()),
            ("irqmode", c.rng.below(3).to_string()),
            (
                "completion_nsec",
                c.rng.pick(&["0", "2000", "20000"]).to_string(),
            ),
            ("discard", c.rng.below(2).to_string()),
            ("split_clone", c.rng.pick(&["fast", "deep"]).to_string()),
            (
                "max_sectors",
                c.rng.pick(&["0", "16", "64", "2560"]).to_string(),
            ),
            ("hw_queue_depth", c.rng.pick(&["1", "4", "64"]).to_string()),
            ("submit_queues", c.rng.range(1, 2).to_string()),
        ];
        let cache = c.rng.pick(&["0", "0", "1", "4"]).to_string();
        if blk_mq {
            sets.push(("cache_size", cache));
            sets.push(("blocking", c.rng.below(2).to_string()));
        }
        let steps = c.rng.range(20, 300);
        let pause = c.rng.range(10, 2000);
        let what = sets
            .iter()
            .map(|(a, v)| format!("{a}={v}"))
            .collect::<Vec<_>>()
            .join(" ");
        let mut made = false;
        c.step(format!("data fzdata make {what}"), |c| {
            if !std::path::Path::new(CFS).exists() {
                if let Some(ko) = c.env.rnull_ko.clone() {
                    let _ = sys::finit_module(&ko, "nr_devices=0");
                }
            }
            // a directory left from before keeps its data (power=0 does
            // not free it): start from an empty one
            let _ = sys::write_file(&format!("{dir}/power"), b"0");
            let _ = sys::rmdir(&dir);
            if let Err(e) = sys::mkdir(&dir) {
                return format!("mkdir {}", sys::errname(e));
            }
            for (a, v) in &sets {
                if let Err(e) = sys::write_file(&format!("{dir}/{a}"), v.as_bytes()) {
                    return format!("{a}={v}: {}", sys::errname(e));
                }
            }
            match sys::write_file(&format!("{dir}/power"), b"1") {
                Ok(_) => {
                    made = true;
                    "ok".into()
                }
                Err(e) => format!("power {}", sys::errname(e)),
            }
        });
        if made {
            let mut sh = Shadow::new(64 << 20, ZERO);
            match crate::blk::open_dev("fzdata", libc::O_RDWR | libc::O_DIRECT) {
                Ok(mut fd) => {
                    for _ in 0..steps {
                        if c.env.stopped() || c.env.rnull_cycle.load(Ordering::SeqCst) {
                            break;
                        }
                        // A power cycle keeps the data (C null_blk's
                        // semantics): flushed first, so that a cache
                        // holds nothing the shadow counts on.
                        if c.rng.pct(2) {
                            let mut ok = false;
                            c.step("data fzdata flush, power=0, power=1".into(), |_| {
                                let f = sys::fsync(&fd);
                                let off = sys::write_file(&format!("{dir}/power"), b"0");
                                let on = sys::write_file(&format!("{dir}/power"), b"1");
                                let reopen =
                                    crate::blk::open_dev("fzdata", libc::O_RDWR | libc::O_DIRECT);
                                let r = format!(
                                    "flush {} off {} on {} open {}",
                                    sys::show(&f),
                                    sys::show(&off),
                                    sys::show(&on),
                                    reopen
                                        .as_ref()
                                        .map(|_| "ok".to_string())
                                        .unwrap_or_else(|e| sys::errname(*e))
                                );
                                if let (Ok(_), Ok(_), Ok(_), Ok(new)) = (f, off, on, reopen) {
                                    fd = new;
                                    ok = true;
                                }
                                r
                            });
                            if !ok {
                                break;
                            }
                            continue;
                        }
                        if !step(c, "fzdata", &fd, &mut sh, bs, true) {
                            break;
                        }
                    }
                }
                Err(e) => c.env.fail(format!(
                    "data: open /dev/fzdata after power=1: {}",
                    sys::errname(e)
                )),
            }
            c.res("data fzdata remove".into(), |_| {
                sys::write_file(&format!("{dir}/power"), b"0")?;
                sys::rmdir(&dir)
            });
        } else {
            let _ = sys::rmdir(&dir);
        }
        // a module cycle waits for this disk to be gone; hold still until
        // it is over
        if c.env.rnull_cycle.load(Ordering::SeqCst) {
            c.env.data_released.store(true, Ordering::SeqCst);
            while c.env.rnull_cycle.load(Ordering::SeqCst) && !c.env.stopped() {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            // (the next cycle sets data_released back to false before it
            // asks, so a late store here could not answer it)
        }
        std::thread::sleep(std::time::Duration::from_millis(pause));
    }
    let _ = sys::write_file(&format!("{dir}/power"), b"0");
    let _ = sys::rmdir(&dir);
}

/// rvirtio_blk's checker: the data disk keeps its contents on the host
/// across unbinding, module reloads and resets, so the shadow lives as long
/// as the run. When the disk is gone it waits, and after a while binds it
/// again itself.
pub fn virtio(c: &mut Ctx) {
    let Some(pci) = c.env.vdata.as_ref().map(|v| v.pci.clone()) else {
        return;
    };
    let mut sh = Shadow::new(64 << 20, ZERO);
    let mut missing = 0;
    while !c.env.stopped() {
        let steps = c.rng.range(10, 100);
        match crate::blk::open(
            &crate::blk::Disk::Pci(pci.clone()),
            libc::O_RDWR | libc::O_DIRECT,
        ) {
            Ok((d, fd)) => {
                missing = 0;
                for _ in 0..steps {
                    if c.env.stopped() || !step(c, &d, &fd, &mut sh, 512, false) {
                        break;
                    }
                }
            }
            Err(_) => {
                missing += 1;
                if missing % 20 == 0 {
                    c.step(format!("data virtio {pci}: bring back"), |c| {
                        let ko = c.env.virtio_ko.clone().unwrap_or_default();
                        let l = sys::finit_module(&ko, "");
                        let v = std::fs::read_dir(format!("/sys/bus/pci/devices/{pci}"))
                            .ok()
                            .and_then(|d| {
                                d.filter_map(|e| e.ok())
                                    .map(|e| e.file_name().to_string_lossy().into_owned())
                                    .find(|n| n.starts_with("virtio"))
                            })
                            .unwrap_or_default();
                        let b = sys::write_file(
                            "/sys/bus/virtio/drivers/rvirtio_blk/bind",
                            v.as_bytes(),
                        );
                        format!("insmod {} bind {}", sys::show(&l), sys::show(&b))
                    });
                }
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shadow_checks_what_it_wrote() {
        let mut sh = Shadow::new(64 * 512, ZERO);
        let mut buf = vec![0u8; 4 * 512];
        let g = sh.fill(8 * 512, &mut buf);
        sh.set(8 * 512, buf.len() as u64, g);
        assert_eq!(sh.check(8 * 512, &buf), None);
        // the same data one sector off, zeroes where data must be, and
        // data where zeroes must be are all caught
        assert!(sh.check(9 * 512, &buf[..3 * 512]).is_some());
        assert!(sh
            .check(8 * 512, &[0u8; 512])
            .unwrap()
            .contains("read zeroes"));
        assert!(sh.check(0, &buf[..512]).unwrap().contains("want zeroes"));
        // an unknown sector takes anything
        sh.set(8 * 512, 512, UNKNOWN);
        assert_eq!(sh.check(8 * 512, &[7u8; 512]), None);
    }
}
