#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Cache maintenance of every copy on a text write.  QEMU keeps instruction
# fetch coherent with any store, so a copy whose D-cache clean or I-cache
# invalidation is missing would still run the new instruction here: the
# KUnit suite text_replica checks the record the debug hook keeps of each
# copy cleaned, as well as every CPU running the new instruction from its
# own node's copy.  At boot KUnit runs before the switch to the copies
# (the suite then checks the master alone); this runs it again through
# KUnit's debugfs.
DIR=$(dirname "$0")
. "$DIR/lib.sh"

debugfs_mount
tr_present || { skip "text replication not built in"; }
suite=/sys/kernel/debug/kunit/text_replica
[ -d "$suite" ] ||
	skip "no $suite (CONFIG_KERNEL_TEXT_REPLICATION_KUNIT_TEST, CONFIG_KUNIT_DEBUGFS)"

# KUnit prints its KTAP at KERN_INFO: keep it off the console, where the
# host parses this runner's TAP; the results file has it all.  Level 5
# still shows KERN_WARNING, at which WARN and lockdep reports print.
old_level=$(cut -f1 /proc/sys/kernel/printk)
echo 5 > /proc/sys/kernel/printk
echo run > "$suite/run"
echo "$old_level" > /proc/sys/kernel/printk
res=$(cat "$suite/results")
echo "$res" | sed 's/^/# /'
active=$(tr_active && echo active || echo inactive)
if echo "$res" | grep -q "not ok\|# SKIP"; then
	fail "suite text_replica did not pass ($active)"
elif echo "$res" | grep -Eq "^ *ok [0-9]+ tr_test_patch_every_copy"; then
	if [ "$active" = active ]; then
		pass "every copy written, cleaned and run from its node"
	else
		pass "inactive: the master written, every CPU runs it"
	fi
else
	fail "no result from suite text_replica"
fi
finish
