#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# On the first CPU of every node: writes to kernel text, to rodata, to
# rodata's linear alias and to the linear alias of the node's copy all
# fault (test module, copy_to_kernel_nofault()); so do writes to the test
# module's own text and rodata and to the linear alias of the memory the
# CPU translates the module's text to (AT S1E1R), which must lie on the
# CPU's node when modules are replicated.  In every CPU's own page table,
# text is read-only and executable and rodata read-only and not
# executable.
DIR=$(dirname "$0")
. "$DIR/lib.sh"

debugfs_mount
tr_present || { skip "text replication not built in"; }
mod=ktext_test_mod
ko="$DIR/test_modules/$mod.ko"
[ -f "$ko" ] || { fail "$ko not built"; finish; }
grep -q "^$mod " /proc/modules && rmmod $mod
st="$TR_DEBUGFS/status"
ts=$(ksym _stext)
text=$(ksym vfs_read)
rodata=$(ksym linux_banner)
[ -n "$text" ] && [ -n "$rodata" ] || { fail "vfs_read or linux_banner not in kallsyms"; finish; }

for node in $(online_nodes); do
	cpu=$(cpulist_expand "$(cat /sys/devices/system/node/node$node/cpulist)" | cut -d' ' -f1)
	[ -n "$cpu" ] || continue
	copy_pa=0 want=6
	use=$(sed -n "s/^node $node: uses node \([0-9]*\)$/\1/p" "$st")
	base=$(sed -n "s/^node ${use:-$node}: \(0x[0-9a-f]*\)-0x[0-9a-f]* copy$/\1/p" "$st")
	if tr_active && [ -n "$base" ]; then
		copy_pa=$((base + (rodata - ts)))
		want=7
	fi
	if ! taskset -c "$cpu" insmod "$ko" text="$text" rodata="$rodata" copy_pa="$copy_pa"; then
		fail "cpu$cpu (node $node): a write went through:" \
			"$(dmesg | grep "$mod" | tail -2 | tr '\n' ';')"
		continue
	fi
	got=$(cat /sys/module/$mod/parameters/faulted)
	[ "$got" = "$want" ] && pass "cpu$cpu (node $node): all $want writes faulted" ||
		fail "cpu$cpu (node $node): $got of $want writes faulted"
	if tr_modules; then
		self=$(cat /sys/module/$mod/parameters/self_pa)
		got=$(pa_node "$self")
		expect=$(tr_expected_node "$cpu")
		[ "$got" = "$expect" ] &&
			pass "cpu$cpu (node $node): translates the module's text" \
				"to node $got ($(printf '%#x' "$self"))" ||
			fail "cpu$cpu (node $node): translates the module's text" \
				"to $(printf '%#x' "$self") on node $got, expected $expect"
	fi
	rmmod $mod
done

te=$(ksym _etext)
rs=$(ksym __start_rodata); re=$(ksym __end_rodata)
have_ptdump || echo "# permissions not read from the tables: $NO_PTDUMP"
for cpu in $(have_ptdump && ktext_cpus); do
	f="$PCPT_DEBUGFS/pa/cpu$cpu"
	bad=$(awk -v ts="$ts" -v te="$te" -v rs="$rs" -v re="$re" '
	/^0x/ && / pa=0x/ {
		s = substr($1, 1, 18); e = substr($1, 20, 18)
		ro = 0; x = 0; nx = 0
		for (i = 2; i <= NF; i++) {
			if ($i == "ro") ro = 1
			if ($i == "x") x = 1
			if ($i == "NX") nx = 1
		}
		if (s < te && e > ts) { nt++; if (!(ro && x)) print "text " $0 }
		if (s < re && e > rs) { nr++; if (!(ro && nx)) print "rodata " $0 }
	}
	# A dump that maps neither must not pass for a clean one.
	END { if (!nt || !nr) print "text or rodata not mapped in the dump" }' "$f")
	[ -z "$bad" ] && pass "cpu$cpu: text ro+x, rodata ro+NX" ||
		fail "cpu$cpu: $(echo "$bad" | head -2 | tr '\n' ';')"
done
finish
