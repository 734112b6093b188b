#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Configure and build an arm64 kernel from config fragments.
#
# Usage: build-kernel.sh TREE BUILD_DIR FRAGMENT...
#
# The fragments are concatenated and applied on top of allnoconfig
# (KCONFIG_ALLCONFIG), so only what they name is enabled.  Every symbol a
# fragment sets must come out of Kconfig with that value; one that does
# not (misspelt, unmet dependency) stops the build with its name.
# Environment: JOBS (default: number of CPUs + 1), W (passed to kbuild),
# PCPT_LAX_CONFIG=1 (no symbol must come out as asked: the base kernel),
# PCPT_LAX_SYMS="CONFIG_A CONFIG_B" (these may not: a prefix of the series
# that does not define them yet or does not let them be set),
# PCPT_RECONFIGURE=1 (configure even if the fragments did not change:
# the tree's Kconfig did), PCPT_CONFIG_ONLY=1 (configure, do not build).
set -euo pipefail

[ $# -ge 3 ] || { echo "usage: build-kernel.sh TREE BUILD_DIR FRAGMENT..." >&2; exit 2; }
tree=$(cd "$1" && pwd)
bld=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

mkdir -p "$bld"
# A log of this run only: a configuration that fails leaves no stale one.
rm -f "$bld/build.log"
bld=$(cd "$bld" && pwd)
for f in "$@"; do [ -f "$f" ] || die "config fragment $f not found"; done
cat "$@" > "$bld/.pcpt-fragment.new"

kmake() {
	make -C "$tree" O="$bld" ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- \
		CC="ccache aarch64-linux-gnu-gcc" ${W:+W=$W} "$@"
}

if ! cmp -s "$bld/.pcpt-fragment.new" "$bld/.pcpt-fragment" || [ ! -f "$bld/.config" ] ||
   [ "${PCPT_RECONFIGURE:-0}" = 1 ]; then
	info "configuring $bld from: $*"
	kmake -s KCONFIG_ALLCONFIG="$bld/.pcpt-fragment.new" allnoconfig >"$bld/config.log" 2>&1 ||
		{ cat "$bld/config.log" >&2; die "configuration failed (log: $bld/config.log)"; }
	# The last assignment of a symbol wins, as in Kconfig itself.
	declare -A want=()
	while IFS='=' read -r sym val; do
		want[$sym]=$val
	done < <(sed -nE -e 's/^(CONFIG_[A-Za-z0-9_]+)=(.*)$/\1=\2/p' \
			 -e 's/^# (CONFIG_[A-Za-z0-9_]+) is not set$/\1=n/p' "$bld/.pcpt-fragment.new")
	bad=0
	for sym in "${!want[@]}"; do
		val=${want[$sym]}
		got=$(grep -E "^$sym=|^# $sym is not set" "$bld/.config" | head -1 || true)
		case "$got" in
		"$sym=$val") continue ;;
		"# $sym is not set"|"") [ "$val" = n ] && continue ;;
		esac
		case " ${PCPT_LAX_SYMS:-} " in
		*" $sym "*) info "$sym=$val requested, got '${got:-nothing}' (allowed here)"; continue ;;
		esac
		warn "$sym=$val requested, got '${got:-nothing (unknown symbol or unmet dependency)}'"
		bad=1
	done
	if [ $bad -ne 0 ] && [ "${PCPT_LAX_CONFIG:-0}" = 1 ]; then
		info "(symbols above are expected to be missing from this tree)"
	elif [ $bad -ne 0 ]; then
		rm -f "$bld/.config"
		die "the config fragments ($*) do not produce the configuration they ask for"
	fi
	mv "$bld/.pcpt-fragment.new" "$bld/.pcpt-fragment"
fi

[ "${PCPT_CONFIG_ONLY:-0}" = 1 ] && exit 0
info "building $bld (log: $bld/build.log)"
start=$(date +%s)
if ! kmake -j"${JOBS:-$(($(nproc) + 1))}" Image modules >"$bld/build.log" 2>&1; then
	grep -E 'error|Error' "$bld/build.log" | head -20 >&2
	die "kernel build failed (log: $bld/build.log)"
fi
grep -E 'warning:' "$bld/build.log" >&2 || true
info "built $bld/arch/arm64/boot/Image in $(($(date +%s) - start)) s"
