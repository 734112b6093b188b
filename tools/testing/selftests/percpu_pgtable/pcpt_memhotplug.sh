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
# The guest cannot resize its own virtio-mem device: it asks the host by
# printing "PCPT-QMP: qom-set vm0 requested-size BYTES" on the console,
# which scripts/pcpt/qmp-watch.py turns into a QMP qom-set.  The request
# is repeated until the memory shows up, so a line mangled by
# interleaved kernel messages only costs time.
#
# The host places the device far above the RAM (boot.sh: 8 TiB up), so
# hot-add creates a top-level entry of the linear map that did not exist
# (and of the vmemmap, if its struct pages cross into a new one) and
# hot-remove clears them again (free_empty_tables()): every copy must
# follow the master.
DIR=$(dirname "$0")
. "$DIR/lib.sh"

MEM=/sys/devices/system/memory
mod=pcpt_test_mod
ko="$DIR/test_modules/$mod.ko"

debugfs_mount
ls -d /sys/bus/virtio/drivers/virtio_mem/virtio* >/dev/null 2>&1 ||
	skip "no virtio-mem device (scripts/pcpt/boot.sh adds one unless VMEM_MB=0)"
[ -f "$ko" ] || { fail "$ko not built"; finish; }
grep -q "^$mod " /proc/modules && rmmod $mod
cycles=$(cmdline_opt memhp_cycles 2)
wait_s=$(cmdline_opt memhp_wait 180)
bs=$(($(printf '%d' "0x$(cat $MEM/block_size_bytes)")))
vmem=$(($(cmdline_opt vmem_mb 0) * 1024 * 1024))
[ "$vmem" -ge "$bs" ] ||
	skip "virtio-mem device of $vmem bytes holds no whole memory block of $bs bytes"
# Two blocks when the device has room, so hot-add crosses a block boundary.
want=$bs
[ "$vmem" -ge $((2 * bs)) ] && want=$((2 * bs))

blocks()
{
	ls -d $MEM/memory[0-9]* | sed 's/.*memory//' | sort -n
}

mem_total()
{
	awk '/^MemTotal:/ { print $2 }' /proc/meminfo
}

# request BYTES COND: ask the host for BYTES until COND succeeds.
request()
{
	t=0
	while [ "$t" -lt "$wait_s" ]; do
		[ $((t % 10)) -eq 0 ] &&
			echo "PCPT-QMP: qom-set vm0 requested-size $1" > /dev/console
		eval "$2" && return 0
		sleep 1
		t=$((t + 1))
	done
	return 1
}

master_entries()
{
	sed -n 's/^master entries: //p' "$PCPT_DEBUGFS/status"
}

before=$(blocks)
total0=$(mem_total)
n0=$(master_entries)
# Generic KASAN maps the shadow of hot-added memory with vmalloc
# (kasan_mem_notifier()) and vfree()s it on removal; vmalloc page tables
# are never freed, so the shadow's top-level entry (one: 256 MiB of
# memory, 32 MiB of shadow) stays, in the master and every copy alike.
kept=0
grep -q ' kasan_mem_notifier$' /proc/kallsyms && kept=1
old_policy=$(cat $MEM/auto_online_blocks)
# Movable: nothing unmovable lands there, so unplug can always offline it.
echo online_movable > $MEM/auto_online_blocks

new_online()
{
	n=0
	for b in $(blocks); do
		echo "$before" | grep -qx "$b" && continue
		[ "$(cat $MEM/memory$b/state)" = online ] && n=$((n + 1))
	done
	[ $((n * bs)) -eq "$want" ]
}

gone()
{
	[ "$(blocks)" = "$before" ]
}

for cycle in $(seq "$cycles"); do
	if ! request "$want" new_online; then
		fail "hot-add of $want bytes did not come online within $wait_s s"
		break
	fi
	added=$(blocks | grep -vxF "$before" | tr '\n' ' ')
	pass "hot-added blocks $added($((want >> 20)) MiB, cycle $cycle)"
	if pcpt_active; then
		n1=$(master_entries)
		[ "$n1" -gt "$n0" ] && pass "hot-add created top-level entries ($n0 -> $n1)" ||
			fail "master entries $n0 -> $n1 after hot-add: no new top-level entry (device not placed high?)"
		pcpt_check "hot-add (cycle $cycle)"
	fi
	for b in $added; do
		phys=$((b * bs))
		if insmod "$ko" touch_phys="$phys" touch_size="$bs"; then
			pass "block $b touched from every node"
			rmmod $mod
		else
			fail "touching block $b from every node: $(dmesg | grep "$mod" | tail -2 | tr '\n' ';')"
		fi
	done
	if ! request 0 gone; then
		fail "hot-remove did not complete within $wait_s s"
		break
	fi
	pass "hot-removed blocks $added(cycle $cycle)"
	[ "$(mem_total)" = "$total0" ] ||
		fail "MemTotal $(mem_total) kB after hot-remove, $total0 kB before"
	if pcpt_active; then
		n2=$(master_entries)
		[ "$n2" -eq $((n0 + kept)) ] &&
			pass "hot-remove cleared them ($n1 -> $n2, $kept KASAN shadow entry kept)" ||
			fail "master entries $n1 -> $n2 after hot-remove, $n0 before hot-add (+$kept for KASAN's shadow)"
		pcpt_check "hot-remove (cycle $cycle)"
	fi
done
echo "$old_policy" > $MEM/auto_online_blocks
finish
