#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Soak (a long run of its own, or a short one): everything at once, on
# CPUs of every node, then the checks that would see what got lost.
#
# Concurrently, until pcpt.soak_cycles module loads are done (in all, on
# all nodes) and pcpt.soak_seconds have passed:
#  - eight loaders, one per ktext_bigN module, spread over the nodes in
#    turn and each allowed on its node's CPUs only, load and unload their
#    large-text module;
#  - a patcher switches the sched_switch static key, the function tracer
#    on vfs_read and on ktext_test_mod's function, kprobes on both and
#    the module's static branch, while a reader per node runs vfs_read;
#    every fourth round, while each is on, the module function is called
#    on a CPU of every node, which must run the static branch's new code
#    and show in the trace of the tracer and of the kprobe;
#  - CPU hotplug takes every CPU but CPU 0 offline and online, one at a
#    time, never the last online CPU of a node;
#  - percpu churn, on each CPU in turn, allocates and frees 4 KiB percpu
#    objects (chunks come and go, the window is populated and
#    depopulated), each read and written through the window;
#  - counter writers run this_cpu ops while a migrator moves them;
#  - memory hotplug adds the virtio-mem device's blocks (a new top-level
#    entry of the linear map: the harness places it 8 TiB up), touches them
#    from a CPU of every node (pcpt_test_mod) and removes them again.
#
# The readers, the writers and the migrator rest between bursts (a
# second per 100 reads, 0.1 s per write of 20,000 increments, 0.2 s per
# round of moves): under TCG, with fewer host CPUs than vCPUs, workers
# that never idle hold every other one back, the loaders most.
#
# Every pcpt.soak_checkpoint seconds (default 30; 0: none) the workers
# park between two operations and, mid-soak, the checks that need no
# module of their own run: tables against the master, the copies (verify
# and every CPU's read of the module text), the counter sums against the
# writes made so far, the window page count, the module window and the
# master's top-level entries.  A page lost between two churns, or a copy
# that missed a write, shows there and not only at the end.  The
# readers go on until every worker has stopped, then idle for the
# checks; pcpt.soak_seconds counts the checkpoints' time too.
#
# Then, with every CPU online: every table matches the master, every CPU
# on its own; the copies match the master (the feature's verify) and
# every CPU reads the master's bytes of the kernel's text and rodata and
# of the patched module through its own table (ktext_observe_mod); the
# counter sums are exact; every CPU's window maps exactly the percpu
# pages that are populated (a mapping left behind by a depopulate, or
# missing after a populate, shows as a difference), counted from each
# CPU's own table dump against /proc/meminfo's Percpu; the module window
# holds the pages it held before; the master has the top-level entries
# it had before the memory came and went.  One "soak:" line gives the
# figures, a line before it the readers' rounds.
DIR=$(dirname "$0")
. "$DIR/lib.sh"

cycles=$(cmdline_opt soak_cycles 0)
secs=$(cmdline_opt soak_seconds 0)
cp_every=$(cmdline_opt soak_checkpoint 30)
case "$cycles$secs$cp_every" in
*[!0-9]*)
	fail "pcpt.soak_cycles='$cycles' pcpt.soak_seconds='$secs'" \
		"pcpt.soak_checkpoint='$cp_every': whole numbers expected"
	finish ;;
esac
[ "$cycles" -gt 0 ] || [ "$secs" -gt 0 ] ||
	skip "no soak on this boot (pcpt.soak_cycles=N and/or pcpt.soak_seconds=S)"
debugfs_mount
T=/sys/kernel/tracing
[ -d "$T/events" ] || mount -t tracefs none "$T" 2>/dev/null
[ -f "$T/kprobe_events" ] || { fail "tracefs with kprobe events needed"; finish; }
for m in ktext_test_mod pcpw_test_mod ktext_big0 ktext_big1 ktext_big2 ktext_big3 \
	 ktext_big4 ktext_big5 ktext_big6 ktext_big7; do
	[ -f "$DIR/test_modules/$m.ko" ] || { fail "$m.ko not built"; finish; }
	grep -q "^$m " /proc/modules && rmmod $m
