#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Patch kernel text while a CPU of every node runs the patched function: a static
# key (the sched_switch tracepoint), ftrace (function tracer on vfs_read)
# and a kprobe (on vfs_read), each switched on and off
# pcpt.ktext_patch_loops times (default 2).  The first time each is on,
# a read(2) pinned to every CPU must show in that CPU's own ring buffer:
# a CPU whose copy was not patched would not hit it.  That first time,
# the static key and the tracer switch on with the background loops
# stopped: under QEMU's multi-threaded TCG a vCPU translating the page
# while another writes it can keep the old code (lib.sh, pause_readers).  After every loop
# but the last, and at the end, every CPU reads the kernel's text and
# rodata through its own table and must find the master's bytes, from
# memory of the node it must use (ktext_observe_mod, independent of the
# feature's bookkeeping); with replication active the feature's own
# verify must agree.  Debug and extra boots run one loop (Makefile).
#
# Then module text: a static branch, ftrace and a kprobe on a function of
# ktext_test_mod, which every CPU runs in turn (debugfs ktext_test/call).
# Each CPU must see the static branch flip both ways, and must show in
# its own trace of ftrace and of the kprobe; then, with the module
# loaded, every CPU must read the master's bytes of its text.
DIR=$(dirname "$0")
. "$DIR/lib.sh"

debugfs_mount
tr_present || { skip "text replication not built in"; }
T=/sys/kernel/tracing
[ -d "$T/events" ] || mount -t tracefs none "$T" 2>/dev/null
[ -f "$T/kprobe_events" ] && [ -f "$T/set_ftrace_filter" ] ||
	{ fail "tracefs with kprobe events and ftrace needed"; finish; }
loops=$(cmdline_opt ktext_patch_loops 2)
# pcpt.ktext_views_on=0 (the debug boot, where each view of the image
# takes about a minute): no view of the image while a patch is on; the
# views of the module's text and the final views still run.
views_on=$(cmdline_opt ktext_views_on 1)
active=0
tr_active && active=1

cpus=$(cpulist_expand "$(cat /sys/devices/system/cpu/online)")
# Patches land while a CPU of every node runs vfs_read.
start_node_readers

echo 16 > "$T/buffer_size_kb"

# cpus_hit WHAT CMD [FUNC]: run CMD pinned to every online CPU in turn;
# each CPU's own ring buffer, read with tracing off and before anything
# resets it, must hold a hit.  A CPU whose copy of the call site was not
# patched never shows.  The runs are synchronous and the buffers keep the
# newest events, so the check needs no retry: a miss is a failure, and
# what tells its causes apart is printed with it (miss_evidence).
cpus_hit()
{
	missing=$(pinned_events "$2" $cpus | sed -n 's/^\([0-9]*\):0$/\1/p' | tr '\n' ' ')
	if [ -z "$missing" ]; then
		pass "$1: hit on every CPU"
	else
		fail "$1: no hit on CPU(s) $missing"
		miss_evidence "$2" "${3:-}" $missing
	fi
	echo > "$T/trace"
	echo 1 > "$T/tracing_on"
}

# miss_evidence CMD FUNC CPU...: the missing CPUs' ring buffer statistics
# (before any reset), the bytes of FUNC's entry and of the ftrace literal
# 8 bytes before it as every CPU reads them, whether those CPUs hit once
# the buffers are reset and nothing else changed, and whether an
# ftrace_ops of ktext_observe_mod on FUNC counts CMD's calls on those
# CPUs: calls counted there but not in the trace mean the tracer dropped
# them, no calls mean the call site does not reach ftrace.
miss_evidence()
{
	cmd=$1 fn=$2
	shift 2
	for c in "$@"; do
		echo "# cpu$c: $(grep -E '^(entries|overrun|commit overrun|dropped events):' \
			"$T/per_cpu/cpu$c/stats" | tr '\n' ' ')"
	done
	[ -n "$fn" ] || return 0
	echo "# enabled_functions: $(grep "^$fn " "$T/enabled_functions" | tr '\n' ';')"
	observe_load || return 0
	if echo "$(ksym "$fn") 16 8" > "$OBSERVE/peek"; then
		sed 's/^/# literal, entry of '"$fn"': /' "$OBSERVE/peek"
		[ "$(cut -d' ' -f2 "$OBSERVE/peek" | sort -u | wc -l)" -gt 1 ] &&
			echo "# the CPUs read different bytes there: a copy missed a write"
	fi
	# First nothing changed but the buffers: a CPU that still does not
	# hit keeps some state of its own.
	echo "# the same call site, buffers reset: events $(pinned_events "$cmd" "$@" |
		tr '\n' ' ')"
	# Then the page written again, the call site left as it is (a kprobe
	# 16 bytes into FUNC, on and off): a CPU that hits only now ran
	# code other than what its memory held, under TCG (which has no
	# instruction cache) stale translated code.
	if echo "p:ktext_touch $fn+16" >> "$T/kprobe_events"; then
		echo 1 > "$T/events/kprobes/ktext_touch/enable"
		echo 0 > "$T/events/kprobes/ktext_touch/enable"
		echo '-:ktext_touch' >> "$T/kprobe_events"
		echo "# the page written again, the call site unchanged: events $(pinned_events \
			"$cmd" "$@" | tr '\n' ' ')"
	fi
	# Then a second ftrace_ops: the call site goes through the ops list.
	echo "$fn" > "$OBSERVE/count" || return 0
	echo "# with a second ftrace_ops: events $(pinned_events "$cmd" "$@" | tr '\n' ' ')"
	for c in "$@"; do
		echo "# cpu$c: ktext_observe_mod counted $(sed -n "s/^cpu$c: //p" \
			"$OBSERVE/count") calls"
	done
	echo off > "$OBSERVE/count"
}

