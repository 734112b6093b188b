#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# LKDTM's permission tests from the first CPU of every node: WRITE_RO
# (module rodata), WRITE_RO_AFTER_INIT (module ro_after_init data, which
# is not replicated), WRITE_KERN (module text) and EXEC_RODATA (module
# rodata).  lkdtm is a module, so the text and rodata these hit are
# replicated module memory: each CPU faults on its own node's copy.
# Each test must end in an Oops on that CPU, at the address LKDTM names,
# with the fault the test asks for (write to read-only memory, execute
# from non-executable memory), and never in LKDTM's "FAIL".  Afterwards
# every CPU reads lkdtm's text and rodata as the master's bytes, from its
# node's memory.
#
# lkdtm stays loaded: each Oops kills its writer inside the debugfs
# write, which keeps a reference on the file that rmmod would wait for
# forever.
#
# The boot runs with oops=panic: panic_on_oops is cleared around each
# test, and a console judge (the harness's) accepts one Oops
# and nothing else between the PCPT-EXPECT-OOPS markers written here.
# The console carries this runner's output and the kernel's, which can
# interleave character by character (a marker cut in two by a line of
# this test was seen): while the Oopses print, the test writes nothing
# but the markers, keeps its verdicts in a file for afterwards, and
# first lets the runner's lines drain.
# An Oops turns lockdep and tracing off for the rest of the boot
# (oops_enter()), so this test runs last.
DIR=$(dirname "$0")
. "$DIR/lib.sh"

debugfs_mount
ko=$(find /lib/modules -name 'lkdtm.ko*' 2>/dev/null | head -1)
[ -n "$ko" ] || { fail "lkdtm.ko not installed (CONFIG_LKDTM=m)"; finish; }
grep -q '^lkdtm ' /proc/modules || insmod "$ko" ||
	{ fail "insmod lkdtm: $(dmesg | tail -2 | tr '\n' ';')"; finish; }
D=/sys/kernel/debug/provoke-crash/DIRECT
[ -w "$D" ] || { fail "no $D"; finish; }

# lkdtm_oops CPU TEST FAULT: TEST on CPU must Oops there, with FAULT at
# the address LKDTM printed.
lkdtm_oops()
{
	tag="lkdtm $2 cpu$1"
	echo 0 > /proc/sys/kernel/panic_on_oops
	echo "PCPT-EXPECT-OOPS-BEGIN $tag" > /dev/kmsg
	taskset -c "$1" sh -c "echo $2 > $D" 2>/dev/null
	echo "PCPT-EXPECT-OOPS-END $tag" > /dev/kmsg
	echo "$panic" > /proc/sys/kernel/panic_on_oops
	log=$(dmesg | sed -n "/PCPT-EXPECT-OOPS-BEGIN $tag\$/,/PCPT-EXPECT-OOPS-END $tag\$/p")
	log=$(echo "$log" | grep -v PCPT-EXPECT)
	at=$(echo "$log" |
		sed -n 's/.*lkdtm: attempting bad .* at \(0x\)\{0,1\}\([0-9a-f]*\)$/\2/p' | tail -1)
	got=$(echo "$log" |
		sed -n "s/.*Unable to handle kernel $3 at virtual address \([0-9a-f]*\)$/\1/p")
	oops_cpu=$(echo "$log" | sed -n 's/.*CPU: \([0-9]*\) .*PID: .*/\1/p' | head -1)
	if echo "$log" | grep -q 'lkdtm: FAIL'; then
		fail "$tag: $(echo "$log" | grep 'lkdtm: FAIL' | head -1)"
	elif [ -z "$at" ]; then
		fail "$tag: LKDTM did not attempt it:" \
			"$(echo "$log" | grep lkdtm | tail -2 | tr '\n' ';')"
	elif [ "$got" != "$at" ]; then
		fail "$tag: no '$3' at $at (got '${got:-nothing}')"
	elif [ "$oops_cpu" != "$1" ]; then
		fail "$tag: the Oops was on cpu${oops_cpu:-?}"
	else
		pass "$tag (node $(node_of_cpu "$1")): $3 at $at"
	fi
}

panic=$(cat /proc/sys/kernel/panic_on_oops)
tested=0
verdicts=/tmp/ktext_lkdtm.$$
sleep 2
for node in $(online_nodes); do
	cpu=$(cpulist_expand "$(cat /sys/devices/system/node/node$node/cpulist)" |
		awk '{ print $1 }')
	[ -n "$cpu" ] || { fail "node $node has no online CPU"; continue; }
	tested=$((tested + 1))
	lkdtm_oops "$cpu" WRITE_RO 'write to read-only memory'
	lkdtm_oops "$cpu" WRITE_RO_AFTER_INIT 'write to read-only memory'
	lkdtm_oops "$cpu" WRITE_KERN 'write to read-only memory'
	lkdtm_oops "$cpu" EXEC_RODATA 'execute from non-executable memory'
done > "$verdicts"
cat "$verdicts"
rm -f "$verdicts"
want=$(cmdline_opt nodes "$(online_nodes | wc -w)")
[ "$tested" -ge "$want" ] || fail "tested from $tested node(s), the guest has $want"
if tr_present; then
	tr_view "lkdtm's text after the faults" "$(mod_text lkdtm)" 1
	tr_view "lkdtm's rodata after the faults" "$(cat /sys/module/lkdtm/sections/.rodata)" 1
fi
finish