done
insmod "$DIR/test_modules/ktext_test_mod.ko" || { fail "insmod ktext_test_mod"; finish; }
insmod "$DIR/test_modules/pcpw_test_mod.ko" || { fail "insmod pcpw_test_mod"; finish; }
KT=/sys/kernel/debug/ktext_test
PW=/sys/kernel/debug/pcpw_test

mw_before=$(mw_pages)

win_before= win_after=
if pcpw_window_countable; then
	win_before=$(pcpw_window_pages) ||
		{ fail "before the soak: $win_before"; win_before=mismatch; }
fi
n_before=$(pcpt_master_entries)

W=/tmp/soak.$$
mkdir -p $W
stop=$W/stop
pause=$W/pause

# park NAME [FIGURE]: at a checkpoint, tell the soak this worker stands
# between two operations (with FIGURE, its count so far) and wait there
# until the checkpoint is over.
park()
{
	[ -e $pause ] || return 0
	{ read -r g < $pause; } 2>/dev/null || return 0
	echo "$g ${2:-0}" > $W/parked.$1
	# The shell's own read: a failed fork must not end the wait early.
	while { read -r cur < $pause; } 2>/dev/null && [ "$cur" = "$g" ] &&
	      [ ! -e $stop ]; do
		sleep 1
	done
}
# The loaders' least end and the first checkpoint count from here: with
# pcpt.soak_seconds over pcpt.soak_checkpoint a checkpoint must run.
origin=$(date +%s)
end=$((origin + secs))
nodes=
for node in $(online_nodes); do
	[ -n "$(cat /sys/devices/system/node/node$node/cpulist)" ] && nodes="$nodes $node"
done
nnodes=$(echo $nodes | wc -w)
[ "$nnodes" -gt 0 ] || {
	fail "no online node with CPUs"
	rmmod pcpw_test_mod ktext_test_mod
	rm -rf $W
	finish
}
# As many loaders as modules (ktext_big0..7), spread over the nodes in
# turn: two per node on four nodes, one on eight.
nload=8
per=$(( (cycles + nload - 1) / nload ))
# CPU -> node, taken while every CPU is online.
cpumap=
for node in $nodes; do
	for c in $(cpulist_expand "$(cat /sys/devices/system/node/node$node/cpulist)"); do
		cpumap="$cpumap $c:$node"
	done
done
node_cpulist()
{
	echo "$cpumap" | tr ' ' '\n' | sed -n "s/^\([0-9]*\):$1\$/\1/p" | tr '\n' ',' | sed 's/,$//'
}
cleanup()
{
	touch $stop 2>/dev/null
	kill $bg 2>/dev/null
	[ -n "$mem_policy" ] && echo "$mem_policy" > $MEM/auto_online_blocks
	echo nop > "$T/current_tracer"
	echo 0 > "$T/events/kprobes/enable" 2>/dev/null
	echo > "$T/kprobe_events"
	for c in $(cpulist_expand "$(cat /sys/devices/system/cpu/present)"); do
		f=/sys/devices/system/cpu/cpu$c/online
		[ -w "$f" ] && [ "$(cat "$f")" = 0 ] && echo 1 > "$f"
	done
}
bg= loaders= mem_policy=
trap 'cleanup' EXIT
trap 'cleanup; echo "# FAIL: stopped by SIGTERM/SIGINT (the runner'"'"'s timeout?)"; exit 143' \
	TERM INT

# Loaders: each its own module, on one node's CPUs, the nodes in turn.
loadnames=
w=0
while [ $w -lt $nload ]; do
	set -- $nodes
	shift $((w % nnodes))
	cl=$(node_cpulist "$1")
	(
		i=0 err=0
		while [ $i -lt $per ] || [ "$(date +%s)" -lt $end ]; do
			park load.$w
			taskset -c "$cl" insmod "$DIR/test_modules/ktext_big$w.ko" ||
				err=$((err + 1))
			rmmod ktext_big$w || err=$((err + 1))
			i=$((i + 1))
		done
		echo "$i $err" > $W/load.$w
	) &
	bg="$bg $!"
	loaders="$loaders $!"
	loadnames="$loadnames load.$w"
	w=$((w + 1))
