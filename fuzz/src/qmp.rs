//! QMP commands for QEMU, through the host: the guest writes
//! `<dir>/<thread>-<n>.req` (one JSON command) in the directory it shares
//! with the host, and the host's relay (tests/host/fuzz.sh) runs it and
//! writes `<thread>-<n>.reply`.

use crate::ctx::Ctx;

pub fn request(c: &mut Ctx, cmd: &str) -> String {
    let Some(dir) = c.env.qmp_dir.clone() else {
        return "no qmp relay".into();
    };
    let base = format!("{dir}/t{}-{}", c.tid, c.n);
    let tmp = format!("{base}.tmp");
    if let Err(e) =
        std::fs::write(&tmp, cmd).and_then(|_| std::fs::rename(&tmp, format!("{base}.req")))
    {
        return format!("relay: {e}");
    }
    let reply = format!("{base}.reply");
    for _ in 0..1200 {
        if let Ok(s) = std::fs::read_to_string(&reply) {
            let _ = std::fs::remove_file(&reply);
            // {"return": ...} is "ok"; an error shows QEMU's description
            let s = s.trim();
            if s.starts_with(r#"{"return""#) {
                return format!("ok {}", &s[10..s.len() - 1].trim());
            }
            return s.chars().take(120).collect();
        }
        if c.env.stopped() {
            return "stopped".into();
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    "relay: no reply in 60 s".into()
}
