#!/usr/bin/env bash
# Build (or reuse) the test kernel: Debian's linux-source-$KERNEL_SERIES (7.3)
# + kernel/patches/* + kernel/config.fragment, built out of tree (O=) into
#   $RNULL_CACHE/linux-<version>-<flavour>/build
# The source package comes from $KERNEL_SUITE (trixie-backports) through a
# private apt list under $RNULL_CACHE/apt: the system's apt sources are not
# touched, and the newest $KERNEL_SERIES.y the suite serves is used.
# The build is keyed by a content hash of (unpacked kernel version, toolchain,
# fragment, patches); a matching stamp skips the build entirely. A changed key
# rebuilds incrementally in the same tree (only files touched by the patches
# are restored from the pristine copy and re-patched).
#
#   scripts/kernel.sh build   fetch and build if needed, print nothing else on stdout
#   scripts/kernel.sh kdir    print the build directory (KDIR for modules)
#   scripts/kernel.sh cached  exit 0 if the build for the current key exists
set -euo pipefail
. "$(dirname "$0")/env.sh"

PRISTINE=$RNULL_CACHE/pristine-$KERNEL_SERIES

# The Debian mirror the system already uses (its first non-security source).
debian_mirror() {
    if [[ -n ${DEBIAN_MIRROR:-} ]]; then echo "$DEBIAN_MIRROR"; return; fi
    grep -hsE '^(URIs:|deb )' /etc/apt/sources.list.d/*.sources /etc/apt/sources.list \
        | grep -v security | grep -oE 'https?://[^ ]+' | head -n 1
}

# Download the newest linux-source-$KERNEL_SERIES into $RNULL_CACHE/apt/debs
# and print the path of the tarball it holds. Offline, a package fetched
# before is reused.
fetch_tarball() {
    if [[ -n $KERNEL_TARBALL ]]; then echo "$KERNEL_TARBALL"; return; fi
    local a="$RNULL_CACHE/apt" pkg="linux-source-$KERNEL_SERIES" mirror deb
    mkdir -p "$a/lists/partial" "$a/cache/archives/partial" "$a/debs"
    mirror=$(debian_mirror)
    [[ -n $mirror ]] || die "no Debian mirror in /etc/apt: set DEBIAN_MIRROR"
    echo "deb $mirror $KERNEL_SUITE main" > "$a/sources.list"
    local opts=(-o Dir::Etc::sourcelist="$a/sources.list" -o Dir::Etc::sourceparts=-
                -o Dir::State::Lists="$a/lists" -o Dir::Cache="$a/cache"
                -o Debug::NoLocking=1 -o APT::Sandbox::User=root)
    if apt-get "${opts[@]}" update -qq >&2; then
        if ! apt-cache "${opts[@]}" show "$pkg" >/dev/null 2>&1; then
            die "$KERNEL_SUITE no longer serves $pkg: set KERNEL_SERIES (scripts/env.sh) to a series it serves ($(apt-cache "${opts[@]}" pkgnames linux-source- | sort -V | tr '\n' ' '))"
        fi
        (cd "$a/debs" && apt-get "${opts[@]}" download -qq "$pkg" >&2) \
            || log "warning: could not download $pkg; using a cached one"
    else
        log "warning: apt-get update for $KERNEL_SUITE failed; using a cached $pkg"
    fi
    deb=$(ls "$a/debs/${pkg}_"*.deb 2>/dev/null | sort -V | tail -n 1)
    [[ -n $deb ]] || die "$pkg could not be downloaded from $KERNEL_SUITE"
    local x="$a/x/$(basename "$deb" .deb)"
    if [[ ! -f $x/.done ]]; then
        rm -rf "$x"; mkdir -p "$x"
        dpkg-deb -x "$deb" "$x" && touch "$x/.done"
    fi
    echo "$x/usr/src/$pkg.tar.xz"
}

pristine_dir() {
    local tarball=$1 d=$PRISTINE tar_id
    tar_id=$(stat -c '%n-%s-%Y' "$tarball") || return 1
    if [[ ! -f $d/.tarball-id || $(cat "$d/.tarball-id") != "$tar_id" ]]; then
        log "unpacking $tarball"
        # The old tree goes only once the new one is whole.
        rm -rf "$d.tmp"
        mkdir -p "$d.tmp"
        tar -C "$d.tmp" -xf "$tarball" --strip-components=1 || { rm -rf "$d.tmp"; return 1; }
        echo "$tar_id" > "$d.tmp/.tarball-id"
        rm -rf "$d" && mv "$d.tmp" "$d" || return 1
    fi
    echo "$d"
}

# The unpacked source, without fetching (for kdir/cached).
unpacked() {
    [[ -f $PRISTINE/.tarball-id ]] || die "no $KERNEL_SERIES source in $RNULL_CACHE: run 'make kernel'"
    echo "$PRISTINE"
}

kernel_version() {
    make -s -C "$1" kernelversion
}

patches() { ls "$REPO"/kernel/patches/*.patch 2>/dev/null | sort; }

fragments() {
    echo "$REPO/kernel/config.fragment"
    if [[ $FLAVOUR == debug ]]; then echo "$REPO/kernel/debug.fragment"; fi
    # blktests' needs (zoned, blk-cgroup, fault injection...): make blktests
    if [[ $FLAVOUR == blktests ]]; then echo "$REPO/kernel/blktests.fragment"; fi
}

cache_key() {
    local kver=$1
    {
        echo "kver=$kver flavour=$FLAVOUR"
        /usr/bin/rustc --version; "$BINDGEN" --version; "clang$LLVM_SUFFIX" --version | head -1
        # Debian's package revisions too: a rebuild of the same rustc
        # (1.85.0+dfsg3-1~deb12u3 -> ...u4) keeps `rustc --version`.
        # (Not installed through Debian, e.g. a KDIR of your own: the key
        # says so instead of failing; the build's own checks catch a
        # toolchain that does not work.)
        dpkg-query -W -f='${Package} ${Version}\n' rustc-web rust-web-src "libllvm${LLVM_SUFFIX#-}" 2>/dev/null \
            || echo "rustc-web, rust-web-src or libllvm${LLVM_SUFFIX#-}: not installed as Debian packages"
        cat $(fragments)
        for p in $(patches); do basename "$p"; cat "$p"; done
    } | sha256sum | cut -c1-16
}

kdir() {
    local p kver
    p=$(unpacked)
    kver=$(kernel_version "$p")
    echo "$RNULL_CACHE/linux-$kver-$FLAVOUR/build"
}

# The unpacked source, fetched and unpacked if needed, under a lock of its
# own: the apt lists and the pristine tree are shared by every flavour, and
# two builds of different flavours at once (each holding only its flavour's
# lock) would otherwise update the lists and unpack the tree together. A
# failure stops the build here (a command substitution alone would carry on
# with an empty path, and unpack "nothing" over the pristine tree).
source_tree() {
    local tarball
    exec 8>"$RNULL_CACHE/.lock-source"
    flock 8
    tarball=$(fetch_tarball) && [[ -n $tarball ]] || die "no linux-source-$KERNEL_SERIES tarball"
    pristine_dir "$tarball" || die "could not unpack $tarball"
    exec 8>&-
}

build() {
    local p kver key top src out
    p=$(source_tree) || exit 1
    kver=$(kernel_version "$p")
    key=$(cache_key "$kver")
    top="$RNULL_CACHE/linux-$kver-$FLAVOUR"
    src="$top/src"; out="$top/build"
    if [[ -f $out/.rnull-stamp && $(cat "$out/.rnull-stamp") == "$key" \
          && -f $out/arch/x86/boot/bzImage ]]; then
        log "kernel $kver ($FLAVOUR) up to date: $out (key $key)"
        return 0
    fi
    log "building kernel $kver ($FLAVOUR), key $key -> $out"
    mkdir -p "$top"
    if [[ ! -d $src ]]; then
        log "copying pristine source"
        cp -a "$p" "$src.tmp" && mv "$src.tmp" "$src"
    fi
    # Undo the previous patch series: restore every file it touched, and
    # every file the current series touches, from the pristine copy, with a
    # new mtime: make only compares mtimes, so a file restored with its old
    # one (a dropped patch's) would leave its objects as the patch built them.
    {
        [[ -f $src/.rnull-patched-files ]] && cat "$src/.rnull-patched-files"
        for pf in $(patches); do grep -E '^\+\+\+ b/' "$pf" | sed 's|^+++ b/||; s|	.*||'; done
    } | sort -u | while read -r f; do
        if [[ -e $p/$f ]]; then cp --preserve=mode "$p/$f" "$src/$f"; else rm -f "$src/$f"; fi
        rm -f "$src/$f.rej" "$src/$f.orig"
    done
    rm -f "$src/.rnull-patched-files"
    local files=()
    for pf in $(patches); do
        log "applying $(basename "$pf")"
        mapfile -t -O "${#files[@]}" files < <(grep -E '^\+\+\+ b/' "$pf" | sed 's|^+++ b/||; s|	.*||')
        printf '%s\n' "${files[@]}" > "$src/.rnull-patched-files"
        patch -d "$src" -p1 --no-backup-if-mismatch -s < "$pf" \
            || die "$(basename "$pf") does not apply to $kver"
    done
    rm -f "$out/.rnull-stamp"
    mkdir -p "$out"
    make -s -C "$src" O="$out" "${KMAKE_ARGS[@]}" rustavailable >/dev/null \
        || die "Rust toolchain not usable for the kernel (make rustavailable)"
    make -s -C "$src" O="$out" "${KMAKE_ARGS[@]}" tinyconfig >/dev/null
    local frags=()
    mapfile -t frags < <(fragments)
    KCONFIG_CONFIG="$out/.config" "$src/scripts/kconfig/merge_config.sh" -m -O "$out" \
        "$out/.config" "${frags[@]}" >/dev/null
    make -s -C "$src" O="$out" "${KMAKE_ARGS[@]}" olddefconfig >/dev/null
    # Every fragment line must have stuck (a missing dependency silently drops it).
    local bad=0
    while read -r line; do
        [[ $line =~ ^(CONFIG_[A-Z0-9_]+)=(.*)$ ]] || {
            [[ $line =~ ^#\ (CONFIG_[A-Z0-9_]+)\ is\ not\ set ]] || continue
            grep -q "^${BASH_REMATCH[1]}=" "$out/.config" && { log "config: ${BASH_REMATCH[1]} should be unset"; bad=1; }
            continue
        }
        grep -qx -- "$line" "$out/.config" || { log "config: wanted $line, got: $(grep "^${BASH_REMATCH[1]}=" "$out/.config" || echo unset)"; bad=1; }
    done < <(cat "${frags[@]}")
    [[ $bad == 0 ]] || die "config fragment did not apply"
    log "compiling (make -j$NPROC bzImage modules), log in $top/build.log"
    local t0=$SECONDS
    make -C "$src" O="$out" "${KMAKE_ARGS[@]}" -j"$NPROC" bzImage modules > "$top/build.log" 2>&1 &
    local mk=$!
    while kill -0 "$mk" 2>/dev/null; do
        sleep 20
        log "  ... $(grep -cE '^  (CC|RUSTC|AS|LD)' "$top/build.log") objects, $((SECONDS - t0)) s: $(tail -n 1 "$top/build.log" | cut -c1-100)"
    done
    if ! wait "$mk"; then
        grep -E -B2 -A12 '^error|error:' "$top/build.log" | head -n 120 >&2
        tail -n 20 "$top/build.log" >&2
        die "kernel build failed (full log: $top/build.log)"
    fi
    echo "$key" > "$out/.rnull-stamp"
    log "kernel built in $((SECONDS-t0)) s"
}

case "${1:-build}" in
    build)
        mkdir -p "$RNULL_CACHE"
        exec 9>"$RNULL_CACHE/.lock-$FLAVOUR"
        flock -n 9 || { log "another $FLAVOUR kernel build holds $RNULL_CACHE/.lock-$FLAVOUR; waiting"; flock 9; }
        build ;;
    kdir) kdir ;;
    cached)
        out=$(kdir)
        [[ -f $out/.rnull-stamp && -f $out/arch/x86/boot/bzImage \
           && $(cat "$out/.rnull-stamp") == "$(cache_key "$(kernel_version "$(unpacked)")")" ]] ;;
    *) die "usage: $0 build|kdir|cached" ;;
esac