done

# A reader of vfs_read per node, each counting its rounds.
for node in $nodes; do
	cl=$(node_cpulist "$node")
	# Idle while the checks run (every worker stopped): a spinning vCPU
	# slows them (2 host CPUs).
	rd="n=0; while [ ! -e $stop ]; do [ -e $W/quiet ] && { sleep 1; continue; };"
	rd="$rd i=0; while [ \$i -lt 100 ]; do read -r x < /proc/self/stat; i=\$((i + 1)); done;"
	rd="$rd n=\$((n + 100)); sleep 1; done; echo \$n > $W/read.$node"
	taskset -c "$cl" sh -c "$rd" &
	bg="$bg $!"
done

# nodes_hit WHAT PATTERN: with the trace cleared, the module function
# called on a CPU of every node must show (PATTERN) from every node.
nodes_hit()
{
	# Every CPU's buffer, also an offline one's: writing "trace" clears
	# only the online CPUs', and an old hit would pass for a new one.
	for f in "$T"/per_cpu/cpu*/trace; do
		echo > "$f"
	done
	for node in $nodes; do
		taskset -c "$(node_cpulist "$node")" cat "$KT/call" > /dev/null
	done
	hit=$(sed -n "s/.*\[0*\([0-9][0-9]*\)\].*$2.*/\1/p" "$T/trace" | sort -u)
	for node in $nodes; do
		ok=0
		for c in $hit; do
			case " $cpumap " in *" $c:$node "*) ok=1 ;; esac
		done
		[ $ok -eq 1 ] || {
			echo "$1: no hit from node $node (CPUs hit: $(echo $hit))" >> $W/perr.log
			return 1
		}
	done
}

# key_nodes WANT: the module's static branch runs WANT on every node.
key_nodes()
{
	for node in $nodes; do
		out=$(taskset -c "$(node_cpulist "$node")" cat "$KT/call")
		case "$out" in
		*" node $node key $1") ;;
		*) echo "static branch $1 on node $node: '$out'" >> $W/perr.log; return 1 ;;
		esac
	done
}

# Patcher: every switch is checked; a refused one is an error.
(
	n=0 err=0 checks=0 r=0
	t()
	{
		if "$@"; then
			n=$((n + 1))
			return 0
		fi
		err=$((err + 1))
		echo "refused: $*" >> $W/perr.log
		return 1
	}
	wr() { echo "$1" > "$2"; }
	ap() { echo "$1" >> "$2"; }
	echo 1 > "$T/tracing_on"
	while [ ! -e $stop ]; do
		park patch
		r=$((r + 1))
		chk=$((r % 4 == 1))
		t wr 1 "$T/events/sched/sched_switch/enable"
		t wr 0 "$T/events/sched/sched_switch/enable"
		t wr vfs_read "$T/set_ftrace_filter" && t wr function "$T/current_tracer"
		t wr nop "$T/current_tracer"
		if t wr ktext_test_call "$T/set_ftrace_filter" &&
			t wr function "$T/current_tracer"; then
			[ $chk -eq 1 ] && {
				nodes_hit "function tracer" ktext_test_call || err=$((err + 1))
				checks=$((checks + 1))
			}
		fi
		t wr nop "$T/current_tracer"
		echo > "$T/set_ftrace_filter"
		t ap 'p:soak_k vfs_read' "$T/kprobe_events"
		t ap 'p:soak_m ktext_test_mod:ktext_test_call' "$T/kprobe_events"
		# The module probe alone first: vfs_read's would flood the trace.
		if t wr 1 "$T/events/kprobes/soak_m/enable"; then
			[ $chk -eq 1 ] && {
				nodes_hit "kprobe" soak_m || err=$((err + 1))
				checks=$((checks + 1))
			}
		fi
		t wr 1 "$T/events/kprobes/soak_k/enable"
		t wr 0 "$T/events/kprobes/enable"
		t ap '-:soak_k' "$T/kprobe_events"
		t ap '-:soak_m' "$T/kprobe_events"
		t wr 1 "$KT/key"
		[ $chk -eq 1 ] && { key_nodes 1 || err=$((err + 1)); checks=$((checks + 1)); }
		t wr 0 "$KT/key"
		[ $chk -eq 1 ] && { key_nodes 0 || err=$((err + 1)); checks=$((checks + 1)); }
	done
	echo "$n $err $checks" > $W/patch
) &
bg="$bg $!"

