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

PCPT_DEBUGFS=/sys/kernel/debug/percpu_pgtable

# pcpt_active: are per-CPU kernel tables in use (debugfs status)?
pcpt_active()
{
	grep -q '^active: yes' "$PCPT_DEBUGFS/status" 2>/dev/null
}

# pcpt_check WHAT: the copy-vs-master comparison must report 0 mismatches.
pcpt_check()
{
	out=$(cat "$PCPT_DEBUGFS/check" 2>&1)
	if echo "$out" | grep -qx 'mismatches: 0'; then
		pass "consistent after $1"
	else
		fail "after $1: $(echo "$out" | tail -5 | tr '\n' ';')"
	fi
}

# pcpt_loaded_ok WHAT: every online CPU's TTBR1 holds its own root (or
# the master when it has none), as read on that CPU.
pcpt_loaded_ok()
{
	bad=$(awk '
		/^master: / { master = $2 }
		/^cpu[0-9]+: / {
			if ($0 ~ / offline$/) next
			want = ($2 == "master") ? master : $5
			got = $NF
			if (got != want) print $1 " loaded " got " expected " want
		}' "$PCPT_DEBUGFS/status")
	if [ -z "$bad" ]; then
		pass "every online CPU on its own table after $1"
	else
		fail "after $1: $(echo "$bad" | tr '\n' ';')"
	fi
}
