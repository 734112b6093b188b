#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the guest initramfs: busybox (Debian's arm64 busybox-static), the
# project's /init, and optional extra directories copied to /.
#
# Usage: mkinitramfs.sh TREE BUILD_DIR OUT.cpio [SRC_DIR:DEST ...]
#
# The archive is made by the kernel's own usr/gen_initramfs.sh and
# usr/gen_init_cpio from BUILD_DIR, so no root privileges are needed for
# device nodes.
set -euo pipefail

[ $# -ge 3 ] || { echo "usage: mkinitramfs.sh TREE BUILD_DIR OUT.cpio [SRC:DEST ...]" >&2; exit 2; }
tree=$(cd "$1" && pwd)
bld=$(cd "$2" && pwd)
out=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

bb=$(dirname "$here")/../out/deps/busybox/bin/busybox
bb=${BUSYBOX:-$bb}
[ -x "$bb" ] || die "arm64 busybox not found at $bb: run 'make deps'"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,root,etc}
cp "$bb" "$stage/bin/busybox"
ln -s busybox "$stage/bin/sh"
cp "$here/guest-init.sh" "$stage/init"
chmod 755 "$stage/init"
echo "root:x:0:0:root:/root:/bin/sh" > "$stage/etc/passwd"
echo "root:x:0:" > "$stage/etc/group"

for spec in "$@"; do
	src=${spec%%:*}
	dst=${spec#*:}
	[ -d "$src" ] || die "initramfs source directory $src does not exist"
	mkdir -p "$stage/$dst"
	cp -a "$src/." "$stage/$dst/"
done

cat > "$stage.list" <<LIST
nod /dev/console 0600 0 0 c 5 1
nod /dev/null 0666 0 0 c 1 3
LIST
(cd "$bld" && sh "$tree/usr/gen_initramfs.sh" -o "$out.tmp" -u squash -g squash "$stage" "$stage.list")
rm -f "$stage.list"
mv "$out.tmp" "$out"
info "initramfs $out: $(du -h "$out" | cut -f1)"