# CPU hotplug: every CPU but 0, one at a time, never a node's last.
(
	n=0 err=0
	while [ ! -e $stop ]; do
		for x in $cpumap; do
			c=${x%:*} node=${x#*:}
			[ "$c" = 0 ] && continue
			[ -e $stop ] && break
			park plug
			f=/sys/devices/system/cpu/cpu$c/online
			[ -w "$f" ] || continue
			others=0
			for y in $cpumap; do
				[ "${y#*:}" = "$node" ] && [ "${y%:*}" != "$c" ] &&
					[ "$(cat /sys/devices/system/cpu/cpu${y%:*}/online \
						2>/dev/null || echo 1)" = 1 ] &&
					others=$((others + 1))
			done
			[ $others -gt 0 ] || continue
			echo 0 > "$f" || err=$((err + 1))
			echo 1 > "$f" || err=$((err + 1))
			n=$((n + 1))
		done
	done
	echo "$n $err" > $W/plug
) &
bg="$bg $!"

# Percpu churn, on each CPU in turn (skipped while it is offline).
(
	n=0 err=0
	while [ ! -e $stop ]; do
		for x in $cpumap; do
			[ -e $stop ] && break
			park churn
			# taskset fails (1) while the CPU is offline.
			taskset -c "${x%:*}" sh -c "echo 128 > $PW/churn || exit 7" 2>/dev/null
			case $? in
			0) n=$((n + 1)) ;;
			7) err=$((err + 1)) ;;
			esac
		done
	done
	echo "$n $err" > $W/churn
) &
bg="$bg $!"

# Counter writers, each counting its writes of 20,000 increments, and a
# migrator moving each with its own stride, so they meet and part.
per_write=20000
writers=
for k in 1 2; do
	(
		n=0
		while [ ! -e $stop ]; do
			park inc.$k $n
			sleep 0.1
			echo $per_write > $PW/inc && n=$((n + 1))
		done
		echo "$n" > $W/inc.$k
	) &
	writers="$writers $!"
done
bg="$bg $writers"
(
	n=0 r=0
	while [ ! -e $stop ]; do
		park moves
		sleep 0.2
		k=0
		r=$((r + 1))
		on=$(cpulist_expand "$(cat /sys/devices/system/cpu/online)")
		non=$(echo "$on" | wc -w)
		for p in $writers; do
			k=$((k + 1))
			c=$(echo "$on" | cut -d' ' -f$(((r * (2 * k - 1)) % non + 1)))
			taskset -p "$(printf %x $((1 << c)))" "$p" >/dev/null 2>&1 && n=$((n + 1))
		done
	done
	echo "$n" > $W/moves
) &
bg="$bg $!"

# Memory hotplug: hot-add, touch from every node, hot-remove, again.
if vmem_init; then
	mem_policy=$(cat $MEM/auto_online_blocks)
	# Movable: nothing unmovable lands there, so unplug can offline it.
	echo online_movable > $MEM/auto_online_blocks
	(
		n=0 err=0 touched=0
		# At least one cycle, however short the soak.
		while :; do
			if ! vmem_request "$vmem_want" vmem_online; then
				echo "hot-add of $vmem_want bytes" \
					"not online within $vmem_wait s" >> $W/perr.log
				err=$((err + 1))
				break
			fi
			for b in $(vmem_added); do
				# alloc_contig_range() may meet a page the mix holds
				# for a moment (-EBUSY); a wrong byte is -EIO at once.
				ok=0
				for try in 1 2 3 4 5 6 7 8 9 10; do
					out=$(vmem_touch "$b" 2>&1) && { ok=1; break; }
					case "$out" in *"I/O error"*|*"Input/output"*) break ;; esac
					sleep 1
				done
				if [ $ok -eq 1 ]; then
					touched=$((touched + 1))
				else
					err=$((err + 1))
					echo "touching block $b" \
						"from every node: $out" >> $W/perr.log
				fi
			done
			if ! vmem_request 0 vmem_gone; then
				echo "hot-remove not done within $vmem_wait s" >> $W/perr.log
				err=$((err + 1))
				break
			fi
			n=$((n + 1))
			[ -e $stop ] && break
			park mem $n
		done
		echo "$n $err $touched" > $W/mem
	) &
	bg="$bg $!"
