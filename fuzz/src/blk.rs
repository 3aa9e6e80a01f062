//! The block-device operations both drivers share: open and hold, ioctls,
//! queue/ sysfs knobs, I/O. Each takes the disk its driver's table picked.
//! Every random argument is drawn before the disk is looked at, so a seed
//! gives the same sequence whatever the disks do.

use crate::ctx::Ctx;
use crate::sys::{self, Buf, Res};
use std::os::fd::OwnedFd;

/// A disk as an operation targets it: a name under /sys/block and /dev, or
/// the disk of a virtio PCI function, looked up only when the operation
/// runs (after its `begin`), as the function may be unbound or unplugged.
#[derive(Clone)]
pub enum Disk {
    Named(String),
    Pci(String),
}

impl Disk {
    /// What the log calls it.
    pub fn label(&self) -> &str {
        match self {
            Disk::Named(n) | Disk::Pci(n) => n,
        }
    }

    /// Its name now ("" if it has none).
    pub fn name(&self) -> String {
        match self {
            Disk::Named(n) => n.clone(),
            Disk::Pci(p) => crate::virtio::disk_of(p),
        }
    }
}

fn dev(name: &str) -> String {
    format!("/dev/{name}")
}

/// Opens `/dev/{name}` and checks that it is the disk sysfs calls `name`
/// now. A path names a device number, and a disk's number is given to a
/// new disk once the old one is released: an open racing with the removal
/// of `name` can miss it, wait (block-device autoloading runs modprobe) and
/// then find a new disk, of either driver, under the old number. The open
/// holds the disk it found, so its number cannot pass on while we check.
pub fn open_dev(name: &str, flags: i32) -> Result<OwnedFd, i32> {
    let fd = sys::open(&dev(name), flags)?;
    let want = sys::read_file(&format!("/sys/block/{name}/dev")).map_err(|_| libc::ESTALE)?;
    // SAFETY: all-zero bytes are a valid `stat`.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is a writable stat buffer, `fd` a valid descriptor.
    if unsafe { libc::fstat(std::os::fd::AsRawFd::as_raw_fd(&fd), &mut st) } != 0 {
        return Err(libc::EBADF);
    }
    let got = format!("{}:{}", libc::major(st.st_rdev), libc::minor(st.st_rdev));
    if want.trim() != got {
        return Err(libc::ESTALE);
    }
    Ok(fd)
}

/// Opens the disk (see `open_dev`). A virtio function's disk is checked
/// again after the open: its name may have passed to another function's
/// disk in between (an unbind and a bind).
pub fn open(disk: &Disk, flags: i32) -> Result<(String, OwnedFd), i32> {
    let name = disk.name();
    if name.is_empty() {
        return Err(libc::ENODEV);
    }
    let fd = open_dev(&name, flags)?;
    if let Disk::Pci(_) = disk {
        if disk.name() != name {
            return Err(libc::ESTALE);
        }
    }
    Ok((name, fd))
}

const BLKFLSBUF: u64 = 0x1261;
const BLKRRPART: u64 = 0x125f;
const BLKGETSIZE64: u64 = 0x8008_1272;
const BLKDISCARD: u64 = 0x1277;
const BLKSECDISCARD: u64 = 0x127d;
const BLKZEROOUT: u64 = 0x127f;
const HDIO_GETGEO: u64 = 0x0301;
const BLKREPORTZONE: u64 = 0xc010_1282;
const BLKRESETZONE: u64 = 0x4010_1283;
const BLKOPENZONE: u64 = 0x4010_1286;
const BLKCLOSEZONE: u64 = 0x4010_1287;
const BLKFINISHZONE: u64 = 0x4010_1288;

const IOCTLS: &[(&str, u64)] = &[
    ("BLKGETSIZE64", BLKGETSIZE64),
    ("BLKFLSBUF", BLKFLSBUF),
    ("BLKRRPART", BLKRRPART),
    ("BLKDISCARD", BLKDISCARD),
    ("BLKSECDISCARD", BLKSECDISCARD),
    ("BLKZEROOUT", BLKZEROOUT),
    ("HDIO_GETGEO", HDIO_GETGEO),
    ("BLKREPORTZONE", BLKREPORTZONE),
    ("BLKRESETZONE", BLKRESETZONE),
    ("BLKOPENZONE", BLKOPENZONE),
    ("BLKCLOSEZONE", BLKCLOSEZONE),
    ("BLKFINISHZONE", BLKFINISHZONE),
];

