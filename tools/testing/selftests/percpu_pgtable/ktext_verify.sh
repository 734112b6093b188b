#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Every node's copy of text and rodata equals the master byte for byte,
# and so does what every online CPU reads through the image's addresses.
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
	fail "$views of $ncpu CPU views match: $(echo "$out" | grep '^cpu' | grep -v ' 0 differ' | head -3 | tr '\n' ';')"
tr_verify "boot"
finish