else
	echo "# no memory hotplug in this soak: $vmem_why"
fi

# The workers that park at a checkpoint (the readers only read).
names="$loadnames patch plug churn inc.1 inc.2 moves"
[ -n "$mem_policy" ] && names="$names mem"

# checkpoint: every worker parked between two operations (or done), the
# checks that need no module of their own, silent when they pass.  A
# worker still busy after cp_wait seconds fails the checkpoint (well
# within the runner's 600 s for the short soak).
cps=0 cp_bad=0 cp_secs=0 cp_park=0 gen=0 cp_wait=300
checkpoint()
{
	# A new number each time, also after one that timed out, and no
	# parked file left from before: each must be this checkpoint's.
	gen=$((gen + 1))
	rm -f $W/parked.*
	echo $gen > $pause.new && mv $pause.new $pause
	t0=$(date +%s)
	incs_cp=0 slow= mem_n=0
	for w in $names; do
		while :; do
			set -- $(cat $W/parked.$w 2>/dev/null)
			[ "${1:-}" = $gen ] && break
			# A loader that is done has left its result.
			[ -e $W/$w ] && { set -- $gen 0; break; }
			if [ $(($(date +%s) - t0)) -ge $cp_wait ]; then
				fail "checkpoint $gen: worker $w still busy after $cp_wait s," \
					"no checks"
				rm -f $pause
				cp_bad=$((cp_bad + 1))
				return
			fi
			slow=$w
			sleep 1
		done
		case $w in
		inc.*) incs_cp=$((incs_cp + $2 * per_write)) ;;
		mem) mem_n=$2 ;;
		esac
	done
	touch $W/quiet
	t1=$(date +%s)
	cp_park=$((cp_park + t1 - t0))
	f0=$pcpt_failures
	# The helpers' variables are global: tr_view's reads set "nodes".
	keep_nodes=$nodes
	# One result for every checkpoint at the end; failures show here.
	PCPT_KTAP_QUIET=1
	{
		if pcpt_active; then
			pcpt_check "checkpoint $gen"
			pcpt_loaded_ok "checkpoint $gen"
		fi
		t2=$(date +%s)
		tr_active && tr_verify "checkpoint $gen"
		t3=$(date +%s)
		tr_view "checkpoint $gen, ktext_test_mod's text" "$(mod_text ktext_test_mod)" 1
		[ -d "$OBSERVE" ] && rmmod ktext_observe_mod
		t4=$(date +%s)
		got=$(cat $PW/sum)
		expect="static $incs_cp dynamic $incs_cp"
		expect="$expect s8 $((incs_cp % 256)) s16 $((incs_cp % 65536))"
		[ "$got" = "$expect" ] ||
			fail "checkpoint $gen: counters: expected $expect, got $got"
		if [ -n "$win_before" ] && [ "$win_before" != mismatch ]; then
			x=$(pcpw_window_pages) || fail "checkpoint $gen: $x"
		fi
		t5=$(date +%s)
		x=$(mw_pages)
		[ "$x" = "$mw_before" ] || fail "checkpoint $gen: module window holds '$x'," \
			"'$mw_before' before the soak"
		if [ -n "$mem_policy" ] && pcpt_active; then
			x=$(pcpt_master_entries)
			# The memory worker parks with its blocks removed.
			k=0
			[ "$mem_n" -gt 0 ] && k=$(vmem_kept_entries)
			[ "$x" -eq $((n_before + k)) ] ||
				fail "checkpoint $gen: master entries $x," \
					"$n_before before the soak (+$k for KASAN's shadow)"
		fi
	} > $W/cp.out 2>&1
	PCPT_KTAP_QUIET=
	nodes=$keep_nodes
	rm -f $W/quiet $pause
	grep '^# FAIL' $W/cp.out
	[ $pcpt_failures -eq $f0 ] || cp_bad=$((cp_bad + 1))
	cps=$((cps + 1))
	cp_secs=$((cp_secs + $(date +%s) - t0))
	echo "# checkpoint $gen: $((t1 - t0)) s until the workers stood still" \
		"(the last: ${slow:-none})," \
		"checks $((t2 - t1)) + $((t3 - t2)) + $((t4 - t3))" \
		"+ $((t5 - t4)) + $(($(date +%s) - t5)) s" \
		"(tables, verify, module text view, counters and windows, the rest)"
}