READ1='read -r x < /proc/self/stat'

# view ARGS: tr_view with the readers stopped.  What a view checks is
# memory, not code running concurrently, and a vCPU spinning in a reader
# takes host time from the view's 8 CPUs (2 host CPUs run them): a view
# took 24 to 37 s with the readers running, 6 to 9 s without (default
# boot).
view()
{
	pause_readers
	tr_view "$@"
	resume_readers
}

i=0
while [ $i -lt "$loops" ]; do
	echo "# patching loop $((i + 1)) of $loops"
	echo > "$T/trace"
	# The steps checked on every CPU switch on with the loops stopped
	# (pause_readers): QEMU's race, not the patch, is what they
	# would otherwise find now and then.  Later loops and the kprobe
	# (under stop_machine()) patch while the loops run.
	[ $i -eq 0 ] && pause_readers
	echo 1 > "$T/events/sched/sched_switch/enable"
	[ $i -eq 0 ] && resume_readers
	[ $i -eq 0 ] && cpus_hit "static key (sched_switch tracepoint)" "$READ1"
	echo 0 > "$T/events/sched/sched_switch/enable"

	echo vfs_read > "$T/set_ftrace_filter"
	[ $i -eq 0 ] && pause_readers
	echo function > "$T/current_tracer"
	[ $i -eq 0 ] && resume_readers
	if [ $i -eq 0 ]; then
		cpus_hit "ftrace (function tracer on vfs_read)" "$READ1" vfs_read
		# A copy that missed the write differs now; once the
		# call site is restored it would not.
		[ "$views_on" = 1 ] && view "function tracer on vfs_read, while on" image
	fi
	echo nop > "$T/current_tracer"
	echo > "$T/set_ftrace_filter"

	echo 'p:ktext_probe vfs_read' >> "$T/kprobe_events"
	echo 1 > "$T/events/kprobes/ktext_probe/enable"
	if [ $i -eq 0 ]; then
		cpus_hit "kprobe on vfs_read" "$READ1" vfs_read
		[ "$views_on" = 1 ] && view "kprobe on vfs_read, while on" image
	fi
	echo 0 > "$T/events/kprobes/ktext_probe/enable"
	echo '-:ktext_probe' >> "$T/kprobe_events"

	if [ $((i + 1)) -lt "$loops" ]; then
		[ $active -eq 1 ] && tr_verify "patching loop $((i + 1))"
		view "patching loop $((i + 1)), kernel text and rodata" image
	fi
	i=$((i + 1))
done

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
	cpus_hit "ftrace on $mod's ktext_test_call" "cat $D/call > /dev/null" ktext_test_call
	view "ftrace on $mod's ktext_test_call, while on" "$(mod_text $mod)" 1
	echo nop > "$T/current_tracer"
	echo > "$T/set_ftrace_filter"
	echo "p:ktext_mprobe $mod:ktext_test_call" >> "$T/kprobe_events"
	echo 1 > "$T/events/kprobes/ktext_mprobe/enable"
	cpus_hit "kprobe on $mod's ktext_test_call" "cat $D/call > /dev/null" ktext_test_call
	view "kprobe on $mod's ktext_test_call, while on" "$(mod_text $mod)" 1
	echo 0 > "$T/events/kprobes/ktext_mprobe/enable"
	echo '-:ktext_mprobe' >> "$T/kprobe_events"
	[ $active -eq 1 ] && tr_verify "patching $mod"
	view "patching $mod, its text" "$(mod_text $mod)" 1
	rmmod $mod
else
	fail "insmod $mod: $(dmesg | grep "$mod" | tail -2 | tr '\n' ';')"
fi

kill $pids 2>/dev/null
wait 2>/dev/null
[ $active -eq 1 ] && tr_verify "$loops patching loops"
tr_view "$loops patching loops, kernel text and rodata" image
finish
