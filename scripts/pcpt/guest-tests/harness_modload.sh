#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A test module loads and unloads on a CPU of every node.  The module
# records the CPU and node its init function ran on; both must be the
# CPU insmod was pinned to and that CPU's node according to sysfs.
DIR=$(dirname "$0")
. "$DIR/lib.sh"

mod=pcpt_test_mod
ko="$DIR/test_modules/$mod.ko"
[ -f "$ko" ] || { fail "$ko not built"; finish; }
grep -q "^$mod " /proc/modules && rmmod $mod

for node in $(online_nodes); do
	cpus=$(cpulist_expand "$(cat /sys/devices/system/node/node$node/cpulist)")
	[ -n "$cpus" ] || continue
	for cpu in $(echo "$cpus" | cut -d' ' -f1) $(echo "$cpus" | awk '{ print $NF }'); do
		if ! taskset -c "$cpu" insmod "$ko"; then
			fail "insmod on cpu $cpu (node $node)"
			continue
		fi
		p=/sys/module/$mod/parameters
		got_cpu=$(cat $p/init_cpu)
		got_node=$(cat $p/init_node)
		if [ "$got_cpu" = "$cpu" ] && [ "$got_node" = "$node" ]; then
			pass "loaded on cpu $cpu node $node"
		else
			fail "pinned to cpu $cpu node $node, init ran on cpu $got_cpu node $got_node"
		fi
		rmmod $mod || fail "rmmod on cpu $cpu"
		grep -q "^$mod " /proc/modules && fail "$mod still loaded after rmmod"
	done
done
finish
