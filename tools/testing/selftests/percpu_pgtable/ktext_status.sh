#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Text replication is active exactly when it should be (several nodes,
# not switched off), every node with CPUs has a copy or names the node
# whose copy it uses (the one the command line made fail, and one
# without memory, use another's), each copy lies in its node's memory,
# and the boot log has one line per copy.  A node whose CPUs are all
# offline (maxcpus=) still has CPUs: the harness gives every node some.
DIR=$(dirname "$0")
. "$DIR/lib.sh"

debugfs_mount
tr_present || { skip "text replication not built in"; }
st="$TR_DEBUGFS/status"

# The virtual space kept from vmalloc around the image ("holes", see the
# rst) is reserved only when a node gets a copy: with one node,
# kernel_replication=off or percpu_pgtable=off vmalloc may use it, block
# mappings included.
holes=$(grep -c 'kernel_replication_reserve_va' /proc/vmallocinfo)
if why=$(tr_why_inactive); then
	if tr_active; then
		fail "active although $why"
	else
		pass "inactive with $why ($(sed -n 's/^reason: //p' "$st"))"
	fi
	[ "$holes" -eq 0 ] && pass "no virtual space reserved ($why)" ||
		fail "$holes areas of /proc/vmallocinfo reserved for replication, with $why"
	finish
fi
tr_active || { fail "inactive: $(sed -n 's/^reason: //p' "$st")"; finish; }
pass "active"
[ "$holes" -gt 0 ] && pass "$holes areas of /proc/vmallocinfo reserved around the image" ||
	fail "active, but no area of /proc/vmallocinfo reserved around the image"

failnodes=" $(tr_testfail_nodes) "
memless=$(cmdline_opt memless "")
nodes=$(cmdline_opt nodes 0)
copies=0
for node in $(online_nodes); do
	[ -n "$(cat /sys/devices/system/node/node$node/cpulist)" ] || [ "$node" -lt "$nodes" ] ||
		continue
	line=$(grep "^node $node: " "$st")
	case "$line" in
	*" copy")
		copies=$((copies + 1))
		case "$failnodes" in
		*" $node "*) fail "node $node has a copy" \
			"although its allocation was made to fail" ;;
		esac
		pa=$(echo "$line" |
			sed 's/^node [0-9]*: \(0x[0-9a-f]*\)-\(0x[0-9a-f]*\) copy$/\1 \2/')
		set -- $pa
		first=$(pa_node "$1")
		last=$(pa_node "$(($2 - 1))")
		if [ "$first" = "$node" ] && [ "$last" = "$node" ]; then
			pass "node $node: copy $1-$2 in its own memory"
		else
			fail "node $node: copy $1-$2 lies on nodes $first..$last"
		fi
		;;
	*" master")
		pass "node $node holds the image: $line"
		;;
	*"uses node "*)
		used=${line##* }
		grep -Eq "^node $used: .* (copy|master)$" "$st" ||
			fail "node $node uses node $used, which has no copy: $(grep \
				"^node $used: " "$st")"
		case "$failnodes" in
		*" $node "*) pass "node $node (allocation made to fail): ${line#*: }" ;;
		*)
			if [ "$node" = "$memless" ]; then
				boot_line="kernel_replication: node $node has no copy:"
				boot_line="$boot_line its CPUs use node $used's"
				dmesg | grep -q "$boot_line" &&
					pass "node $node (no memory):" \
						"uses node $used, said at boot" ||
					fail "node $node (no memory):" \
						"uses node $used, not said at boot"
				# The nearest node with a copy (or the image), by
				# the distances sysfs shows, one per online node in
				# order; the harness makes one node nearer than the rest,
				# so that it is not a tie the master wins.
				best= d_used=
				set -- $(cat /sys/devices/system/node/node$node/distance)
				for n in $(online_nodes); do
					d=$1
					shift
					[ "$n" = "$used" ] && d_used=$d
					grep -Eq "^node $n: .* (copy|master)$" "$st" || continue
					[ -z "$best" ] || [ "$d" -lt "$best" ] && best=$d
				done
				if [ "$d_used" = "$best" ] && [ "$best" -lt 20 ]; then
					pass "node $node (no memory): node $used" \
						"is the nearest with a copy (distance $d_used)"
				else
					fail "node $node (no memory): uses node $used" \
						"at distance $d_used, the nearest copy" \
						"is at $best (the harness gives one at 15)"
				fi
			else
				fail "node $node has no copy: $line"
			fi
			;;
		esac
		;;
	*)
		fail "node $node missing from the status: '$line'"
		;;
	esac
done
lines=$(dmesg | grep 'own copy of text and rodata at' | wc -l)
if [ "$lines" -eq "$copies" ] && [ "$copies" -gt 0 ]; then
	pass "$copies copies, one boot line each"
else
	fail "$copies copies in the status, $lines boot lines:" \
		"$(dmesg | grep kernel_replication | head -6 | tr '\n' ';')"
fi
for node in $(tr_testfail_nodes); do
	dmesg | grep -q "kernel_replication: node $node: cannot allocate" &&
		pass "node $node: allocation failure warned about" ||
		fail "node $node: no warning about its failed allocation"
done
finish
