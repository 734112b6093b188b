#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# For every online CPU, the physical memory its own page table maps the
# kernel text and rodata to (read from its ptdump with output addresses,
# located with the sysfs memory blocks, not taken from the feature's
# status) lies on the node whose copy that CPU should use: its own, or
# the one the status names for a node whose copy was made to fail.  All
# of text and rodata must be covered.  With replication off, every CPU
# must map them to the same (the master's) memory.  When modules are
# replicated, the same holds for the text of a loaded module (ktext_big0,
# 256 KiB).
DIR=$(dirname "$0")
. "$DIR/lib.sh"

debugfs_mount
tr_present || { skip "text replication not built in"; }
have_ptdump || skip "$NO_PTDUMP"
[ -d "$PCPT_DEBUGFS/pa" ] || { fail "no $PCPT_DEBUGFS/pa (CONFIG_PTDUMP_DEBUGFS?)"; finish; }
st="$TR_DEBUGFS/status"
ts=$(ksym _stext); te=$(ksym _etext)
rs=$(ksym __start_rodata); re=$(ksym __end_rodata)
want_bytes=$(( (te - ts) + (re - rs) ))
active=0
tr_active && active=1
tr_why_inactive >/dev/null || [ $active -eq 1 ] ||
	fail "replication should be active: $(sed -n 's/^reason: //p' "$st")"

# ranges CPU [TS TE RS RE]: "START END VA PA" for every mapped piece of
# text and rodata (or of [TS, TE) and [RS, RE)) in CPU's table, as read
# into $dump (once per CPU: under KASAN and DEBUG_PAGEALLOC one read of
# a whole dump takes over a minute)
ranges()
{
	awk -v ts="${2:-$ts}" -v te="${3:-$te}" -v rs="${4:-$rs}" -v re="${5:-$re}" '
	/^0x/ && / pa=0x/ {
		s = substr($1, 1, 18); e = substr($1, 20, 18)
		pa = ""
		for (i = 2; i <= NF; i++)
			if ($i ~ /^pa=/) pa = substr($i, 4)
		if (s < te && e > ts) print (s < ts ? ts : s), (e > te ? te : e), s, pa
		if (s < re && e > rs) print (s < rs ? rs : s), (e > re ? re : e), s, pa
	}' "$dump"
}

# check CPU EXPECT [TS TE RS RE]: read CPU's pieces of text and rodata (or
# of the given ranges); set bytes, bad (pieces not on node EXPECT) and pas
# (their physical starts).
check()
{
	c=$1 want=$2
	shift 2
	bytes=0 bad=0 pas=
	ranges "$c" "$@" > /tmp/ktext_ranges.$$
	while read -r s e vs pa; do
		lo=$((pa + (s - vs)))
		hi=$((pa + (e - vs) - 1))
		pas="$pas $lo"
		bytes=$((bytes + (e - s)))
		[ $active -eq 1 ] || continue
		n1=$(pa_node "$lo"); n2=$(pa_node "$hi")
		if [ "$n1" != "$want" ] || [ "$n2" != "$want" ]; then
			bad=$((bad + 1))
			[ $bad -le 3 ] && echo "# cpu$c: $s-$e -> $(printf '%#x' "$lo")" \
				"on node $n1..$n2, expected $want"
		fi
	done < /tmp/ktext_ranges.$$
	rm -f /tmp/ktext_ranges.$$
}

# A module's text: 256 KiB from the start of ktext_big0's .text (not
# crossing a 4 GiB boundary, so the shell's 64-bit arithmetic only ever
# adds to the low half).
m=ktext_big0
mods=0 own=0
if tr_modules; then
	# A failed load is a failure, but the image is still checked.
	mods=1
	if ! grep -q "^$m " /proc/modules; then
		insmod "$DIR/test_modules/$m.ko" && own=1 ||
			{ fail "insmod $m: module text not checked"; mods=2; }
	fi
fi
if [ $mods -eq 1 ]; then
	mt=$(cat /sys/module/$m/sections/.text)
	mt=0x$(printf '%s' "${mt#0x}" | awk '{ printf "%016s", $0 }' | tr ' ' 0)
	low=$((0x$(echo "$mt" | cut -c11-18)))
	size=262144
	[ $((low + size)) -le 4294967295 ] || size=$((4294967296 - low))
	me=$(echo "$mt" | cut -c1-10)$(printf '%08x' $((low + size)))
fi

dump=/tmp/ktext_dump.$$
first_pa=
for cpu in $(ktext_cpus); do
	node=$(node_of_cpu "$cpu")
	cat "$PCPT_DEBUGFS/pa/cpu$cpu" > $dump
	# A CPU without a table of its own (percpu_pgtable_testfail=) runs
	# on the master, which maps the image's own memory.
	expect=$(tr_expected_node "$cpu")
	check "$cpu" "$expect"
	if [ "$bytes" -ne "$want_bytes" ]; then
		fail "cpu$cpu: its table maps $bytes of the $want_bytes bytes of text and rodata"
	elif [ $active -eq 0 ]; then
		[ -z "$first_pa" ] && first_pa=$pas
		[ "$pas" = "$first_pa" ] &&
			pass "cpu$cpu (node $node): inactive, same memory as every other CPU" ||
			fail "cpu$cpu: inactive but maps text to other memory than cpu0"
	elif [ $bad -eq 0 ]; then
		pass "cpu$cpu (node $node): all $bytes bytes of text and rodata on node $expect"
	else
		fail "cpu$cpu (node $node): $bad ranges not on node $expect"
	fi
	[ $mods -eq 1 ] || continue
	check "$cpu" "$expect" "$mt" "$me" 0 0
	if [ "$bytes" -ne "$size" ]; then
		fail "cpu$cpu: its table maps $bytes of the $size bytes of $m's text at $mt"
	elif [ $bad -eq 0 ]; then
		pass "cpu$cpu: $size bytes of $m's text on node $expect"
	else
		fail "cpu$cpu: $bad ranges of $m's text not on node $expect"
	fi
done
rm -f $dump
if [ $mods -eq 0 ]; then
	[ $active -eq 1 ] &&
		fail "active, but modules are not replicated: $(grep '^modules:' "$st")"
	echo "# $(grep '^modules:' "$st")"
elif [ $own -eq 1 ]; then
	# Only what this test loaded: a module loaded before stays.
	rmmod $m
fi
finish
