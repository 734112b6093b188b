#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Bad input (the bad-input boot of make check, pcpt.bad_input=1, whose
# command line gives every boot option of the project empty, garbage and
# out-of-range values): each value is warned about with what the option
# accepts, and the boot goes on with the defaults, as the kernel shows
# them, not as the warnings say: a table for every possible CPU, a text
# copy for every node, the whole module window usable.  Writes of garbage
# to every debugfs file of the project fail and change nothing.
DIR=$(dirname "$0")
. "$DIR/lib.sh"

[ "$(cmdline_opt bad_input 0)" = 1 ] ||
	skip "not the bad-input boot (pcpt.bad_input=1 with bad values)"
debugfs_mount

# The warning each bad value must get, with the value in it: the exact
# text, so that a warning for one value cannot pass for another's.
expected_warning()
{
	v=${1#*=}
	case "$1" in
	percpu_pgtable=*)
		echo "unknown percpu_pgtable=$v (accepted: on, off); using on" ;;
	percpu_pgtable_testfail=*)
		echo "percpu_pgtable_testfail=$v is not a CPU list (e.g. 1,3-4); ignored" ;;
	kernel_replication=*)
		echo "kernel_replication=$v: unknown value, expected 'on' or 'off'; using the default (on)" ;;
	kernel_replication_modules=*)
		echo "kernel_replication_modules=$v: expected 0 or a size from " ;;
	kernel_replication_testfail=*)
		echo "kernel_replication_testfail=$v: expected a node list such as 1 or 1-2; ignored" ;;
	esac
}

log=$(dmesg)
bad=0
for w in $(cat /proc/cmdline); do
	want=$(expected_warning "$w")
	[ -n "$want" ] || continue
	bad=$((bad + 1))
	if echo "$log" | grep -qF -- "$want"; then
		pass "'$w' warned about: $want"
	else
		fail "'$w': no warning '$want'"
	fi
done
[ "$bad" -ge 5 ] && pass "$bad bad values on the command line" ||
	fail "only $bad bad values on the command line: not the bad-input boot"

# The defaults, as the kernel reports its state.
possible=$(cpulist_expand "$(cat /sys/devices/system/cpu/possible)")
nr_possible=$(echo "$possible" | wc -w)
st=$(cat "$PCPT_DEBUGFS/status")
echo "$st" | grep -qx 'active: yes' && pass "per-CPU tables active" ||
	fail "per-CPU tables not active: $(echo "$st" | head -2 | tr '\n' ';')"
echo "$st" | grep -qx "tables: $nr_possible" && pass "$nr_possible tables, one per possible CPU" ||
	fail "not one table per possible CPU: $(echo "$st" | grep '^tables:')"
echo "$st" | grep -qx 'failed: ' && pass "no CPU runs on the master" ||
	fail "CPUs on the master: $(echo "$st" | grep '^failed:')"
pcpt_loaded_ok "a boot with bad options"

tr_present || finish
tr_active && pass "text replication active" ||
	fail "text replication inactive: $(sed -n 's/^reason: //p' "$TR_DEBUGFS/status")"
for node in $(online_nodes); do
	grep -Eq "^node $node: 0x[0-9a-f]*-0x[0-9a-f]* (copy|master)$" "$TR_DEBUGFS/status" &&
		pass "node $node has its copy" ||
		fail "node $node: $(grep "^node $node: " "$TR_DEBUGFS/status")"
done
# modules: LO-HI, N pages, N node copies, N failed, N KiB usable, N KiB free
mw=$(grep '^modules: 0x' "$TR_DEBUGFS/status")
set -- $(echo "$mw" | sed 's/^modules: \(0x[0-9a-f]*\)-\(0x[0-9a-f]*\),.* \([0-9]*\) KiB usable.*/\1 \2 \3/')
if [ $# -eq 3 ] && [ $((($2 - $1) / 1024)) -eq "$3" ]; then
	pass "the whole module window is usable ($3 KiB)"
else
	fail "module window not at its default size: '$mw'"
fi

# Garbage written to each debugfs file of the project: refused, and the
# state read back is the same.
before=$(cat "$PCPT_DEBUGFS/status" "$TR_DEBUGFS/status")
n=0
for f in $(find "$PCPT_DEBUGFS" "$TR_DEBUGFS" -type f); do
	n=$((n + 1))
	for junk in "" "garbage" "-1" "18446744073709551616" "on off"; do
		if echo "$junk" 2>/dev/null > "$f"; then
			fail "$f accepted a write of '$junk'"
		fi
	done
done
[ "$n" -gt 2 ] && pass "$n debugfs files refuse writes" || fail "only $n debugfs files"
after=$(cat "$PCPT_DEBUGFS/status" "$TR_DEBUGFS/status")
[ "$before" = "$after" ] && pass "status unchanged by the writes" ||
	fail "status changed by writes of garbage"
pcpt_check "writes of garbage to debugfs"
finish