/// queue/ knobs and the values written to them (valid, boundary, invalid).
const KNOBS: &[(&str, &[&str])] = &[
    (
        "max_sectors_kb",
        &[
            "4", "8", "64", "128", "512", "1024", "4096", "0", "3", "99999999", "x",
        ],
    ),
    (
        "scheduler",
        &["none", "mq-deadline", "kyber", "bfq", "nope", ""],
    ),
    (
        "nr_requests",
        &["1", "2", "4", "32", "64", "128", "1024", "100000", "0"],
    ),
    ("write_cache", &["write back", "write through", "write", ""]),
    ("io_poll", &["0", "1", "2"]),
    ("io_poll_delay", &["-1", "0", "1"]),
    ("nomerges", &["0", "1", "2", "3"]),
    ("rq_affinity", &["0", "1", "2", "3"]),
    ("read_ahead_kb", &["0", "4", "128", "4096"]),
    ("iostats", &["0", "1"]),
    ("wbt_lat_usec", &["-1", "0", "100", "75000"]),
    ("add_random", &["0", "1"]),
];

/// Read-only attributes worth reading while things change.
const READS: &[&str] = &[
    "size",
    "stat",
    "inflight",
    "ro",
    "removable",
    "capability",
    "queue/max_sectors_kb",
    "queue/max_hw_sectors_kb",
    "queue/logical_block_size",
    "queue/zoned",
    "queue/nr_zones",
    "queue/chunk_sectors",
    "queue/discard_max_bytes",
    "queue/write_zeroes_max_bytes",
    "queue/max_open_zones",
    "queue/max_active_zones",
    "queue/rotational",
    "queue/scheduler",
    "queue/nr_requests",
    "queue/write_cache",
    "queue/fua",
    "queue/io_poll",
    "serial",
    "cache_type",
    "mq/0/nr_tags",
    "queue/zone_append_max_bytes",
    "queue/virt_boundary_mask",
];

fn open_flags(write: bool, direct: bool) -> i32 {
    (if write { libc::O_RDWR } else { libc::O_RDONLY }) | if direct { libc::O_DIRECT } else { 0 }
}

/// `fd`: the thread's held descriptor in slot `slot` if `use_slot` and there
/// is one, else a new one with `flags`.
fn fd_for(
    c: &mut Ctx,
    disk: &Disk,
    use_slot: bool,
    slot: usize,
    flags: i32,
) -> Result<OwnedFd, i32> {
    if use_slot {
        if let Some((_, fd)) = &c.slots[slot] {
            return fd
                .try_clone()
                .map_err(|e| e.raw_os_error().unwrap_or(libc::EBADF));
        }
    }
    open(disk, flags).map(|(_, fd)| fd)
}

pub fn open_hold(c: &mut Ctx, disk: Disk) {
    let slot = c.rng.below(4) as usize;
    let write = c.rng.pct(70);
    let direct = c.rng.pct(50);
    let excl = c.rng.pct(10);
    c.res(
        format!(
            "open+hold {} slot {slot} write {write} direct {direct} excl {excl}",
            disk.label()
        ),
        |c| {
            c.slots[slot] = None;
            let (name, fd) = open(
                &disk,
                open_flags(write, direct) | if excl { libc::O_EXCL } else { 0 },
            )?;
            c.slots[slot] = Some((name, fd));
            Ok(0)
        },
    );
}

pub fn close_slot(c: &mut Ctx) {
    let slot = c.rng.below(4) as usize;
    c.step(format!("close slot {slot}"), |c| {
        match c.slots[slot].take() {
            Some((n, _)) => format!("ok closed {n}"),
            None => "empty".into(),
        }
    });
}

/// A (start, length) byte range for the range ioctls: aligned or not, in
/// the disk or past it, at most 32 MiB.
fn range(c: &mut Ctx) -> (u64, u64) {
    let start = match c.rng.below(6) {
        0 => 0,
        1 => c.rng.below(64 << 11) << 9,
        2 => c.rng.below(16) << 20,
        3 => c.rng.below(1 << 26),
        4 => u64::MAX - c.rng.below(1 << 20),
        _ => 1 << 40,
    };
    let len = match c.rng.below(6) {
        0 => 0,
        1 => 512 * c.rng.range(1, 64),
        2 => 4096 * c.rng.range(1, 256),
        3 => c.rng.range(1, 32) << 20,
        4 => c.rng.below(1 << 20),
        _ => u64::MAX - c.rng.below(4096),
    };
    (start, len)
}