start=$(date +%s)
next=$((origin + cp_every))
while :; do
	busy=0
	for w in $loadnames; do
		[ -e $W/$w ] || busy=1
	done
	[ $busy -eq 1 ] || break
	sleep 2
	[ "$cp_every" -gt 0 ] && [ "$(date +%s)" -ge $next ] || continue
	checkpoint
	next=$(($(date +%s) + cp_every))
done
wait $loaders
touch $stop
wait
took=$(($(date +%s) - start))
for c in $(cpulist_expand "$(cat /sys/devices/system/cpu/present)"); do
	f=/sys/devices/system/cpu/cpu$c/online
	[ -w "$f" ] && [ "$(cat "$f")" = 0 ] && echo 1 > "$f"
done
[ "$(cat /sys/devices/system/cpu/online)" = "$(cat /sys/devices/system/cpu/present)" ] ||
	fail "CPUs online after the soak: $(cat /sys/devices/system/cpu/online)," \
		"present $(cat /sys/devices/system/cpu/present)"

# result FILE: a worker's figures in $r, or a failure if it left none
# (not in a subshell: fail must count).
result()
{
	r=$(cat "$W/$1" 2>/dev/null)
	[ -n "$r" ] && return 0
	fail "worker $1 left no result"
	r="0 1 0"
}
loads=0 lerr=0 reads=
for w in $loadnames; do
	result $w
	set -- $r
	loads=$((loads + $1)) lerr=$((lerr + $2))
done
for node in $nodes; do
	result read.$node
	set -- $r
	[ "$1" -gt 0 ] || fail "the reader of node $node never ran"
	reads="$reads $1"
done
result patch
set -- $r
toggles=$1 perr=$2 pchecks=${3:-0}
result plug
set -- $r
plugs=$1 herr=$2
result churn
set -- $r
churns=$1 cerr=$2
result moves
set -- $r
moves=$1
mems=0 merr=0 touched=0
if [ -n "$mem_policy" ]; then
	result mem
	set -- $r
	mems=$1 merr=$2 touched=${3:-0}
	echo "$mem_policy" > $MEM/auto_online_blocks
fi
writes=0
for k in 1 2; do
	result inc.$k
	set -- $r
	writes=$((writes + $1))
done
[ -s $W/perr.log ] && head -5 $W/perr.log | sed 's/^/# /'
rm -rf $W
trap - EXIT

if [ "$cp_every" -gt 0 ]; then
	if [ $gen -gt 0 ] && [ $cp_bad -eq 0 ]; then
		pass "$cps checkpoints mid-soak" \
			"($cp_secs s, of which $cp_park s for the workers to stop):" \
			"tables, copies, counters, windows, module window, master entries"
	elif [ $gen -gt 0 ]; then
		fail "$cp_bad of $gen checkpoints mid-soak failed (above)"
	elif [ "$secs" -gt "$cp_every" ]; then
		fail "no checkpoint in a soak of at least $secs s (pcpt.soak_checkpoint=$cp_every)"
	else
		echo "# no checkpoint: the soak ended within pcpt.soak_checkpoint=$cp_every s"
	fi
fi
[ "$lerr" -eq 0 ] && [ "$loads" -ge "$cycles" ] &&
	pass "$loads module loads and unloads on $nnodes nodes" ||
	fail "$loads module loads ($cycles asked for), $lerr failed"
[ "$perr" -eq 0 ] && [ "$toggles" -gt 0 ] && [ "$pchecks" -gt 0 ] &&
	pass "$toggles patching switches, $pchecks checks on every node while on" ||
	fail "$toggles patching switches, $pchecks checks on every node, $perr refused or failed"
