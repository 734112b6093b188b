#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# CPUs that come online only after boot (maxcpus= on the command line;
# the test harness boots one so, with a node that has CPUs and no memory):
# the copies were made at boot for every possible CPU's node, so once
# online each of these CPUs must translate through its own table, and
# map kernel text and rodata to its node's copy (or, for a node without
# one, to the copy the status names): checked from each CPU's own page
# table dump with the memory blocks' nodes (ktext_locality.sh), and by
# reading every page through each CPU's translation (ktext_observe_mod):
# of the image, and of a module loaded (its copies made) while those
# nodes had no CPU online.  Each late CPU must also be on the node the
# topology puts it on.  The tests after this one run with every CPU
# online.
DIR=$(dirname "$0")
. "$DIR/lib.sh"

debugfs_mount
maxcpus=
for w in $(cat /proc/cmdline); do
	case "$w" in
	maxcpus=*) maxcpus=${w#*=} ;;
	esac
done
[ -n "$maxcpus" ] || skip "every CPU came up at boot (no maxcpus=)"
tr_present || { skip "text replication not built in"; }

late=
for f in /sys/devices/system/cpu/cpu[0-9]*/online; do
	[ "$(cat "$f")" = 0 ] || continue
	c=${f%/online}
	late="$late ${c##*cpu}"
done
[ -n "$late" ] || { fail "maxcpus=$maxcpus, but every CPU is online"; finish; }
echo "# online at boot: $(cat /sys/devices/system/cpu/online); late:$late"
# A node none of whose CPUs ran at boot: its copy (or the one it uses)
# was made for it without a CPU of it online.
idle_nodes=
for n in $(online_nodes); do
	[ -z "$(cat /sys/devices/system/node/node$n/cpulist)" ] &&
		idle_nodes="$idle_nodes $n"
done
echo "# nodes without an online CPU at boot:${idle_nodes:- none}"
# Copies of this module's text are made now, for nodes without a CPU.
observe_load
early=$(mod_text ktext_observe_mod)

for c in $late; do
	echo 1 > /sys/devices/system/cpu/cpu$c/online 2>/dev/null
	[ "$(cat /sys/devices/system/cpu/cpu$c/online)" = 1 ] ||
		fail "cpu$c did not come online"
done
echo "# online now: $(cat /sys/devices/system/cpu/online)"
[ -n "$idle_nodes" ] ||
	fail "every node had an online CPU at boot: nothing came up late on a node of its own"
cpn=$(cmdline_opt cpus_per_node 0)
for n in $(online_nodes); do
	got=$(cat /sys/devices/system/node/node$n/cpulist)
	want="$((n * cpn))-$((n * cpn + cpn - 1))"
	[ "$cpn" -eq 1 ] && want=$((n * cpn))
	[ "$cpn" -eq 0 ] || [ "$got" = "$want" ] ||
		fail "node $n has CPUs '$got' online, the topology puts $want there"
done

if [ -r "$PCPT_DEBUGFS/status" ]; then
	pcpt_loaded_ok "the late CPUs came online"
	pcpt_active && pcpt_check "the late CPUs came online"
fi
echo "# $(grep -E '^(active|node [0-9]+):' "$TR_DEBUGFS/status" | tr '\n' ';')"
tr_why_inactive >/dev/null || tr_active ||
	fail "replication should be active: $(sed -n 's/^reason: //p' "$TR_DEBUGFS/status")"

# Through each CPU's translation, before ktext_locality.sh, whose end
# unloads the observer.
[ "$(mod_text ktext_observe_mod)" = "$early" ] ||
	fail "ktext_observe_mod was reloaded:" \
		"its text is at $(mod_text ktext_observe_mod), not $early"
tr_view "the late CPUs online" image
tr_view "a module loaded before the late CPUs came online, its text" "$early" 1

# Each CPU's own table, every piece of text and rodata on the right node.
if have_ptdump; then
	out=$(sh "$DIR/ktext_locality.sh" 2>&1)
	rc=$?
	echo "$out" | grep -E '^not ok |^ok .* # SKIP|^1\.\.0 # SKIP' | sed 's/^/# /' | head -10
	n=$(echo "$out" | grep -cE '^ok [0-9]+ cpu')
	# One check of the image per CPU, and of a module's text where
	# modules are replicated.
	want=$(ktext_cpus | wc -w)
	tr_modules && want=$((want * 2))
	if [ $rc -eq 0 ] && [ "$n" -eq "$want" ]; then
		pass "ktext_locality.sh with the late CPUs online: $n checks"
	else
		fail "ktext_locality.sh with the late CPUs online: status $rc, $n of $want checks"
	fi
else
	echo "# $NO_PTDUMP"
fi
finish
