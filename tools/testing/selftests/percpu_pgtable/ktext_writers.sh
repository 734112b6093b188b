#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The kernel's other writers of text, each started from a CPU of every
# node in turn, with every CPU's view of the text compared with the
# master's after each node's round (ktext_observe_mod, which reads what
# each CPU's own table maps, not the feature's bookkeeping):
#
#  - ftrace direct calls, the kernel's samples/ftrace/ftrace-direct*
#    modules: a direct call site in kernel text and a trampoline in
#    (replicated) module text.  handle_mm_fault (ftrace-direct-too) and
#    schedule (ftrace-direct-multi) must reach the trampoline on every
#    CPU, from a fault or a sleep pinned to it; wake_up_process
#    (ftrace-direct) must reach it; the -modify samples must run both
#    trampolines, which their kthread swaps every 2 s (the kthread runs
#    where the scheduler puts it: only their first write starts on the
#    node's CPU).
#  - kgdb: the kernel's kgdbts suite (plant and detach, a software
#    breakpoint it then hits on the starting CPU, single steps), started
#    through its module parameter on the node's CPU.
#  - kprobes: the kprobes KUnit suite run again (KUnit debugfs) with
#    only the node's CPUs online, so the kprobes are armed, hit and
#    removed there while the other nodes' copies are written with no CPU
#    of theirs running; then a kprobe event armed the same way stays on
#    while those CPUs come back, and every CPU must read it.
#
# pcpt.ktext_writers=N starts them from the last N nodes only (the debug
# boot: 1, a node with a copy of its own), 0 skips the test (short
# boots of other tests); the default is every node.
#
# pcpt.ktext_direct=all runs every ftrace direct sample; the default,
# cold, only ftrace-direct-too.  The others patch schedule and
# wake_up_process, which every CPU runs all the time, and arm64 ftrace
# patches without stop_machine(): under QEMU 7.2's multi-threaded TCG a
# vCPU translating the page while another stores to it keeps running
# the old bytes (kernel-replication.rst, Limitations).  In one such
# run one CPU of the master's node kept calling ftrace-direct-multi's
# trampoline from schedule after the module was gone, and crashed.
# Run them in a boot of their own with single-threaded TCG, where no
# vCPU translates while another stores.
DIR=$(dirname "$0")
. "$DIR/lib.sh"

debugfs_mount
tr_present || { skip "text replication not built in"; }
nw=$(cmdline_opt ktext_writers all)
case "$nw" in
all) nw=$(online_nodes | wc -w) ;;
0) skip "pcpt.ktext_writers=0 (a light boot)" ;;
[1-9]|[1-9][0-9]) ;;
*) fail "pcpt.ktext_writers=$nw is not accepted: use all, 0 or a node count"; finish ;;
esac
[ "$nw" -le "$(online_nodes | wc -w)" ] || nw=$(online_nodes | wc -w)
direct=$(cmdline_opt ktext_direct cold)
case "$direct" in
cold|all) ;;
*) fail "pcpt.ktext_direct=$direct is not accepted: use cold or all"; finish ;;
esac
T=/sys/kernel/tracing
[ -d "$T/events" ] || mount -t tracefs none "$T" 2>/dev/null
[ -f "$T/trace" ] || { fail "no tracefs at $T"; finish; }
cpus=$(cpulist_expand "$(cat /sys/devices/system/cpu/online)")
all_cpus=$cpus

modko()
{
	find /lib/modules -name "$1.ko*" 2>/dev/null | head -1
}

# trace_reset: an empty top-level ring buffer, recording.
trace_reset()
{
	echo 0 > "$T/tracing_on"
	echo > "$T/trace"
	echo 1 > "$T/tracing_on"
}

# direct_cpus WHAT PATTERN CMD FUNC: with the trace empty, CMD runs
# pinned to every online CPU in turn; each CPU's own ring buffer, read
# with tracing off, must hold a PATTERN line (the sample's
# trace_printk()).  A miss is a failure (no retry); it prints FUNC's call
# site as every CPU reads it, which tells a copy that missed the write
# (its bytes differ) from a CPU that runs code older than its memory
# (QEMU's race, kernel-replication.rst, Limitations).
direct_cpus()
{
	pe_pattern=$2
	missing=$(pinned_events "$3" $cpus | sed -n 's/^\([0-9]*\):0$/ \1/p' | tr -d '\n')
	pe_pattern=
	if [ -z "$missing" ]; then
		pass "$1: reached on every CPU"
	else
		fail "$1: not reached on CPU(s)$missing"
		observe_load && echo "$(ksym "$4") 16 8" > "$OBSERVE/peek" &&
			sed "s/^/# call site of $4: /" "$OBSERVE/peek"
	fi
	echo 1 > "$T/tracing_on"
}