pub fn ioctl(c: &mut Ctx, disk: Disk) {
    let (name, req) = *c.rng.pick(IOCTLS);
    let use_slot = c.rng.pct(50);
    let slot = c.rng.below(4) as usize;
    let (start, len) = range(c);
    let nr_zones = c.rng.below(17) as u32;
    let zsector = match c.rng.below(4) {
        0 => 0,
        1 => c.rng.below(1 << 16) << 11, // a MiB boundary
        2 => c.rng.below(1 << 20),
        _ => u64::MAX >> c.rng.below(4),
    };
    let znr = match c.rng.below(4) {
        0 => 0,
        1 => 2048 << c.rng.below(10),
        2 => c.rng.below(1 << 20),
        _ => u64::MAX,
    };
    let what = format!("ioctl {name} {} slot {use_slot}/{slot} range {start:#x}+{len:#x} zones {nr_zones} zr {zsector:#x}+{znr:#x}", disk.label());
    c.step(what, |c| {
        let fd = match fd_for(c, &disk, use_slot, slot, libc::O_RDWR) {
            Ok(fd) => fd,
            Err(e) => return format!("open {}", sys::errname(e)),
        };
        let r: Res = match req {
            BLKGETSIZE64 => {
                let mut v = 0u64;
                sys::ioctl_ptr(&fd, req, (&mut v as *mut u64).cast()).map(|_| v)
            }
            BLKFLSBUF | BLKRRPART => sys::ioctl_ptr(&fd, req, std::ptr::null_mut()),
            BLKDISCARD | BLKSECDISCARD | BLKZEROOUT => {
                let mut r = [start, len];
                sys::ioctl_ptr(&fd, req, r.as_mut_ptr().cast())
            }
            HDIO_GETGEO => {
                let mut g = [0u8; 16];
                sys::ioctl_ptr(&fd, req, g.as_mut_ptr()).map(|_| {
                    u64::from(g[0]) << 24
                        | u64::from(g[1]) << 16
                        | u64::from(u16::from_ne_bytes([g[2], g[3]]))
                })
            }
            BLKREPORTZONE => {
                let mut b = vec![0u64; 2 + 8 * nr_zones as usize];
                b[0] = zsector;
                b[1] = u64::from(nr_zones);
                sys::ioctl_ptr(&fd, req, b.as_mut_ptr().cast()).map(|_| b[1] & 0xffff_ffff)
            }
            _ => {
                let mut r = [zsector, znr];
                sys::ioctl_ptr(&fd, req, r.as_mut_ptr().cast())
            }
        };
        sys::show(&r)
    });
}

pub fn knob(c: &mut Ctx, disk: Disk) {
    let (k, vals) = *c.rng.pick(KNOBS);
    let v = *c.rng.pick(vals);
    c.res(format!("queue/{k} of {} = {v:?}", disk.label()), |_| {
        sys::write_file(
            &format!("/sys/block/{}/queue/{k}", disk.name()),
            v.as_bytes(),
        )
    });
}

pub fn read_attr(c: &mut Ctx, disk: Disk) {
    let a = *c.rng.pick(READS);
    c.step(
        format!("read {}/{a}", disk.label()),
        |_| match sys::read_file(&format!("/sys/block/{}/{a}", disk.name())) {
            Ok(s) => format!("ok {:?}", s.chars().take(60).collect::<String>()),
            Err(e) => sys::errname(e),
        },
    );
}

const ENGINES: &[&str] = &[
    "psync",
    "pvsync2",
    "io_uring",
    "io_uring-iopoll",
    "buffered",
];

