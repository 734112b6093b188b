#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Bad input (a boot of its own, pcpt.bad_input=1, whose
# command line gives every boot option of the project a valid value other
# than the default, then empty, garbage and out-of-range values): each bad
# value is warned about with what the option accepts, the valid ones are
# not, and the boot goes on with the defaults, as the kernel shows them,
# not as the warnings say: a table for every possible CPU, a text copy for
# every node, the whole module window usable.  Writes of garbage to every
# debugfs file of the project fail and change nothing.
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
		echo "percpu_pgtable_testfail=$v is not a CPU list (e.g. 1,3-4); using none" ;;
	kernel_replication=*)
		echo "kernel_replication=$v: unknown value, expected 'on' or 'off';" \
			"using the default (on)" ;;
	kernel_replication_modules=*)
		echo "kernel_replication_modules=$v: expected 0 or a size from " ;;
	kernel_replication_testfail=*)
		echo "kernel_replication_testfail=$v: expected a node list" \
			"such as 1 or 1-2; using none" ;;
	esac
}

# The valid values the Makefile's BAD_INPUT gives first, which the bad
# ones after them must replace with the default.
VALID="percpu_pgtable=off percpu_pgtable_testfail=2 kernel_replication=off
kernel_replication_testfail=1 kernel_replication_modules=556K"

log=$(dmesg)
bad=0 valid=0 opts=
for w in $(cat /proc/cmdline); do
	want=$(expected_warning "$w")
	[ -n "$want" ] || continue
	case " $(echo $VALID) " in
	*" $w "*)
		valid=$((valid + 1))
		echo "$log" | grep -qF -- "$want" && fail "valid '$w' warned about"
		continue
		;;
	esac
	bad=$((bad + 1))
	opts="$opts ${w%%=*}"
	if echo "$log" | grep -qF -- "$want"; then
		pass "'$w' warned about: $want"
	else
		fail "'$w': no warning '$want'"
	fi
done
nopts=$(echo "$opts" | tr ' ' '\n' | sort -u | grep -c .)
[ "$nopts" -eq 5 ] && [ "$valid" -eq 5 ] &&
	pass "$bad bad values for all 5 options, each after a valid one" ||
	fail "$bad bad values for $nopts options, $valid valid ones: not the bad-input boot"

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
set -- $(echo "$mw" |
	sed 's/^modules: \(0x[0-9a-f]*\)-\(0x[0-9a-f]*\),.* \([0-9]*\) KiB usable.*/\1 \2 \3/')
if [ $# -eq 3 ] && [ $((($2 - $1) / 1024)) -eq "$3" ]; then
	pass "the whole module window is usable ($3 KiB)"
else
	fail "module window not at its default size: '$mw'"
fi

# Garbage written to each debugfs file of the project: refused, and the
# state read back is the same.  The one that parses what it is given,
# test_vmalloc (with the KUnit tests), also gets addresses that are not
# an empty top-level slot of vmalloc space: 0, unaligned, the top slot
# (whose end wraps), the free slot plus a page.
free=$(sed -n 's/^vmalloc free slot: //p' "$PCPT_DEBUGFS/status")
before=$(cat "$PCPT_DEBUGFS/status" "$TR_DEBUGFS/status")
n=0
for f in $(find "$PCPT_DEBUGFS" "$TR_DEBUGFS" -type f); do
	n=$((n + 1))
	junks='"" garbage -1 18446744073709551616 "on off"'
	case "$f" in
	*/test_vmalloc)
		junks="$junks 0 1 0xffffff8000000000 0xfffffffffffff000"
		# The slot is aligned far beyond 64K: its last hex digits are 0.
		[ -n "$free" ] && [ "$free" != 0 ] && junks="$junks ${free%????}1000"
		;;
	esac
	eval "set -- $junks"
	for junk in "$@"; do
		if echo "$junk" 2>/dev/null > "$f"; then
			fail "$f accepted a write of '$junk'"
		fi
	done
done
# status, check, pa/ and tables/ per possible CPU, test_vmalloc with the
# KUnit tests; status and verify
want_n=$((2 * nr_possible + 4))
[ -e "$PCPT_DEBUGFS/test_vmalloc" ] && want_n=$((want_n + 1))
[ "$n" -eq "$want_n" ] && pass "$n debugfs files refuse writes" ||
	fail "$n debugfs files, $want_n expected"
after=$(cat "$PCPT_DEBUGFS/status" "$TR_DEBUGFS/status")
[ "$before" = "$after" ] && pass "status unchanged by the writes" ||
	fail "status changed by writes of garbage"
pcpt_check "writes of garbage to debugfs"
finish
