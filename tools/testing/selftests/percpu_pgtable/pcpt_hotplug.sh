#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Offline and online every CPU but CPU0, on every node, several times;
# after each step every online CPU translates through its own table and
# every table matches the master.
DIR=$(dirname "$0")
. "$DIR/lib.sh"

debugfs_mount
[ -r "$PCPT_DEBUGFS/status" ] || skip "no $PCPT_DEBUGFS (CONFIG_PERCPU_PGTABLE=n)"
cycles=$(cmdline_opt hotplug_cycles 3)

for cycle in $(seq "$cycles"); do
	for node in $(online_nodes); do
		for cpu in $(cpulist_expand "$(cat /sys/devices/system/node/node$node/cpulist)"); do
			f=/sys/devices/system/cpu/cpu$cpu/online
			[ -w "$f" ] || continue
			echo 0 > "$f" || { fail "offline cpu$cpu"; continue; }
			pcpt_active && pcpt_check "cpu$cpu offline (cycle $cycle)"
			echo 1 > "$f" || fail "online cpu$cpu"
			[ "$(cat "$f")" = 1 ] || fail "cpu$cpu did not come back"
			pcpt_loaded_ok "cpu$cpu online (node $node, cycle $cycle)"
			pcpt_active && pcpt_check "cpu$cpu online (cycle $cycle)"
		done
	done
done
finish
