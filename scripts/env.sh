# Shared settings for the build/run scripts. Source it; do not run it.
# Everything can be overridden from the environment.

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RNULL_CACHE=${RNULL_CACHE:-/var/cache/rnull-split}
# The test kernel: Debian's linux-source-$KERNEL_SERIES from $KERNEL_SUITE,
# fetched with a private apt list (scripts/kernel.sh), never installed. The
# newest $KERNEL_SERIES.y the suite serves is used; the build cache is keyed
# on the unpacked version. This is the one variable to change when Debian
# drops the series from the suite.
KERNEL_SERIES=${KERNEL_SERIES:-7.3}
KERNEL_SUITE=${KERNEL_SUITE:-trixie-backports}
# A tarball of your own (a kernel.org-style tree) instead of Debian's.
KERNEL_TARBALL=${KERNEL_TARBALL:-}
CARGO_HOME=${CARGO_HOME:-$HOME/.cargo}
BINDGEN=${BINDGEN:-$CARGO_HOME/bin/bindgen}
BINDGEN_VERSION=0.71.1
# 7.3 needs LLVM >= 17: bookworm's clang-19 (LLVM=-19); bindgen loads the
# same libclang.
LLVM_SUFFIX=${LLVM_SUFFIX:--19}
export LIBCLANG_PATH=${LIBCLANG_PATH:-/usr/lib/llvm${LLVM_SUFFIX}/lib}
# Debian's rustc-web ships the matching rust-src; rustup's toolchain does not.
# Pinned to bookworm main's 1.85.0 (7.3's minimum rustc), whose LLVM is 19,
# the LLVM of clang-19: CONFIG_RUST_INLINE_HELPERS needs rustc and clang on one
# LLVM (bookworm-security's 1.96 is LLVM 22). rustfmt-web is the same version.
RUST_WEB_VERSION=${RUST_WEB_VERSION:-1.85.0+dfsg3-1~deb12u3}
KMAKE_ARGS=(LLVM="$LLVM_SUFFIX" RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc
            HOSTRUSTC=/usr/bin/rustc BINDGEN="$BINDGEN")
NPROC=$(nproc)
# Kernel flavour: "default" or "debug" (KASAN, lockdep, kmemleak...).
FLAVOUR=${FLAVOUR:-default}

log() { printf '\033[1m[%s]\033[0m %s\n' "$(basename "$0")" "$*" >&2; }
die() { log "error: $*"; exit 1; }
