//! Thin wrappers of the system calls the operations make. Every call returns
//! `Res`: the count it returned, or the errno, which the log shows by name.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

pub type Res = Result<u64, i32>;

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

fn ret(r: i64) -> Res {
    if r < 0 {
        Err(errno())
    } else {
        Ok(r as u64)
    }
}

pub fn errname(e: i32) -> String {
    let n = match e {
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::EIO => "EIO",
        libc::ENXIO => "ENXIO",
        libc::E2BIG => "E2BIG",
        libc::ENOEXEC => "ENOEXEC",
        libc::EBADF => "EBADF",
        libc::EAGAIN => "EAGAIN",
        libc::ENOMEM => "ENOMEM",
        libc::EFAULT => "EFAULT",
        libc::EBUSY => "EBUSY",
        libc::EEXIST => "EEXIST",
        libc::ENODEV => "ENODEV",
        libc::ENOTDIR => "ENOTDIR",
        libc::EISDIR => "EISDIR",
        libc::EINVAL => "EINVAL",
        libc::EFBIG => "EFBIG",
        libc::ENOSPC => "ENOSPC",
        libc::EROFS => "EROFS",
        libc::ERANGE => "ERANGE",
        libc::ENOTTY => "ENOTTY",
        libc::ENOTEMPTY => "ENOTEMPTY",
        libc::EOVERFLOW => "EOVERFLOW",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::ETIMEDOUT => "ETIMEDOUT",
        libc::ENOLINK => "ENOLINK",
        libc::EINTR => "EINTR",
        libc::ENOSYS => "ENOSYS",
        libc::EKEYREJECTED => "EKEYREJECTED",
        libc::ENODATA => "ENODATA",
        libc::EILSEQ => "EILSEQ",
        libc::EALREADY => "EALREADY",
        libc::ECANCELED => "ECANCELED",
        libc::ESTALE => "ESTALE",
        _ => return format!("errno {e}"),
    };
    n.to_string()
}

pub fn show(r: &Res) -> String {
    match r {
        Ok(n) => format!("ok {n}"),
        Err(e) => errname(*e),
    }
}

fn cstr(s: &str) -> CString {
    CString::new(s).unwrap_or_else(|_| CString::new("?").unwrap())
}

pub fn open(path: &str, flags: i32) -> Result<OwnedFd, i32> {
    let p = cstr(path);
    // SAFETY: `p` is a NUL-terminated string that lives across the call.
    let fd = unsafe { libc::open(p.as_ptr(), flags | libc::O_CLOEXEC, 0o644) };
    if fd < 0 {
        Err(errno())
    } else {
        // SAFETY: `fd` was just returned by open() and is owned by nobody else.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }
}

/// One write(2) of `val` to `path`, as `echo -n val > path` does.
pub fn write_file(path: &str, val: &[u8]) -> Res {
    let fd = open(path, libc::O_WRONLY)?;
    // SAFETY: the buffer is valid for `val.len()` bytes.
    ret(unsafe { libc::write(fd.as_raw_fd(), val.as_ptr().cast(), val.len()) } as i64)
}

pub fn read_file(path: &str) -> Result<String, i32> {
    let fd = open(path, libc::O_RDONLY)?;
    let mut buf = vec![0u8; 8192];
    // SAFETY: the buffer is valid for its length.
    let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        return Err(errno());
    }
    buf.truncate(n as usize);
    Ok(String::from_utf8_lossy(&buf).trim_end().to_string())
}

pub fn mkdir(path: &str) -> Res {
    let p = cstr(path);
    // SAFETY: `p` is NUL-terminated.
    ret(unsafe { libc::mkdir(p.as_ptr(), 0o755) } as i64)
}

pub fn rmdir(path: &str) -> Res {
    let p = cstr(path);
    // SAFETY: `p` is NUL-terminated.
    ret(unsafe { libc::rmdir(p.as_ptr()) } as i64)
}

pub fn finit_module(ko: &str, params: &str) -> Res {
    let fd = open(ko, libc::O_RDONLY)?;
    let p = cstr(params);
    // SAFETY: a valid fd and a NUL-terminated parameter string.
    ret(unsafe { libc::syscall(libc::SYS_finit_module, fd.as_raw_fd(), p.as_ptr(), 0) })
}

pub fn delete_module(name: &str) -> Res {
    let p = cstr(name);
    // SAFETY: `p` is NUL-terminated.
    ret(unsafe { libc::syscall(libc::SYS_delete_module, p.as_ptr(), libc::O_NONBLOCK) })
}

