#!/usr/bin/env bash
# Runs the test suite of a finished build on Debian 12's own kernels under
# qemu: `make test-kernels`, or
#
#   tests/kernels/run.sh BUILD_DIR [SERIES...]      SERIES: 6.1 6.12 (default both)
#
# Each kernel image package is fetched with `apt-get download` (never
# installed) into $URINGKIT_KERNEL_CACHE (default ~/.cache/uringkit/kernels)
# and unpacked there. The initramfs holds busybox-static, the modules the VM
# needs from the same package, and tests/kernels/init, which mounts the host's
# root read-only over virtio-9p (virtme's layout) and runs ctest in it.
#
# Environment:
#   URINGKIT_KERNEL_TESTS  ctest selection, default "-L kernel" (see docs/overview.md, "Tests"); empty: all
#   URINGKIT_VM_ACCEL      kvm or tcg; default kvm when /dev/kvm is usable
#   URINGKIT_VM_TIMEOUT    seconds one kernel's run may take (default 1500)
#   URINGKIT_TEST_TIMEOUT  ctest's per-test timeout in the VM (default 300)
#   URINGKIT_KERNEL_RESULTS  where results go (default BUILD_DIR/kernels)
#   URINGKIT_VM_COMMAND    a shell command to run in the VM instead of ctest (to
#                          look into a failure: strace, a single test binary)
# Results: RESULTS/SERIES/{console.log,ctest.log,junit.xml,summary.txt}.
# Exit status: 0 every reachable kernel ran the tests with no failure,
# 1 a test failed or a VM did not finish, 2 bad usage or a missing tool.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 1 ] || { echo "usage: $0 BUILD_DIR [6.1] [6.12]" >&2; exit 2; }
build=$(cd "$1" && pwd) || { echo "run.sh: no build directory $1" >&2; exit 2; }
shift
[ -f "$build/CTestTestfile.cmake" ] || { echo "run.sh: $build is not a configured build (run make build)" >&2; exit 2; }
[ $# -gt 0 ] || set -- 6.1 6.12

cache=${URINGKIT_KERNEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/uringkit/kernels}
selection=${URINGKIT_KERNEL_TESTS--L kernel}
results=${URINGKIT_KERNEL_RESULTS:-$build/kernels}
vm_timeout=${URINGKIT_VM_TIMEOUT:-1500}
test_timeout=${URINGKIT_TEST_TIMEOUT:-300}
busybox=/bin/busybox
for tool in qemu-system-x86_64 apt-get apt-cache dpkg-deb cpio mkfs.ext4 python3 xz zstd timeout; do
    command -v "$tool" >/dev/null || { echo "run.sh: $tool is missing (make deps installs it)" >&2; exit 2; }
done
# The initramfs has no libc: ldd fails on a static executable.
[ -x "$busybox" ] && ! ldd "$busybox" >/dev/null 2>&1 ||
    { echo "run.sh: $busybox is not busybox-static (make deps installs it)" >&2; exit 2; }

accel=${URINGKIT_VM_ACCEL:-}
case $accel in
    ''|kvm|tcg) ;;
    *) echo "run.sh: URINGKIT_VM_ACCEL must be kvm or tcg" >&2; exit 2 ;;
esac

# KVM when /dev/kvm is there and a kernel actually starts under it: a nested
# VM may offer /dev/kvm and still never run a guest instruction (seen on the
# development VM), so a 20 s boot to the first console line decides.
# arch-capabilities is off because such hosts refuse to set its MSR.
kvm_args="-accel kvm -cpu host,-arch-capabilities"
kvm_works() {  # VMLINUZ
    [ -r /dev/kvm ] && [ -w /dev/kvm ] || return 1
    # shellcheck disable=SC2086
    timeout 20 qemu-system-x86_64 -nodefaults -no-reboot -display none -serial stdio $kvm_args -m 256M \
        -kernel "$1" -append "console=ttyS0 panic=-1 rdinit=/none root=/dev/none" </dev/null 2>/dev/null |
        grep -q 'Linux version'
}

# The image package of a series: Debian 12 names the 6.1 ABI linux-image-6.1.0-N-amd64
# and the 6.12 one (bookworm-security, the LTS successor) linux-image-6.12.N+deb12-amd64.
# The generic flavour: -cloud has no 9p.
package_pattern() {
    case $1 in
        6.1) echo '^linux-image-6\.1\.0-[0-9]+-amd64$' ;;
        6.12) echo '^linux-image-6\.12\.[0-9]+\+deb12-amd64$' ;;
        *) return 1 ;;
    esac
}

