#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build a static arm64 perf from a kernel tree's tools/perf, with only
# the features that need no extra libraries.
#
# Usage: build-perf.sh TREE OUT_DIR     (result: OUT_DIR/perf)
set -euo pipefail

tree=$(cd "$1" && pwd)
out=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

mkdir -p "$out"
out=$(cd "$out" && pwd)
[ -x "$out/perf" ] && exit 0
info "building static arm64 perf from $tree/tools/perf (log: $out/build.log)"
if ! make -C "$tree/tools/perf" O="$out" ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- \
	LDFLAGS=-static NO_LIBELF=1 NO_LIBTRACEEVENT=1 NO_JEVENTS=1 NO_LIBPYTHON=1 \
	NO_LIBPERL=1 NO_LIBBPF=1 NO_BPF_SKEL=1 NO_DWARF=1 NO_LIBUNWIND=1 NO_SDT=1 \
	NO_SLANG=1 NO_GTK2=1 NO_LIBNUMA=1 NO_LIBCAP=1 NO_LIBBABELTRACE=1 NO_ZLIB=1 \
	NO_LZMA=1 NO_LIBZSTD=1 NO_LIBCRYPTO=1 NO_AUXTRACE=1 NO_LIBDW_DWARF_UNWIND=1 \
	NO_LIBLLVM=1 NO_CAPSTONE=1 NO_LIBPFM4=1 NO_DEMANGLE=1 WERROR=0 \
	-j"$(nproc)" perf >"$out/build.log" 2>&1; then
	tail -20 "$out/build.log" >&2
	die "perf build failed (log: $out/build.log)"
fi
file_ok=$(od -An -tx1 -j18 -N2 "$out/perf" | tr -d ' ')
[ "$file_ok" = "b700" ] || die "$out/perf is not an arm64 binary"
info "built $out/perf"
