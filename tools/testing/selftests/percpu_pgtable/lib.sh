#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Helpers shared by the percpu_pgtable selftests (POSIX sh: the guest
# runs busybox).  The expected topology comes from the guest command
# line, which the host harness (scripts/pcpt/boot.sh) writes from the
# same options it gives QEMU.

ksft_pass=0
ksft_fail=1
ksft_skip=4

pcpt_failures=0

# cmdline_opt NAME DEFAULT: value of pcpt.NAME= on the command line.
cmdline_opt()
{
	for w in $(cat /proc/cmdline); do
		case "$w" in
		"pcpt.$1="*) echo "${w#*=}"; return ;;
		esac
	done
	echo "$2"
}

fail()
{
	echo "# FAIL: $*"
	pcpt_failures=$((pcpt_failures + 1))
}

pass()
{
	echo "# ok: $*"
}

skip()
{
	echo "# SKIP: $*"
	exit $ksft_skip
}

finish()
{
	if [ "$pcpt_failures" -ne 0 ]; then
		echo "# $pcpt_failures check(s) failed"
		exit $ksft_fail
	fi
	exit $ksft_pass
}

# cpulist_expand LIST: "0-2,5" -> "0 1 2 5"
cpulist_expand()
{
	echo "$1" | tr ',' '\n' | while IFS=- read -r a b; do
		[ -n "$a" ] || continue
		seq "$a" "${b:-$a}"
	done | tr '\n' ' ' | sed 's/ $//'
}

# node_of_cpu CPU: the node whose cpulist holds CPU, from sysfs.
node_of_cpu()
{
	for n in /sys/devices/system/node/node[0-9]*; do
		for c in $(cpulist_expand "$(cat "$n/cpulist")"); do
			[ "$c" = "$1" ] && { echo "${n##*node}"; return; }
		done
	done
	echo -1
}

online_nodes()
{
	cpulist_expand "$(cat /sys/devices/system/node/online)"
}

debugfs_mount()
{
	[ -d /sys/kernel/debug/tracing ] || [ -e /sys/kernel/debug/kernel_page_tables ] ||
		mount -t debugfs none /sys/kernel/debug 2>/dev/null
	true
}