# Newest package of the series that apt's sources offer, else the newest cached one.
resolve_package() {
    pattern=$(package_pattern "$1") || return 1
    name=$(apt-cache search --names-only "$pattern" 2>/dev/null | awk '{print $1}' | sort -V | tail -n 1)
    if [ -n "$name" ]; then echo "$name"; return 0; fi
    ls "$cache" 2>/dev/null | sed -n 's/_.*\.deb$//p' | grep -E "$pattern" | sort -V | tail -n 1
}

fetch_kernel() {  # PACKAGE -> unpacked tree under $cache/x/PACKAGE
    mkdir -p "$cache"
    if ! ls "$cache/$1"_*.deb >/dev/null 2>&1; then
        echo "run.sh: fetching $1 into $cache"
        (cd "$cache" && apt-get download -q -o APT::Sandbox::User=root "$1") >&2 || return 1
    fi
    if [ ! -d "$cache/x/$1/boot" ]; then
        rm -rf "$cache/x/$1.tmp"
        mkdir -p "$cache/x/$1.tmp"
        dpkg-deb -x "$(ls "$cache/$1"_*.deb | sort -V | tail -n 1)" "$cache/x/$1.tmp"
        mv "$cache/x/$1.tmp" "$cache/x/$1"
    fi
}

# What the VM loads: the PCI transport, the disk, 9p, the overlay root and ext4
# (crc32c is ext4's checksum, found through the crypto API, not a module
# dependency), and the NVMe driver for the emulated drive (init loads it with
# poll queues, so IOPOLL and passthrough run on a real driver).
WANTED_MODULES="virtio_pci virtio_blk 9pnet_virtio 9p overlay ext4 crc32c_generic nvme"

# Copies MODULE and what it depends on (modinfo's depends=, read from the
# module) into DEST/lib/modules, decompressed, appending to DEST/modules.order
# after its dependencies. Built-in modules are skipped.
add_module() {  # MODDIR DEST MODULE
    local mname file deps dep  # recursive
    mname=$(echo "$3" | tr - _)
    grep -qx "$mname" "$2/modules.seen" 2>/dev/null && return 0
    echo "$mname" >>"$2/modules.seen"
    file=$(find "$1/kernel" -name "$mname.ko*" -o -name "$(echo "$mname" | tr _ -).ko*" | head -n 1)
    if [ -z "$file" ]; then
        if grep -Eq "/($mname|$(echo "$mname" | tr _ -))\.ko$" "$1/modules.builtin"; then return 0; fi
        echo "run.sh: module $mname not in $1" >&2
        return 1
    fi
    case $file in
        *.xz) xz -dc "$file" >"$2/lib/modules/$mname.ko" ;;
        *.zst) zstd -qdc "$file" >"$2/lib/modules/$mname.ko" ;;
        *) cp "$file" "$2/lib/modules/$mname.ko" ;;
    esac
    deps=$(grep -a -o 'depends=[^[:cntrl:]]*' "$2/lib/modules/$mname.ko" | head -n 1 | sed 's/^depends=//; s/,/ /g')
    for dep in $deps; do
        add_module "$1" "$2" "$dep" || return 1
    done
    echo "$mname" >>"$2/modules.order"
}

