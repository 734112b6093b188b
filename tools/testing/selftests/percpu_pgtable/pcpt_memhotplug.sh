#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Memory hot-add and hot-remove through a virtio-mem device.  Hot-add
# creates linear map and vmemmap entries (arch_add_memory ->
# __create_pgd_mapping, vmemmap_populate); hot-remove clears them again
# (arch_remove_memory -> unmap_hotplug_range, free_empty_tables).  After
# each step every table must match the master, and the new memory and
# its struct pages must be reachable from a CPU of every node.
#
# The guest asks the host for each resize (lib.sh, vmem_request).
#
# The host places the device far above the RAM (the harness: 8 TiB up), so
# hot-add creates a top-level entry of the linear map that did not exist
# (and of the vmemmap, if its struct pages cross into a new one) and
# hot-remove clears them again (free_empty_tables()): every copy must
# follow the master.
DIR=$(dirname "$0")
. "$DIR/lib.sh"

mod=pcpt_test_mod
ko="$DIR/test_modules/$mod.ko"

mem_total()
{
	awk '/^MemTotal:/ { print $2 }' /proc/meminfo
}

debugfs_mount
vmem_init || skip "$vmem_why"
[ -f "$ko" ] || { fail "$ko not built"; finish; }
grep -q "^$mod " /proc/modules && rmmod $mod
cycles=$(cmdline_opt memhp_cycles 2)

total0=$(mem_total)
n0=$(pcpt_master_entries)
kept=$(vmem_kept_entries)
old_policy=$(cat $MEM/auto_online_blocks)
# Movable: nothing unmovable lands there, so unplug can always offline it.
echo online_movable > $MEM/auto_online_blocks

for cycle in $(seq "$cycles"); do
	if ! vmem_request "$vmem_want" vmem_online; then
		fail "hot-add of $vmem_want bytes did not come online within $vmem_wait s"
		break
	fi
	added=$(vmem_added)
	pass "hot-added blocks $added($((vmem_want >> 20)) MiB, cycle $cycle)"
	if pcpt_active; then
		n1=$(pcpt_master_entries)
		[ "$n1" -gt "$n0" ] && pass "hot-add created top-level entries ($n0 -> $n1)" ||
			fail "master entries $n0 -> $n1 after hot-add: no new top-level entry" \
				"(device not placed high?)"
		pcpt_check "hot-add (cycle $cycle)"
	fi
	for b in $added; do
		if vmem_touch "$b"; then
			pass "block $b touched from every node"
		else
			fail "touching block $b from every node:" \
				"$(dmesg | grep "$mod" | tail -2 | tr '\n' ';')"
		fi
	done
	if ! vmem_request 0 vmem_gone; then
		fail "hot-remove did not complete within $vmem_wait s"
		break
	fi
	pass "hot-removed blocks $added(cycle $cycle)"
	[ "$(mem_total)" = "$total0" ] ||
		fail "MemTotal $(mem_total) kB after hot-remove, $total0 kB before"
	if pcpt_active; then
		n2=$(pcpt_master_entries)
		[ "$n2" -eq $((n0 + kept)) ] &&
			pass "hot-remove cleared them" \
				"($n1 -> $n2, $kept KASAN shadow entry kept)" ||
			fail "master entries $n1 -> $n2 after hot-remove, $n0 before hot-add" \
				"(+$kept for KASAN's shadow)"
		pcpt_check "hot-remove (cycle $cycle)"
	fi
done
echo "$old_policy" > $MEM/auto_online_blocks
finish
