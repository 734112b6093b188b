#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Text replication is active exactly when it should be (several nodes,
# not switched off), every node with CPUs has a copy or names the node
# whose copy it uses (the one the command line made fail uses another),
# each copy lies in its node's memory, and the boot log has one line per
# copy.
DIR=$(dirname "$0")
. "$DIR/lib.sh"

debugfs_mount
tr_present || { skip "text replication not built in"; }
st="$TR_DEBUGFS/status"

if why=$(tr_why_inactive); then
	if tr_active; then
		fail "active although $why"
	else
		pass "inactive with $why ($(sed -n 's/^reason: //p' "$st"))"
	fi
	finish
fi
tr_active || { fail "inactive: $(sed -n 's/^reason: //p' "$st")"; finish; }
pass "active"

failnodes=" $(tr_testfail_nodes) "
copies=0
for node in $(online_nodes); do
	[ -n "$(cat /sys/devices/system/node/node$node/cpulist)" ] || continue
	line=$(grep "^node $node: " "$st")
	case "$line" in
	*" copy")
		copies=$((copies + 1))
		case "$failnodes" in
		*" $node "*) fail "node $node has a copy although its allocation was made to fail" ;;
		esac
		pa=$(echo "$line" | sed 's/^node [0-9]*: \(0x[0-9a-f]*\)-\(0x[0-9a-f]*\) copy$/\1 \2/')
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
		case "$failnodes" in
		*" $node "*) pass "node $node (allocation made to fail): ${line#*: }" ;;
		*) fail "node $node has no copy: $line" ;;
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
	fail "$copies copies in the status, $lines boot lines: $(dmesg | grep text_replica | head -6 | tr '\n' ';')"
fi
for node in $(tr_testfail_nodes); do
	dmesg | grep -q "text_replica: node $node: cannot allocate" &&
		pass "node $node: allocation failure warned about" ||
		fail "node $node: no warning about its failed allocation"
done
finish
