#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install what the build, the guest and the benchmarks need, from
# Debian's archive only.  Quiet and quick when everything is present.
#
# Usage: deps.sh OUT_DIR
set -euo pipefail

out=$1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

pkgs=(make gcc bc bison flex libssl-dev libelf-dev cpio xz-utils rsync kmod
      python3 perl git ccache gcc-aarch64-linux-gnu libc6-dev-arm64-cross
      qemu-system-arm gnuplot-nox gdb-multiarch "$BASE_PKG")

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done

sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo

apt_get() {
	local log=$out/deps/apt.log
	mkdir -p "$out/deps"
	if ! DEBIAN_FRONTEND=noninteractive $sudo apt-get "$@" >>"$log" 2>&1; then
		tail -20 "$log" >&2
		die "apt-get $* failed (log: $log)"
	fi
}

updated=0
if [ ${#missing[@]} -gt 0 ]; then
	info "installing from Debian: ${missing[*]}"
	apt_get update
	updated=1
	apt_get install -y --no-install-recommends "${missing[@]}"
fi
# The series applies to one Debian update of the base: install that one
# (the archive keeps earlier updates), so that a newer update does not
# break the series under us.  If the archive no longer has it, carry on
# with what is installed and say so (check_base_version).
if [ "$(installed_base_version)" != "$BASE_VERSION_TESTED" ]; then
	[ $updated -eq 1 ] || { apt_get update; updated=1; }
	if apt-cache madison "$BASE_PKG" 2>/dev/null | grep -q "| $BASE_VERSION_TESTED |"; then
		info "installing $BASE_PKG $BASE_VERSION_TESTED, the base the series applies to"
		apt_get install -y --no-install-recommends --allow-downgrades \
			"$BASE_PKG=$BASE_VERSION_TESTED"
	fi
fi
check_base_version

# The guest's userspace: Debian's static arm64 busybox, unpacked (not
# installed) into the output directory.
bb=$out/deps/busybox/bin/busybox
if [ ! -x "$bb" ]; then
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then
		info "adding arm64 as a foreign dpkg architecture (for busybox-static:arm64)"
		$sudo dpkg --add-architecture arm64
		updated=0
	fi
	[ $updated -eq 1 ] || apt_get update
	rm -rf "$out/deps/dl" && mkdir -p "$out/deps/dl"
	(cd "$out/deps/dl" && apt-get download busybox-static:arm64 >>"$out/deps/apt.log" 2>&1) ||
		die "apt-get download busybox-static:arm64 failed (log: $out/deps/apt.log)"
	rm -rf "$out/deps/busybox.x" && mkdir -p "$out/deps/busybox.x"
	dpkg-deb -x "$out"/deps/dl/busybox-static_*_arm64.deb "$out/deps/busybox.x"
	rm -rf "$out/deps/busybox" && mv "$out/deps/busybox.x" "$out/deps/busybox"
	file_ok=$(od -An -tx1 -j18 -N2 "$bb" | tr -d ' ')
	[ "$file_ok" = "b700" ] || die "$bb is not an arm64 ELF binary"
	info "arm64 busybox unpacked into $out/deps/busybox"
fi