/// ioctl(2) with a pointer argument.
pub fn ioctl_ptr(fd: &OwnedFd, req: u64, arg: *mut u8) -> Res {
    // SAFETY: `arg` points to a buffer at least as large as `req` encodes,
    // which the callers guarantee by building it for `req`.
    ret(unsafe { libc::ioctl(fd.as_raw_fd(), req as _, arg) } as i64)
}

pub fn fsync(fd: &OwnedFd) -> Res {
    // SAFETY: a valid fd.
    ret(unsafe { libc::fsync(fd.as_raw_fd()) } as i64)
}

/// A zeroed buffer aligned to 4 KiB (O_DIRECT needs the block size).
pub struct Buf {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: `Buf` owns its allocation like a `Vec<u8>`.
unsafe impl Send for Buf {}

impl Buf {
    pub fn new(len: usize) -> Buf {
        let layout = std::alloc::Layout::from_size_align(len.max(1), 4096).unwrap();
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        assert!(!ptr.is_null());
        Buf {
            ptr,
            len: len.max(1),
        }
    }
    pub fn as_mut(&mut self) -> &mut [u8] {
        // SAFETY: `ptr` is valid for `len` bytes and uniquely borrowed.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
    pub fn as_ref(&self) -> &[u8] {
        // SAFETY: `ptr` is valid for `len` bytes.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl Drop for Buf {
    fn drop(&mut self) {
        let layout = std::alloc::Layout::from_size_align(self.len, 4096).unwrap();
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.ptr, layout) }
    }
}

/// pread/pwrite through preadv2/pwritev2 with `RWF_*` flags.
pub fn rw(fd: &OwnedFd, write: bool, buf: &mut [u8], off: u64, flags: i32) -> Res {
    let iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: one iovec describing `buf`, valid for the call.
    let r = unsafe {
        if write {
            libc::pwritev2(fd.as_raw_fd(), &iov, 1, off as i64, flags)
        } else {
            libc::preadv2(fd.as_raw_fd(), &iov, 1, off as i64, flags)
        }
    };
    ret(r as i64)
}

pub const RWF_HIPRI: i32 = 1;
pub const RWF_DSYNC: i32 = 2;
pub const RWF_NOWAIT: i32 = 8;

/// Reads or writes through an io_uring of its own (`iopoll`: set up with
/// IORING_SETUP_IOPOLL, which needs O_DIRECT and a poll queue). `ops` are
/// (write, offset, length) over consecutive parts of `buf`; returns each
/// completion's result.
pub fn uring(
    fd: &OwnedFd,
    iopoll: bool,
    buf: &mut [u8],
    ops: &[(bool, u64, usize)],
) -> Result<Vec<Res>, i32> {
    use io_uring::{opcode, types, IoUring};
    let mut b: io_uring::Builder = IoUring::builder();
    if iopoll {
        b.setup_iopoll();
    }
    let mut ring: IoUring = b
        .build(8)
        .map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))?;
    let mut at = 0usize;
    for (i, &(write, off, len)) in ops.iter().enumerate().take(8) {
        let len = len.min(buf.len() - at);
        let p = buf[at..].as_mut_ptr();
        at += len;
        let fdt = types::Fd(fd.as_raw_fd());
        let e = if write {
            opcode::Write::new(fdt, p, len as u32).offset(off).build()
        } else {
            opcode::Read::new(fdt, p, len as u32).offset(off).build()
        };
        // SAFETY: the buffer outlives the ring's use of it: we wait for
        // every completion below before returning.
        unsafe { ring.submission().push(&e.user_data(i as u64)) }.map_err(|_| libc::EBUSY)?;
    }
    let n = ops.len().min(8);
    let mut res = vec![Err(libc::ECANCELED); n];
    let mut got = 0;
    while got < n {
        match ring.submit_and_wait(1) {
            Ok(_) => {}
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
            Err(e) => {
                // Nothing more completes; the submitted buffers are still
                // ours until the ring is dropped, which waits for them.
                let e = e.raw_os_error().unwrap_or(libc::EIO);
                return Err(e);
            }
        }
        for c in ring.completion() {
            let i = c.user_data() as usize;
            let r = c.result();
            if i < n {
                res[i] = if r < 0 { Err(-r) } else { Ok(r as u64) };
            }
            got += 1;
        }
    }
    Ok(res)
}
