#!/usr/bin/env bash
# Install what building and testing need, idempotently: Debian packages
# (bookworm's clang-19/LLVM 19, rustc-web 1.85 with its rust-src and rustfmt,
# pinned to $RUST_WEB_VERSION (scripts/env.sh) so that a point release cannot
# move it, and on LLVM 19 like clang; QEMU, fio,
# the tools blktests needs) and bindgen-cli from crates.io, built against
# libclang 19. A second run takes about a second. The kernel source itself
# is fetched by scripts/kernel.sh.
set -euo pipefail
. "$(dirname "$0")/env.sh"

pkgs=("rustc-web=$RUST_WEB_VERSION" "libstd-rust-web-dev=$RUST_WEB_VERSION"
      "rust-web-src=$RUST_WEB_VERSION" "rustfmt-web=$RUST_WEB_VERSION"
      "clang$LLVM_SUFFIX" "lld$LLVM_SUFFIX" "llvm$LLVM_SUFFIX" "libclang$LLVM_SUFFIX-dev"
      bc flex bison libelf-dev libssl-dev cpio kmod xz-utils zstd make
      qemu-system-x86 qemu-utils fio busybox-static e2fsprogs
      gawk xfsprogs pciutils
      python3 python3-matplotlib
      libglib2.0-dev)  # bench/insn-profile (scripts/profile-virtio.sh)
missing=()
for p in "${pkgs[@]}"; do
    # name=version: installed at exactly that version (a newer one is replaced)
    name=${p%%=*} want=${p#*=}
    [[ $name != "$p" ]] || want=
    st=$(dpkg-query -W -f='${Status} ${Version}' "$name" 2>/dev/null) || st=
    [[ $st == *"ok installed"* && ( -z $want || ${st##* } == "$want" ) ]] || missing+=("$p")
done
if [[ ${#missing[@]} -gt 0 ]]; then
    log "installing ${missing[*]}"
    apt-get update -qq
    args=()
    for p in "${missing[@]}"; do
        if [[ $p == qemu-utils ]]; then
            # Debian's qemu-system-x86 needs qemu-utils of the same version; a
            # newer backport may be preinstalled, so pick the matching one.
            v=$(apt-cache policy qemu-system-x86 | awk '/Candidate:/{print $2}')
            args+=("qemu-utils=$v")
        else
            args+=("$p")
        fi
    done
    # qemu-system-x86 pulls qemu-utils along at its own version.
    if [[ " ${missing[*]} " == *" qemu-system-x86 "* && " ${missing[*]} " != *" qemu-utils "* ]]; then
        v=$(apt-cache policy qemu-system-x86 | awk '/Candidate:/{print $2}')
        args+=("qemu-utils=$v")
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --allow-downgrades "${args[@]}" >/dev/null
fi
if ! "$BINDGEN" --version 2>/dev/null | grep -qF "$BINDGEN_VERSION"; then
    log "installing bindgen-cli $BINDGEN_VERSION"
    cargo install --locked --quiet --force bindgen-cli --version "$BINDGEN_VERSION"
fi
log "host ready"
