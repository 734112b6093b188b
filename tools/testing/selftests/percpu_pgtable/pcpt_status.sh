#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Per-CPU kernel page tables are set up as the command line asks: one
# table per possible CPU on that CPU's node, each online CPU translating
# through its own, 0 mismatches with the master, W^X checked on each, and
# the boot line saying so.  With percpu_pgtable=off everything runs on
# the master.
DIR=$(dirname "$0")
. "$DIR/lib.sh"

debugfs_mount
[ -r "$PCPT_DEBUGFS/status" ] || skip "no $PCPT_DEBUGFS (CONFIG_PERCPU_PGTABLE=n)"
status=$(cat "$PCPT_DEBUGFS/status")
echo "$status" | sed 's/^/# /'

possible=$(cpulist_expand "$(cat /sys/devices/system/cpu/possible)")
nr_possible=$(echo "$possible" | wc -w)

if grep -qw 'percpu_pgtable=off' /proc/cmdline; then
	echo "$status" | grep -q '^active: no' && pass "off on the command line: inactive" ||
		fail "percpu_pgtable=off but status says active"
	for cpu in $possible; do
		echo "$status" | grep -q "^cpu$cpu: master" ||
			fail "cpu$cpu has a table although the feature is off"
	done
	pcpt_loaded_ok "boot"
	dmesg | grep -q 'percpu_pgtable: disabled on the command line' &&
		pass "boot line says disabled" || fail "no 'disabled' boot line"
	finish
fi

pcpt_active || { fail "not active"; finish; }
tables=$(echo "$status" | sed -n 's/^tables: //p')
failed=$(echo "$status" | sed -n 's/^failed: //p')
# percpu_pgtable_testfail=<cpulist> (a testing aid) makes those CPUs'
# allocations fail: they must run on the master, with a warning.
want_failed=$(sed -n 's/.*percpu_pgtable_testfail=\([^ ]*\).*/\1/p' /proc/cmdline)
nr_failed=$(cpulist_expand "$want_failed" | wc -w)
[ "$tables" = "$((nr_possible - nr_failed))" ] &&
	pass "$tables tables for $nr_possible possible CPUs, $nr_failed without" ||
	fail "$tables tables for $nr_possible possible CPUs (failed: '$failed')"
[ "$failed" = "$want_failed" ] && pass "CPUs without a table: '${failed}'" ||
	fail "CPUs without a table: '$failed', expected '$want_failed'"
for cpu in $(cpulist_expand "$want_failed"); do
	echo "$status" | grep -q "^cpu$cpu: master" && pass "cpu$cpu falls back to the master" ||
		fail "cpu$cpu should run on the master"
	dmesg | grep -q "no memory for CPU$cpu's table" && pass "cpu$cpu: warning printed" ||
		fail "no warning for cpu$cpu"
done

# Where each table is, from its physical address and the sysfs memory
# blocks of each node, not from what the feature says of it; and the
# table an online CPU really translates through (TTBR1, read on it).
for cpu in $possible; do
	echo " $(cpulist_expand "$want_failed") " | grep -q " $cpu " && continue
	line=$(echo "$status" | grep "^cpu$cpu: ")
	root=$(echo "$line" | awk '{ print $5 }')
	node=$(pa_node "$root")
	want=$(node_of_cpu "$cpu")
	[ "$node" = "$want" ] && pass "cpu$cpu table at $root, in node $node's memory" ||
		fail "cpu$cpu table at $root is in node '$node''s memory, CPU is on node $want"
	loaded=$(echo "$line" | awk '$NF != "offline" { print $NF }')
	[ -z "$loaded" ] || [ "$(pa_node "$loaded")" = "$want" ] ||
		fail "cpu$cpu translates through $loaded, in node $(pa_node "$loaded")'s memory"
done
# Tables are distinct pages.
dups=$(echo "$status" | awk '/^cpu[0-9]+: node/ { print $5 }' | sort | uniq -d)
[ -z "$dups" ] && pass "tables are distinct" || fail "shared tables: $dups"

pcpt_loaded_ok "boot"
pcpt_check "boot"

bytes=$(echo "$status" | sed -n 's/^bytes: //p')
line=$(dmesg | grep 'percpu_pgtable: enabled: ')
echo "$line" | grep -q "enabled: $tables per-CPU kernel page tables, $((bytes / 1024)) KiB" &&
	pass "boot line: ${line#*] }" || fail "boot line missing or wrong: '$line'"
# The boot-time check's line, not a KUnit case's: the first after init
# memory is freed.
wxline=$(dmesg | sed -n '/Freeing unused kernel memory/,$p' | grep -m1 'Checked W+X mappings of')
echo "$wxline" | grep -q "Checked W+X mappings of $tables per-CPU kernel tables: passed" &&
	pass "W^X checked on every table" ||
	fail "no boot-time W^X pass line for $tables tables: '$wxline'"
finish
