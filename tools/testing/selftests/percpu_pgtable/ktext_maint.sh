#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Cache maintenance of every copy on a text write.  QEMU keeps instruction
# fetch coherent with any store, so a copy whose D-cache clean or I-cache
# invalidation is missing would still run the new instruction here: the
# KUnit suite kernel_replication_arch checks the record the core keeps of
# each copy made visible to instruction fetch, as well as every CPU
# running the new instruction, or loading the new literal, from its own
# node's copy.  At boot KUnit
# runs before the switch to the copies (the suite then checks the master
# alone); this runs it again through KUnit's debugfs, with the core's
# suite kernel_replication, whose module window case needs the window.
DIR=$(dirname "$0")
. "$DIR/lib.sh"

debugfs_mount
tr_present || { skip "text replication not built in"; }
# The test configuration builds the suites in: a missing one fails,
# unless KUnit is off on this boot.
for s in kernel_replication kernel_replication_arch; do
	[ -d "/sys/kernel/debug/kunit/$s" ] && continue
	grep -qw "kunit.enable=0" /proc/cmdline && skip "KUnit is off (kunit.enable=0)"
	fail "no suite $s in /sys/kernel/debug/kunit" \
		"(CONFIG_KERNEL_REPLICATION_KUNIT_TEST, CONFIG_KUNIT_DEBUGFS)"
	finish
done

# KUnit prints its KTAP at KERN_INFO: keep it off the console, where the
# host parses this runner's TAP; the results file has it all.  Level 5
# still shows KERN_WARNING, at which WARN and lockdep reports print.
old_level=$(cut -f1 /proc/sys/kernel/printk)
echo 5 > /proc/sys/kernel/printk
res=
for s in kernel_replication kernel_replication_arch; do
	echo run > "/sys/kernel/debug/kunit/$s/run" || fail "cannot run suite $s"
	res="$res
$(cat "/sys/kernel/debug/kunit/$s/results")"
done
echo "$old_level" > /proc/sys/kernel/printk
echo "$res" | sed 's/^/# /'
active=$(tr_active && echo active || echo inactive)
# What the rerun saw, against the status: a stale boot-time result (run
# before the switch: no copies) or a module case that returned early
# shows here.
want=0
[ "$active" = active ] &&
	want=$(grep -Ec '^node [0-9]+: .* (copy|master)$' "$TR_DEBUGFS/status")
# One count per patching case (instruction and literal).
got=$(echo "$res" | sed -n 's/.*copies written: \([0-9]*\).*/\1/p' | tr '\n' ' ')
got=${got% }
[ "$got" = "$want $want" ] ||
	fail "the patching cases wrote ${got:-no} copies, the status has $want"
if [ "$active" = active ]; then
	echo "$res" | grep -q "box: [1-9][0-9]* shared granules checked" ||
		fail "the box case did not run, with replication active"
fi
if tr_modules; then
	echo "$res" | grep -q "module window: [0-9]* node copies" ||
		fail "the module window case did not run, with the window set up"
	[ "$active" = active ] &&
		! echo "$res" | grep -q "module window: [1-9][0-9]* node PTE tables checked" &&
		fail "the window tables case checked no node table, with replication active"
	[ "$active" = active ] &&
		! echo "$res" | grep -q "W^X: a W+X page in node [0-9]*'s tables, then none" &&
		fail "the W^X case did not run, with replication active"
fi
if echo "$res" | grep -q "not ok\|# SKIP"; then
	fail "a kernel_replication suite did not pass ($active)"
elif ! echo "$res" | grep -Eq "^ *ok [0-9]+ krepl_test_module_rw_refused"; then
	fail "no result from suite kernel_replication"
elif echo "$res" | grep -Eq "^ *ok [0-9]+ krepl_test_patch_every_copy" &&
     echo "$res" | grep -Eq "^ *ok [0-9]+ krepl_test_patch_literal"; then
	if [ "$active" = active ]; then
		pass "every copy written, cleaned and run from its node (instruction, literal)"
	else
		pass "inactive: the master written, every CPU runs it"
	fi
else
	fail "no result from suite kernel_replication_arch"
fi
finish
