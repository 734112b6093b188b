#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Module load and unload pinned to every CPU of every node: module space
# mappings are shared entries, so every table must match the master after
# each step.
DIR=$(dirname "$0")
. "$DIR/lib.sh"

debugfs_mount
pcpt_active || skip "per-CPU kernel page tables not active"
mod=pcpt_test_mod
ko="$DIR/test_modules/$mod.ko"
[ -f "$ko" ] || { fail "$ko not built"; finish; }
grep -q "^$mod " /proc/modules && rmmod $mod

for cpu in $(cpulist_expand "$(cat /sys/devices/system/cpu/online)"); do
	taskset -c "$cpu" insmod "$ko" || { fail "insmod on cpu$cpu"; continue; }
	pcpt_check "insmod on cpu$cpu"
	taskset -c "$cpu" rmmod $mod || fail "rmmod on cpu$cpu"
	pcpt_check "rmmod on cpu$cpu"
done
finish