/// One random read or write: engine, flags, size, offset, buffer alignment.
pub fn io(c: &mut Ctx, disk: Disk) {
    let engine = c.rng.below(ENGINES.len() as u64) as usize;
    let write = c.rng.pct(40);
    let flags = [
        0,
        sys::RWF_NOWAIT,
        sys::RWF_DSYNC,
        sys::RWF_HIPRI,
        sys::RWF_NOWAIT | sys::RWF_HIPRI,
    ][c.rng.below(5) as usize];
    let len = match c.rng.below(8) {
        0 => 512,
        1 => 4096,
        2 => 4096 * c.rng.range(1, 16) as usize,
        3 => 512 * c.rng.range(1, 256) as usize,
        4 => 1 << 20,
        5 => c.rng.range(1, 8192) as usize,
        6 => 0,
        _ => (1 << 20) + 4096 * c.rng.below(4) as usize,
    };
    let off_kind = c.rng.below(6);
    let off_x = c.rng.next();
    let misalign = [0usize, 0, 0, 512, 1][c.rng.below(5) as usize];
    let nr = c.rng.range(1, 4) as usize;
    let use_slot = c.rng.pct(30);
    let slot = c.rng.below(4) as usize;
    let fill = c.rng.next();
    let what = format!(
        "io {} {} {} len {len} x{nr} off {off_kind}/{off_x:#x} mis {misalign} flags {flags} slot {use_slot}/{slot}",
        disk.label(), ENGINES[engine], if write { "write" } else { "read" }
    );
    c.step(what, |c| {
        let direct = engine != 4;
        let fd = match fd_for(c, &disk, use_slot, slot, open_flags(write, direct)) {
            Ok(fd) => fd,
            Err(e) => return format!("open {}", sys::errname(e)),
        };
        let mut size = 0u64;
        let _ = sys::ioctl_ptr(&fd, BLKGETSIZE64, (&mut size as *mut u64).cast());
        let span = size.clamp(1, 32 << 20);
        let off = match off_kind {
            0 => (off_x % span) & !511,
            1 => (off_x % span) & !4095,
            2 => size.saturating_sub(512 * (1 + off_x % 2048)),
            3 => size + 512 * (off_x % 4),
            4 => off_x % span,
            _ => 0,
        };
        let mut buf = Buf::new(len * nr + misalign + 4096);
        for (i, b) in buf.as_mut().iter_mut().enumerate() {
            *b = (fill >> (8 * (i % 8))) as u8;
        }
        let body = &mut buf.as_mut()[misalign..misalign + len * nr];
        match engine {
            0 => sys::show(&sys::rw(&fd, write, &mut body[..len], off, 0)),
            1 => sys::show(&sys::rw(&fd, write, &mut body[..len], off, flags)),
            2 | 3 => {
                let ops: Vec<_> = (0..nr)
                    .map(|i| (write, off + (i * len) as u64, len))
                    .collect();
                match sys::uring(&fd, engine == 3, body, &ops) {
                    Ok(rs) => rs.iter().map(sys::show).collect::<Vec<_>>().join(","),
                    Err(e) => format!("ring {}", sys::errname(e)),
                }
            }
            _ => {
                let r = sys::rw(&fd, write, &mut body[..len], off, 0);
                let s = if write { sys::fsync(&fd) } else { Ok(0) };
                format!("{} fsync {}", sys::show(&r), sys::show(&s))
            }
        }
    });
}

/// The block operations of a driver's table, after its own: `$disk` picks
/// a disk for what may destroy data, `$any` one for what leaves data alone
/// (both `fn(&mut Ctx) -> Disk`), then the weights of open_hold, close,
/// ioctl, knob, read_sysfs and io.
macro_rules! block_ops {
    ($disk:path, $any:path, $open:expr, $close:expr, $ioctl:expr, $knob:expr, $read:expr, $io:expr) => {
        [
            $crate::ctx::Op {
                name: "open_hold",
                weight: $open,
                run: |c| {
                    let d = $disk(c);
                    $crate::blk::open_hold(c, d)
                },
                exclusive: false,
            },
            $crate::ctx::Op {
                name: "close",
                weight: $close,
                run: $crate::blk::close_slot,
                exclusive: false,
            },
            $crate::ctx::Op {
                name: "ioctl",
                weight: $ioctl,
                run: |c| {
                    let d = $disk(c);
                    $crate::blk::ioctl(c, d)
                },
                exclusive: false,
            },
            $crate::ctx::Op {
                name: "knob",
                weight: $knob,
                run: |c| {
                    let d = $any(c);
                    $crate::blk::knob(c, d)
                },
                exclusive: false,
            },
            $crate::ctx::Op {
                name: "read_sysfs",
                weight: $read,
                run: |c| {
                    let d = $any(c);
                    $crate::blk::read_attr(c, d)
                },
                exclusive: false,
            },
            $crate::ctx::Op {
                name: "io",
                weight: $io,
                run: |c| {
                    let d = $disk(c);
                    $crate::blk::io(c, d)
                },
                exclusive: false,
            },
        ]
    };
}
pub(crate) use block_ops;

/// Up to `max - 1` module parameters from `table`, `name=value` joined by
/// spaces; with `invalid` given, one in ten values is one of its strings.
pub fn module_params(c: &mut Ctx, max: u64, table: &[(&str, &[&str])], invalid: &[&str]) -> String {
    let n = c.rng.below(max);
    let mut params = Vec::new();
    for _ in 0..n {
        let (p, vals) = *c.rng.pick(table);
        let v = if invalid.is_empty() || c.rng.pct(90) {
            c.rng.pick(vals).to_string()
        } else {
            c.rng.pick(invalid).to_string()
        };
        params.push(format!("{p}={v}"));
    }
    params.join(" ")
}
