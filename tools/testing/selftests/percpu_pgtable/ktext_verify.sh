#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Every node's copy of text and rodata equals the master byte for byte,
# and so does what every online CPU reads through the image's addresses;
# with a module loaded, so do the node copies of its text and rodata, and
# every page of it has one on every node.
DIR=$(dirname "$0")
. "$DIR/lib.sh"

debugfs_mount
tr_present || { skip "text replication not built in"; }
if ! tr_active; then
	grep -q '^inactive: ' "$TR_DEBUGFS/verify" &&
		pass "inactive: $(head -1 "$TR_DEBUGFS/verify")" ||
		fail "inactive, but verify says: $(head -3 "$TR_DEBUGFS/verify" | tr '\n' ';')"
	finish
fi
out=$(cat "$TR_DEBUGFS/verify")
ncpu=$(cpulist_expand "$(cat /sys/devices/system/cpu/online)" | wc -w)
views=$(echo "$out" | grep -c '^cpu[0-9]*: node [0-9]* view: [0-9]* bytes compared, 0 differ$')
[ "$views" -eq "$ncpu" ] && pass "all $ncpu CPUs read the master's bytes through the image" ||
	fail "$views of $ncpu CPU views match:" \
		"$(echo "$out" | grep '^cpu' | grep -v ' 0 differ' | head -3 | tr '\n' ';')"
tr_verify "boot"

# A loaded module: every node has its own copy of each of its pages.
if tr_modules; then
	m=ktext_big1
	grep -q "^$m " /proc/modules || insmod "$DIR/test_modules/$m.ko" ||
		{ fail "insmod $m"; finish; }
	out=$(cat "$TR_DEBUGFS/verify")
	line=$(echo "$out" | grep '^modules: ')
	copies=$(echo "$line" | sed -n 's/.* \([0-9]*\) node copies compared.*/\1/p')
	shared=$(echo "$line" | sed -n 's/.* \([0-9]*\) shared with the master$/\1/p')
	if echo "$out" | grep -qx 'mismatches: 0' && [ "${copies:-0}" -gt 0 ] &&
		[ "$shared" = 0 ]; then
		pass "with $m loaded: $line, 0 mismatches"
	else
		fail "with $m loaded: $line;" \
			"$(echo "$out" | grep -v ' 0 differ$' | tail -4 | tr '\n' ';')"
	fi
	rmmod $m
fi
finish
