#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Investigation, not a test: repeat ktext_patching.sh's function tracer
# step (function tracer on vfs_read, a read(2) pinned to every CPU while
# a background read loop runs on the last CPU of every node) in
# pcpt.ftrace_rounds rounds (default 20).  Each round switches the
# function tracer on (which patches the call site) and off, clears the trace,
# runs the reads, waits pcpt.ftrace_sleep seconds (default 1, as the
# step did when it missed), turns tracing off and, before anything resets
# the ring buffers, reads which CPUs show in two ways: every CPU's own
# buffer (per_cpu/cpuN/trace) with its statistics, and the merged trace
# file, as the step used to.  With pcpt.ftrace_count=1 and
# ktext_observe_mod loadable, a second ftrace_ops on vfs_read (debugfs
# ktext_observe/count) counts the calls per CPU independently of the
# tracer and its ring buffer (two ops move the call site from its own
# ops to the list: not the step's conditions, so a rate measurement
# leaves it off), and a missing CPU's view of vfs_read's entry and ftrace
# literal is printed.  pcpt.ftrace_readers=all runs the background
# loop on every CPU instead of one per node; pcpt.ftrace_pause=1 stops
# the loops while the tracer is switched on, as ktext_patching.sh does.
# Needs nothing of this series in the kernel, so the unpatched kernel
# runs it too, and the miss rates of the two can be compared.
DIR=$(dirname "$0")
. "$DIR/lib.sh"

T=/sys/kernel/tracing
[ -d "$T/events" ] || mount -t tracefs none "$T" 2>/dev/null
[ -f "$T/set_ftrace_filter" ] || skip "no function tracer"
debugfs_mount
rounds=$(cmdline_opt ftrace_rounds 20)
count=$(cmdline_opt ftrace_count 0)
pause=$(cmdline_opt ftrace_sleep 1)
readers=$(cmdline_opt ftrace_readers node)
stop_loops=$(cmdline_opt ftrace_pause 0)
case "$readers" in
node|all) ;;
*) fail "pcpt.ftrace_readers=$readers is not accepted; use node or all"; finish ;;
esac
cpus=$(cpulist_expand "$(cat /sys/devices/system/cpu/online)")
if [ "$count" = 1 ]; then
	insmod "$DIR/test_modules/ktext_observe_mod.ko" 2>/dev/null &&
		echo vfs_read > "$OBSERVE/count" || count=0
fi

if [ "$readers" = all ]; then
	# A read loop on every CPU: every copy's vfs_read runs while the
	# tracer patches it, the widest window for a copy to be translated
	# from bytes a concurrent write is about to change.
	pids=
	for c in $cpus; do
		taskset -c "$c" sh -c 'while :; do read -r x < /proc/self/stat; done' &
		pids="$pids $!"
	done
	readers_trap
else
	start_node_readers
fi
echo 16 > "$T/buffer_size_kb"
echo vfs_read > "$T/set_ftrace_filter"

cpus_of()
{
	grep -o '\[[0-9][0-9]*\]' "$1" | tr -d '[]' | sed 's/^0*\([0-9]\)/\1/' |
		sort -un | tr '\n' ' '
}