# direct_seen WHAT PATTERN...: each PATTERN is in the trace within 5 s.
direct_seen()
{
	w=$1
	shift
	for p in "$@"; do
		i=0
		while ! grep -q "$p" "$T/trace" && [ $i -lt 50 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		grep -q "$p" "$T/trace" && pass "$w: '$p' in the trace" ||
			fail "$w: no '$p' in the trace after 5 s"
	done
}

# load_on CPU MOD: insmod MOD pinned to CPU.
load_on()
{
	ko=$(modko "$2")
	[ -n "$ko" ] || { fail "$2.ko not installed (CONFIG_SAMPLE_FTRACE_DIRECT*)"; return 1; }
	taskset -c "$1" insmod "$ko" && return 0
	fail "insmod $2 on cpu$1: $(dmesg | tail -2 | tr '\n' ';')"
	return 1
}

# unload MOD: rmmod, by the module's name (underscores).
unload()
{
	rmmod "$(echo "$1" | tr - _)" || fail "rmmod $1"
}

ftrace_direct_round()
{
	wr_at="cpu$1 (node $2)"
	if load_on "$1" ftrace-direct-too; then
		direct_cpus "ftrace-direct-too from $wr_at, handle_mm_fault" \
			'handle mm fault' true handle_mm_fault
		tr_view "handle_mm_fault's direct call on, from $wr_at" image
		tr_view "ftrace-direct-too's trampoline, from $wr_at" \
			"$(mod_text ftrace_direct_too)" 1
		unload ftrace-direct-too
	fi
	[ "$direct" = all ] || return 0
	if load_on "$1" ftrace-direct-multi; then
		direct_cpus "ftrace-direct-multi from $wr_at, schedule" \
			': ip ' 'sleep 0.01' schedule
		unload ftrace-direct-multi
	fi
	if load_on "$1" ftrace-direct; then
		trace_reset
		direct_seen "ftrace-direct from $wr_at, wake_up_process" 'waking up '
		unload ftrace-direct
	fi
	for wr_m in ftrace-direct-modify ftrace-direct-multi-modify; do
		load_on "$1" $wr_m || continue
		trace_reset
		direct_seen "$wr_m from $wr_at" 'my direct func1' 'my direct func2'
		unload $wr_m
	done
}

KGDBTS=/sys/module/kgdbts/parameters/kgdbts

kgdbts_round()
{
	cpu=$1 node=$2
	[ -w "$KGDBTS" ] || { fail "no $KGDBTS (CONFIG_KGDB_TESTS)"; return; }
	mark="pcpt: kgdbts on cpu$cpu"
	echo "$mark" > /dev/kmsg
	# The basic suite and ten single steps; errors WARN as well.
	if ! taskset -c "$cpu" sh -c "echo V1I10 > $KGDBTS"; then
		fail "kgdbts on cpu$cpu (node $node): the start was refused"
		return
	fi
	log=$(dmesg | sed -n "/$mark\$/,\$p")
	for step in 'plant and detach test' 'sw breakpoint test' 'singlestep \[0/10\]'; do
		echo "$log" | grep -q "kgdbts:RUN $step" ||
			fail "kgdbts on cpu$cpu (node $node): no '$step'"
	done
	if echo "$log" | grep -q 'kgdbts: ERROR\|kgdbts: BP mismatch\|SingleStep failed'; then
		fail "kgdbts on cpu$cpu (node $node):" \
			"$(echo "$log" | grep 'kgdbts: ' | grep -v RUN | head -3 | tr '\n' ';')"
	elif echo "$log" | grep -q 'Unregistered I/O driver kgdbts'; then
		pass "kgdbts on cpu$cpu (node $node):" \
			"breakpoint planted, hit and removed, single steps"
	else
		fail "kgdbts on cpu$cpu (node $node): did not finish"
	fi
}

KPROBES=/sys/kernel/debug/kunit/kprobes_test

# only_node NODE: every CPU that can go offline and is not NODE's goes
# offline (CPU0 can on arm64 with PSCI); prints the CPUs left online.
only_node()
{
	mine=" $(cpulist_expand "$(cat /sys/devices/system/node/node$1/cpulist)") "
	for c in $all_cpus; do
		case "$mine" in *" $c "*) continue ;; esac
		f=/sys/devices/system/cpu/cpu$c/online
		[ -w "$f" ] && echo 0 > "$f"
	done
	cat /sys/devices/system/cpu/online
}

