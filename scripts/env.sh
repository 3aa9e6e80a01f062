# Shared settings for the build/run scripts. Source it; do not run it.
# Everything can be overridden from the environment.

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RNULL_CACHE=${RNULL_CACHE:-/var/cache/rnull-split}
KERNEL_TARBALL=${KERNEL_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
CARGO_HOME=${CARGO_HOME:-$HOME/.cargo}
BINDGEN=${BINDGEN:-$CARGO_HOME/bin/bindgen}
# Debian's rustc-web ships the matching rust-src; rustup's toolchain does not.
KMAKE_ARGS=(LLVM=1 RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc
            HOSTRUSTC=/usr/bin/rustc BINDGEN="$BINDGEN")
NPROC=$(nproc)
# Kernel flavour: "default" or "debug" (KASAN, lockdep, kmemleak...).
FLAVOUR=${FLAVOUR:-default}

log() { printf '\033[1m[%s]\033[0m %s\n' "$(basename "$0")" "$*" >&2; }
die() { log "error: $*"; exit 1; }