missed=0
merged_missed=0
r=1
while [ $r -le "$rounds" ]; do
	# Every round patches the call site anew: the step's miss followed
	# the switch to the function tracer.
	[ "$stop_loops" = 1 ] && pause_readers
	echo function > "$T/current_tracer"
	[ "$stop_loops" = 1 ] && resume_readers
	echo > "$T/trace"
	# The counter stays registered (registering patches the call site):
	# each round takes the difference.
	prev=
	[ "$count" = 1 ] && prev=$(cat "$OBSERVE/count")
	# With a reader on every CPU, every CPU already runs vfs_read.
	[ "$readers" = all ] || for c in $cpus; do
		taskset -c "$c" sh -c 'read -r x < /proc/self/stat'
	done
	sleep "$pause"
	echo 0 > "$T/tracing_on"
	line="round $r: events/overrun/calls:"
	miss=
	for c in $cpus; do
		o=$(sed -n 's/^overrun: //p' "$T/per_cpu/cpu$c/stats")
		# Under 8 busy readers, reading every CPU's trace would take
		# most of the round: count what the buffer holds.
		if [ "$readers" = all ]; then
			n=$(sed -n 's/^entries: //p' "$T/per_cpu/cpu$c/stats")
			n=$((n + o))
		else
			n=$(grep -c '^[^#]' "$T/per_cpu/cpu$c/trace")
		fi
		k=-
		[ "$count" = 1 ] &&
			k=$(($(sed -n "s/^cpu$c: //p" "$OBSERVE/count") - $(echo "$prev" |
				sed -n "s/^cpu$c: //p")))
		line="$line $c:$n/$o/$k"
		[ "$n" -gt 0 ] || miss="$miss $c"
	done
	if [ "$readers" = all ]; then
		merged=" $cpus "
	else
		merged=$(cpus_of "$T/trace")
	fi
	mmiss=
	for c in $cpus; do
		case " $merged " in *" $c "*) ;; *) mmiss="$mmiss $c" ;; esac
	done
	if [ -n "$mmiss" ]; then
		merged_missed=$((merged_missed + 1))
		line="$line; MERGED TRACE MISSES CPUs:$mmiss"
	fi
	if [ -n "$miss" ]; then
		missed=$((missed + 1))
		line="$line; MISSING CPUs:$miss"
		[ "$count" = 1 ] && echo "$(ksym vfs_read) 16 8" > "$OBSERVE/peek" &&
			line="$line; literal+entry: $(cat "$OBSERVE/peek" | tr '\n' ' ')"
	fi
	echo "# $line"
	echo 1 > "$T/tracing_on"
	if [ -n "$miss" ]; then
		# Nothing changed but the buffers (reset by tracing_on): do
		# the missing CPUs hit now?
		echo > "$T/trace"
		for c in $miss; do
			taskset -c "$c" sh -c 'read -r x < /proc/self/stat'
		done
		echo 0 > "$T/tracing_on"
		again=
		for c in $miss; do
			again="$again $c:$(grep -c '^[^#]' "$T/per_cpu/cpu$c/trace")"
		done
		echo "#   round $r, the same call site, buffers reset: events$again"
		echo 1 > "$T/tracing_on"
		# Write the page again, leaving the call site as it is: a
		# kprobe 16 bytes into vfs_read, on and off.  A CPU that hits
		# only now ran code other than what its memory held: under
		# TCG, which has no instruction cache, stale translated code.
		echo 'p:ktext_touch vfs_read+16' >> "$T/kprobe_events"
		echo 1 > "$T/events/kprobes/ktext_touch/enable"
		echo 0 > "$T/events/kprobes/ktext_touch/enable"
		echo '-:ktext_touch' >> "$T/kprobe_events"
		echo > "$T/trace"
		for c in $miss; do
			taskset -c "$c" sh -c 'read -r x < /proc/self/stat'
		done
		echo 0 > "$T/tracing_on"
		again=
		for c in $miss; do
			again="$again $c:$(grep -c '^[^#]' "$T/per_cpu/cpu$c/trace")"
		done
		echo "#   round $r, the page written again, the call site unchanged: events$again"
		echo 1 > "$T/tracing_on"
	fi
	echo nop > "$T/current_tracer"
	r=$((r + 1))
done
echo > "$T/set_ftrace_filter"
[ "$count" = 1 ] && echo off > "$OBSERVE/count" && rmmod ktext_observe_mod
kill $pids 2>/dev/null
wait 2>/dev/null
echo "# PCPT-FTRACE-PROBE: $missed of $rounds rounds missed a CPU, merged trace $merged_missed"
pass "$rounds rounds ($missed with a CPU missing)"
finish