all_online()
{
	for c in $all_cpus; do
		f=/sys/devices/system/cpu/cpu$c/online
		[ -w "$f" ] && [ "$(cat "$f")" = 0 ] && echo 1 > "$f"
	done
	[ "$(cpulist_expand "$(cat /sys/devices/system/cpu/online)")" = "$all_cpus" ] ||
		fail "CPUs online after the kprobes round:" \
			"$(cat /sys/devices/system/cpu/online), want $all_cpus"
}

# kprobes_round NODE: with only NODE's CPUs online, the kprobes KUnit
# suite, then a kprobe event armed on vfs_read+16 that stays armed while
# the other CPUs come back: their nodes' copies were written (the BRK)
# with none of their CPUs online, and every CPU must read it.  The
# suite's own probes are removed before the view, so a write that missed
# those copies would have missed the removal too and left nothing to see.
kprobes_round()
{
	node=$1
	[ -d "$KPROBES" ] ||
		{ fail "no $KPROBES (CONFIG_KPROBES_SANITY_TEST, CONFIG_KUNIT_DEBUGFS)"; return; }
	on=$(only_node "$node")
	[ "$on" = "$(cat /sys/devices/system/node/node$node/cpulist)" ] ||
		fail "kprobes round of node $node: CPUs $on online, not only the node's"
	old_level=$(cut -f1 /proc/sys/kernel/printk)
	# KUnit's KTAP stays off the console (ktext_maint.sh says why).
	echo 5 > /proc/sys/kernel/printk
	echo run > "$KPROBES/run"
	echo "$old_level" > /proc/sys/kernel/printk
	old_level=
	echo 'p:pcpt_wkp vfs_read+16' >> "$T/kprobe_events" &&
		echo 1 > "$T/events/kprobes/pcpt_wkp/enable" ||
		fail "kprobe event on vfs_read+16 with CPUs $on online"
	all_online
	res=$(cat "$KPROBES/results")
	n=$(echo "$res" | grep -Ec '^ +ok [0-9]+ ')
	if echo "$res" | grep -q 'not ok\|# SKIP' || [ "$n" -eq 0 ]; then
		fail "kprobes KUnit with CPUs $on online (node $node):" \
			"$(echo "$res" | grep 'not ok\|# SKIP' | head -3 | tr '\n' ';')"
		echo "$res" | sed 's/^/# /'
	else
		pass "kprobes KUnit with CPUs $on online (node $node): $n cases ok"
	fi
	tr_view "vfs_read+16 probed with CPUs $on online, now all" image
	echo 0 > "$T/events/kprobes/pcpt_wkp/enable"
	echo '-:pcpt_wkp' >> "$T/kprobe_events"
}

# Whatever stops the test (the runner's timeout too), the CPUs come back
# and nothing of it stays armed for the tests after it.
wr_cleanup()
{
	for c in $all_cpus; do
		f=/sys/devices/system/cpu/cpu$c/online
		[ -w "$f" ] && [ "$(cat "$f")" = 0 ] && echo 1 > "$f"
	done
	[ -n "${old_level:-}" ] && echo "$old_level" > /proc/sys/kernel/printk
	if [ -d "$T/events/kprobes/pcpt_wkp" ]; then
		echo 0 > "$T/events/kprobes/pcpt_wkp/enable"
		echo '-:pcpt_wkp' >> "$T/kprobe_events"
	fi
	echo "${wr_kb%% *}" > "$T/buffer_size_kb"
	echo 1 > "$T/tracing_on"
} 2>/dev/null
wr_kb=$(cat "$T/buffer_size_kb")
trap wr_cleanup EXIT
wr_stopped()
{
	wr_cleanup
	echo "# FAIL: stopped by SIGTERM/SIGINT (the runner's timeout?)"
	exit 143
}
trap wr_stopped TERM INT
echo 64 > "$T/buffer_size_kb"
# Functions here and in lib.sh share the shell's variables: the loop's
# own have a prefix.
wr_done=0
for wr_node in $(online_nodes | tr ' ' '\n' | tail -n "$nw"); do
	wr_cpu=$(cpulist_expand "$(cat /sys/devices/system/node/node$wr_node/cpulist)" |
		awk '{ print $1 }')
	[ -n "$wr_cpu" ] || { fail "node $wr_node has no online CPU"; continue; }
	ftrace_direct_round "$wr_cpu" "$wr_node"
	kgdbts_round "$wr_cpu" "$wr_node"
	kprobes_round "$wr_node"
	tr_view "after the writers from node $wr_node" image
	wr_done=$((wr_done + 1))
done
[ "$wr_done" -eq "$nw" ] || fail "the writers ran from $wr_done node(s), not $nw"
echo 0 > "$T/tracing_on"
echo > "$T/trace"
tr_active && tr_verify "the writers from $nw node(s)"
finish