build_initramfs() {  # UNPACKED_TREE OUTPUT
    moddir=$(ls -d "$1"/lib/modules/* | head -n 1)
    root=$(mktemp -d)
    mkdir -p "$root/bin" "$root/lib/modules" "$root/proc" "$root/sys" "$root/dev" "$root/host" "$root/rw" "$root/newroot"
    cp "$busybox" "$root/bin/busybox"
    cp "$here/init" "$root/init"
    chmod 755 "$root/init"
    : >"$root/modules.order"
    for m in $WANTED_MODULES; do
        add_module "$moddir" "$root" "$m" || { rm -rf "$root"; return 1; }
    done
    rm -f "$root/modules.seen"
    (cd "$root" && find . | cpio -o -H newc --quiet) >"$2"
    rm -rf "$root"
}

run_kernel() {  # SERIES
    out="$results/$1"
    package=$(resolve_package "$1")
    if [ -z "$package" ]; then
        echo "== $1: no linux-image package of this series is reachable through apt's sources, and none is cached: not run"
        return 0
    fi
    if ! fetch_kernel "$package"; then
        echo "== $1: $package could not be downloaded (apt's sources are not reachable?) and is not cached: not run"
        return 0
    fi
    tree="$cache/x/$package"
    rm -rf "$out"
    mkdir -p "$out"
    build_initramfs "$tree" "$out/initramfs.cpio"
    truncate -s 4G "$out/scratch.img"
    mkfs.ext4 -q -F "$out/scratch.img"
    # qemu's emulated NVMe drive, sparse: what the passthrough and IOPOLL
    # tests (nvme_passthrough_test) may overwrite.
    truncate -s 64M "$out/nvme.img"
    cat >"$out/cmd.sh" <<EOF
cd "$build"
[ -b /dev/nvme0n1 ] && export URINGKIT_TEST_NVME=/dev/nvme0n1
uname -r >/run/uringkit-out/uname
start=\$(date +%s)
{ ${URINGKIT_VM_COMMAND:-ctest --test-dir "$build" -j 2 --timeout $test_timeout --output-junit /run/uringkit-out/junit.xml $selection}; echo \$? >/run/uringkit-out/ctest.rc; } 2>&1 | tee /run/uringkit-out/ctest.log
echo \$((\$(date +%s) - start)) >/run/uringkit-out/seconds
EOF
    # The VM mounts a fresh disk on /tmp: a tree that lives under the host's
    # /tmp (a CI clone, say) is shown there again, through an overlay (init).
    for dir in "$build" "$(cd "$here/../.." && pwd)"; do
        case "$dir" in /tmp/?*) dir=${dir#/tmp/}; echo "/tmp/${dir%%/*}" ;; esac
    done | sort -u >"$out/host_tmp_dirs"
    vmlinuz=$(ls "$tree"/boot/vmlinuz-* | head -n 1)
    if [ -z "$accel" ]; then
        if kvm_works "$vmlinuz"; then accel=kvm; else accel=tcg; fi
    fi
    if [ "$accel" = kvm ]; then accel_args=$kvm_args; else accel_args="-accel tcg -cpu max"; fi
    echo "== $1: $package under qemu ($accel), tests: $selection"
    started=$(date +%s)
    # A run under TCG takes minutes: say every 30 s how far the VM's ctest
    # got (its log is written into $out as it goes).
    (
        while sleep 30; do
            done_so_far=$(grep -aoE '^ *[0-9]+/[0-9]+ Test' "$out/ctest.log" 2>/dev/null | tail -n 1 | tr -d ' ')
            echo "== $1: ${done_so_far:+${done_so_far%Test} tests done, }$(($(date +%s) - started)) s"
        done
    ) &
    progress_pid=$!
    # no_timer_check: under TCG on a busy host the IO-APIC timer check can
    # miss its window and panic the boot ("IO-APIC + timer doesn't work").
    # shellcheck disable=SC2086 # accel_args is two words on purpose
    timeout "$vm_timeout" qemu-system-x86_64 -nodefaults -no-reboot -display none -serial stdio \
        $accel_args -m 3G -smp 2 \
        -kernel "$vmlinuz" -initrd "$out/initramfs.cpio" \
        -append "console=ttyS0 panic=-1 quiet loglevel=3 no_timer_check" \
        -virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap" \
        -virtfs "local,path=$out,mount_tag=out,security_model=none" \
        -drive "file=$out/scratch.img,if=none,id=scratch,format=raw,cache=unsafe" \
        -device "virtio-blk-pci,drive=scratch,num-queues=2" \
        -drive "file=$out/nvme.img,if=none,id=nvm,format=raw,cache=unsafe" \
        -device "nvme,serial=uringkit,drive=nvm" \
        </dev/null >"$out/console.log" 2>&1 || true
    kill "$progress_pid" 2>/dev/null
    wait "$progress_pid" 2>/dev/null
    echo $(($(date +%s) - started)) >"$out/vm_seconds"
    rm -f "$out/scratch.img" "$out/nvme.img"
    python3 "$here/summary.py" "$1" "$package" "$accel" "$out" | tee "$out/summary.txt"
}

status=0
for series in "$@"; do
    package_pattern "$series" >/dev/null || { echo "run.sh: unknown series $series (6.1 or 6.12)" >&2; exit 2; }
    run_kernel "$series" || status=1
    [ ! -s "$results/$series/summary.txt" ] || grep -q '^result: ok' "$results/$series/summary.txt" || status=1
done
exit $status
