#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Investigation, not a test: repeat ktext_patching.sh's function tracer
# step (function tracer on vfs_read, a read(2) pinned to every CPU, a
# background read loop on the last CPU of every node, tracing_on off,
# read the trace, tracing_on on) pcpt.ftrace_rounds times (default 20),
# and for each round print, before anything resets the ring buffers,
# which CPUs the trace shows, every CPU's ring buffer statistics, and
# (pcpt.ftrace_kprobe=1) which CPUs entered function_trace_call(),
# counted by a kprobe event in a second trace instance, independently of
# the function tracer's buffer.  Runs on any kernel (no module, no
# debugfs of this project), so the unpatched base kernel can run it too.
# Run with: make check-one CMDLINE="pcpt.extra=ktext_ftrace_probe.sh ..."
DIR=$(dirname "$0")
. "$DIR/lib.sh"

T=/sys/kernel/tracing
[ -d "$T/events" ] || mount -t tracefs none "$T" 2>/dev/null
[ -f "$T/set_ftrace_filter" ] || skip "no function tracer"
rounds=$(cmdline_opt ftrace_rounds 20)
kp=$(cmdline_opt ftrace_kprobe 0)
cpus=$(cpulist_expand "$(cat /sys/devices/system/cpu/online)")

start_node_readers
echo 16 > "$T/buffer_size_kb"
if [ "$kp" = 1 ]; then
	if echo 'p:ftc function_trace_call' >> "$T/kprobe_events" 2>/dev/null; then
		mkdir "$T/instances/ftc"
		echo 1 > "$T/instances/ftc/events/kprobes/ftc/enable"
	else
		echo "# no kprobe on function_trace_call: $(tail -2 "$T/error_log" | tr '\n' ' ')"
		kp=0
	fi
fi
echo vfs_read > "$T/set_ftrace_filter"
echo function > "$T/current_tracer"

cpus_of()
{
	grep -o '\[[0-9][0-9]*\]' "$1" | tr -d '[]' | sed 's/^0*\([0-9]\)/\1/' | sort -un | tr '\n' ' '
}

missed=0
r=1
while [ $r -le "$rounds" ]; do
	for c in $cpus; do
		taskset -c "$c" sh -c 'read -r x < /proc/self/stat'
	done
	sleep 1
	echo 0 > "$T/tracing_on"
	[ "$kp" = 1 ] && echo 0 > "$T/instances/ftc/tracing_on"
	hit=$(cpus_of "$T/trace")
	stats=
	for c in $cpus; do
		e=$(sed -n 's/^entries: //p' "$T/per_cpu/cpu$c/stats")
		o=$(sed -n 's/^overrun: //p' "$T/per_cpu/cpu$c/stats")
		stats="$stats $c:$e/$o"
	done
	miss=
	for c in $cpus; do
		case " $hit " in *" $c "*) ;; *) miss="$miss $c" ;; esac
	done
	line="round $r: trace CPUs: $hit; entries/overrun:$stats"
	if [ "$kp" = 1 ]; then
		line="$line; function_trace_call CPUs: $(cpus_of "$T/instances/ftc/trace")"
		echo > "$T/instances/ftc/trace"
		echo 1 > "$T/instances/ftc/tracing_on"
	fi
	[ -n "$miss" ] && { missed=$((missed + 1)); line="$line; MISSING CPUs:$miss"; }
	echo "# $line"
	echo 1 > "$T/tracing_on"
	r=$((r + 1))
done
echo nop > "$T/current_tracer"
echo > "$T/set_ftrace_filter"
if [ "$kp" = 1 ]; then
	echo 0 > "$T/instances/ftc/events/kprobes/ftc/enable"
	rmdir "$T/instances/ftc"
	echo '-:ftc' >> "$T/kprobe_events"
fi
kill $pids 2>/dev/null
wait 2>/dev/null
echo "# PCPT-FTRACE-PROBE: $missed of $rounds rounds missed a CPU"
pass "$rounds rounds ($missed with a CPU missing)"
finish