[ "$herr" -eq 0 ] && [ "$plugs" -gt 0 ] && pass "$plugs CPU offline/online cycles" ||
	fail "$plugs CPU offline/online cycles, $herr refused"
[ "$cerr" -eq 0 ] && [ "$churns" -gt 0 ] && pass "$churns percpu churns of 128 objects" ||
	fail "$churns percpu churns, $cerr failed (-EIO: a wrong value read or written, see dmesg)"
if [ -n "$mem_policy" ]; then
	[ "$merr" -eq 0 ] && [ "$mems" -gt 0 ] &&
		pass "$mems memory hot-add/remove cycles," \
			"$touched blocks touched from every node" ||
		fail "$mems memory hot-add/remove cycles, $touched blocks touched, $merr failed"
	vmem_gone || fail "blocks left after the soak: $(vmem_added)"
	if pcpt_active; then
		n_after=$(pcpt_master_entries)
		kept=0
		[ "$mems" -gt 0 ] && kept=$(vmem_kept_entries)
		[ "$n_after" -eq $((n_before + kept)) ] &&
			pass "master entries back to $n_after ($kept KASAN shadow entry kept)" ||
			fail "master entries $n_before before the soak, $n_after after" \
				"(+$kept for KASAN's shadow)"
	fi
fi
incs=$((writes * per_write))
got=$(cat $PW/sum)
expect="static $incs dynamic $incs s8 $((incs % 256)) s16 $((incs % 65536))"
lost=0
if [ "$got" = "$expect" ] && [ "$writes" -gt 0 ] && [ "$moves" -gt 0 ]; then
	pass "$incs increments each, exact ($moves migrations)"
else
	fail "expected $expect, got $got ($moves migrations)"
	lost=1
fi

if pcpt_active; then
	pcpt_check "the soak"
	pcpt_loaded_ok "the soak"
elif ! grep -qw 'percpu_pgtable=off' /proc/cmdline; then
	fail "per-CPU tables inactive"
fi
if tr_active; then
	tr_verify "the soak"
elif ! why=$(tr_why_inactive); then
	fail "text replication inactive: $(sed -n 's/^reason: //p' "$TR_DEBUGFS/status")"
fi
tr_view "the soak, kernel text and rodata" image
tr_view "the soak, ktext_test_mod's text" "$(mod_text ktext_test_mod)" 1
# The observer tr_view loaded holds pages of the window too.
[ -d "$OBSERVE" ] && rmmod ktext_observe_mod
if [ -n "$win_before" ]; then
	if win_after=$(pcpw_window_pages); then
		pass "every window maps the $win_after populated percpu pages ($win_before before)"
	else
		fail "after the soak: $win_after"
		win_after=mismatch
	fi
fi
mw_after=$(mw_pages)
[ "$mw_after" = "$mw_before" ] && pass "module window back to '$mw_after'" ||
	fail "module window held '$mw_before' before, '$mw_after' after"
rmmod pcpw_test_mod || fail "rmmod pcpw_test_mod"
rmmod ktext_test_mod || fail "rmmod ktext_test_mod"
tbl_mis=$(sed -n 's/^mismatches: //p' "$PCPT_DEBUGFS/check" 2>/dev/null)
cmis=$(sed -n 's/^mismatches: //p' "$TR_DEBUGFS/verify" 2>/dev/null)
p0=$(echo "$mw_before" | awk '{ print $1 }')
p1=$(echo "$mw_after" | awk '{ print $1 }')
echo "# reads of /proc/self/stat per node:$reads"
echo "# soak: $took s, $loads module cycles, $toggles patching switches, $plugs hotplug cycles," \
	"$churns percpu churns, $mems memory hotplug cycles, $incs increments (lost: $lost)," \
	"$cps checkpoints," \
	"window pages ${win_before:-n/a} -> ${win_after:-n/a}," \
	"table mismatches ${tbl_mis:-n/a}, copy mismatches ${cmis:-n/a}," \
	"module window pages leaked $((${p1:-0} - ${p0:-0})), failed checks $pcpt_failures"
finish
