#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Allocation failures injected with the kernel's fault injection
# (failslab, fail_page_alloc; Documentation/fault-injection/) into module
# loads and percpu allocations: pcpt_failnth makes the Nth slab or page
# allocation of one finit_module(2), or of one write(2) that churns
# percpu memory, fail, once.  N sweeps from 1 up, each step at most an
# eighth of N (pcpt.faults_div=8; 0 skips the test), until the call no
# longer reaches the Nth allocation: every phase of the call gets a
# failure, the module window's and percpu's included.
#
# A module load must fail cleanly (not loaded, the module window as
# before) or load with every CPU reading the master's bytes of its text
# (ktext_observe_mod, through each CPU's own table) and copies that
# match (verify).  A load whose node copy failed is unreplicated, or has
# pages left on the master's, with the kernel's warning; both must
# happen in the sweep, and a refused load too.  After each unload the
# module window holds the pages and node copies it held before.  A
# percpu churn must succeed or fail with -ENOMEM, never read a wrong
# value (-EIO); every CPU's window must then map exactly the populated
# percpu pages, right after the sweep (before a later populate could
# overwrite a stale entry).  Then, at 4K pages, only the window's own
# table allocations fail (the stack filter), in churns that need new
# window tables: each must end with -ENOMEM and, after the first few
# and at the end, every window map exactly the populated pages.  A clean
# churn must then work on every CPU.
# Every table matches the master at the end.
DIR=$(dirname "$0")
. "$DIR/lib.sh"

debugfs_mount
F=/sys/kernel/debug
FN="$DIR/pcpt_failnth"
div=$(cmdline_opt faults_div 8)
case "$div" in
''|*[!0-9]*) fail "pcpt.faults_div='$div': a number expected (0: skip)"; finish ;;
0) skip "pcpt.faults_div=0" ;;
esac
for a in failslab fail_page_alloc; do
	[ -d "$F/$a" ] ||
		skip "no $F/$a: CONFIG_FAULT_INJECTION_DEBUG_FS," \
			"FAILSLAB and FAIL_PAGE_ALLOC (pcpt.config)"
done
[ -x "$FN" ] || { fail "$FN not built"; finish; }
big=ktext_big0
for m in $big pcpw_test_mod; do
	[ -f "$DIR/test_modules/$m.ko" ] || { fail "$m.ko not built"; finish; }
	grep -q "^$m " /proc/modules && rmmod $m
done

# GFP_KERNEL allocations, single pages and highmem-capable ones (percpu
# and vmalloc pages ask for __GFP_HIGHMEM) may fail too; nothing printed
# (a stack per failure would bury the log).  The kernel's defaults back
# at the end.
for a in failslab fail_page_alloc; do
	echo N > "$F/$a/ignore-gfp-wait"
	echo 0 > "$F/$a/verbose"
done
echo 0 > "$F/fail_page_alloc/min-order"
echo N > "$F/fail_page_alloc/ignore-gfp-highmem"
# confine START END [RSTART REND]: only allocations with a caller in
# [START, END) and none in [RSTART, REND) count, for every kind of fault
# fail-nth counts (CONFIG_FAULT_INJECTION_STACKTRACE_FILTER); unconfine:
# any caller.
confine()
{
	for d in "$F"/fail*/; do
		[ -f "$d/require-start" ] || continue
		echo "$1" > "$d/require-start"
		echo "$2" > "$d/require-end"
		echo "${3:-0}" > "$d/reject-start"
		echo "${4:-0}" > "$d/reject-end"
	done
}
unconfine()
{
	confine 0 0xffffffffffffffff
}
restore()
{
	for a in failslab fail_page_alloc; do
		echo Y > "$F/$a/ignore-gfp-wait"
		echo 2 > "$F/$a/verbose"
	done
	echo 1 > "$F/fail_page_alloc/min-order"
	echo Y > "$F/fail_page_alloc/ignore-gfp-highmem"
	unconfine
	# Objects the window phase held, if it was cut short.
	[ -w "$PW/hold" ] && echo 0 > "$PW/hold"
	# Each failure fail-nth forced took one of these.
	for a in failslab fail_page_alloc; do
		echo 1 > "$F/$a/times"
	done
	echo "PCPT-INJECT-END pcpt_faults" > /dev/kmsg
}
PW=/sys/kernel/debug/pcpw_test
# A timeout's SIGTERM (or ^C) runs the EXIT trap through exit.
trap 'restore' EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
# The kernel reports failed allocations with a stack: expected from here
# (for a console judge).
echo "PCPT-INJECT-BEGIN pcpt_faults" > /dev/kmsg

next_pos()
{
	step=$(($1 / div))
	[ $step -ge 1 ] || step=1
	echo $(($1 + step))
}

# since MARK: the kernel log after the line MARK wrote to /dev/kmsg.
since()
{
	dmesg | sed -n "/$1\$/,\$p"
}

replicated=0
tr_active && tr_modules && replicated=1
observe_load || finish
mw0=$(mw_pages)
n=1 loaded=0 refused=0 unrepl=0 partial=0 mod_bad=0 calls=0
while :; do
	echo "pcpt-faults: module at $n" > /dev/kmsg
	set -- $("$FN" "$n" module "$DIR/test_modules/$big.ko")
	fired=$2 err=$4
	[ -n "$err" ] || { fail "pcpt_failnth $n module: no result"; break; }
	b=$pcpt_failures
	if [ "$err" != 0 ]; then
		refused=$((refused + 1))
		[ "$fired" = 1 ] ||
			fail "at $n: finit_module failed (errno $err), no fault injected"
		[ "$err" = 12 ] ||
			fail "at $n: finit_module failed with errno $err, not ENOMEM (12)"
		grep -q "^$big " /proc/modules &&
			{ fail "at $n: finit_module failed, yet $big is loaded"; rmmod $big; }
	else
		loaded=$((loaded + 1))
		log=$(since "pcpt-faults: module at $n")
		echo "$log" | grep -q "$big is not replicated" && unrepl=$((unrepl + 1))
		echo "$log" | grep -q "$big: [0-9]* pages could not be copied" &&
			partial=$((partial + 1))
		tr_view "fault at $n: $big's text" "$(mod_text $big)"
		[ $replicated -eq 1 ] && tr_verify "fault at $n"
		rmmod $big || fail "at $n: rmmod $big"
	fi
	mw=$(mw_pages)
	[ "$mw" = "$mw0" ] || fail "at $n: module window '$mw0' before, '$mw' after"
	[ $pcpt_failures -eq $b ] || mod_bad=$((mod_bad + 1))
	calls=$((calls + 1))
	[ "$fired" = 1 ] || break
	n=$(next_pos $n)
done
[ "$fired" = 0 ] &&
	pass "$calls loads of $big, a failure at allocation 1 to $((n - 1))," \
		"then none at $n (past the load's last)"
[ $mod_bad -eq 0 ] &&
	pass "$loaded loaded ($unrepl unreplicated, $partial with pages left on the master's)," \
		"$refused refused with ENOMEM; module window back to '$mw0' after each"
[ $refused -gt 0 ] || fail "no load refused: no failure reached the module loader"
# With N doubling (pcpt.faults_div=1, the debug boot) whether a step
# lands in the node copies depends on the module's size: required with
# steps of at most N/4.
if [ $replicated -eq 1 ] && [ "$div" -ge 4 ] &&
	{ [ $unrepl -eq 0 ] || [ $partial -eq 0 ]; }; then
	fail "$unrepl unreplicated, $partial partly replicated loads:" \
		"a failure did not reach each replica allocation"
fi

# Percpu: a churn of 128 objects, on the CPUs in turn.
insmod "$DIR/test_modules/pcpw_test_mod.ko" || { fail "insmod pcpw_test_mod"; finish; }
cpus=$(cpulist_expand "$(cat /sys/devices/system/cpu/online)")
ncpus=$(echo $cpus | wc -w)
n=1 ok=0 nomem=0 calls=0 miss=0 held=0
while :; do
	c=$(echo $cpus | cut -d' ' -f$((calls % ncpus + 1)))
	set -- $(taskset -c "$c" "$FN" "$n" write "$PW/churn" 128)
	fired=$2 err=$4
	case "$err" in
	0) ok=$((ok + 1)) ;;
	12) nomem=$((nomem + 1)) ;;
	*) fail "at $n on cpu$c: churn errno '$err'" \
		"(5: a wrong value read or written, see dmesg)" ;;
	esac
	calls=$((calls + 1))
	if [ "$fired" = 1 ]; then
		miss=0
		n=$(next_pos $n)
		continue
	fi
	# No allocation at all: populated free space held the whole churn
	# (at 64K pages a few pages hold its 512 KiB).  Hold objects until
	# a churn has to populate pages.
	if [ $n -eq 1 ] && [ $held -lt 4096 ]; then
		echo 256 > "$PW/hold" ||
			{ fail "holding 256 more percpu objects for the sweep"; break; }
		held=$((held + 256))
		continue
	fi
	miss=$((miss + 1))
	[ $miss -lt 2 ] || break
done
# Unconditionally: a hold that failed with -ENOMEM keeps what it got.
echo 0 > "$PW/hold" || fail "freeing the objects held for the sweep"
# How many allocations a churn makes depends on what the balance work
# left populated (a chunk to create, window tables to allocate, or
# neither): the sweep ends when two churns in a row, at the same N,
# make fewer than N.
[ "$fired" = 0 ] &&
	pass "$calls churns ($held objects held), a failure at allocation 1 to $((n - 1))," \
		"then two churns with fewer than $n: $ok done, $nomem -ENOMEM"
[ $nomem -gt 0 ] || fail "no churn failed with -ENOMEM: no failure reached percpu"
if pcpw_window_countable; then
	if win=$(pcpw_window_pages); then
		pass "after the sweep: every window maps the $win populated percpu pages"
	else
		fail "after the sweep: $win"
	fi
fi
# text_range SYM...: "START END" from the first to the end of the last
# of the kernel functions SYM that exist (a static one may be inlined):
# END is the address of the next symbol.
text_range()
{
	grep -v ']$' /proc/kallsyms | sort | awk -v syms=" $* " '
	index(syms, " " $3 " ") { if (start == "") start = $1; last = $1; want = 1; next }
	want && $1 > last { end = $1; want = 0 }
	END { if (start != "" && end != "") print "0x" start, "0x" end }'
}

# Window tables.  The sweep above fails a window table allocation only
# when a churn happens to populate a chunk where no window has a table
# yet.  Here only allocations called from pcpu_window_map() count (the
# stack filter; KASAN's stack depot excepted), and churns of 512 objects
# run on top of objects held (512 to begin with), 512 more each time a
# churn needed no new table, so that their chunks lie where no chunk has
# been, below what lazily freed vmap areas keep out of reuse: window
# table allocation N fails, for N = 1, 2, 4, 8 (held until each is
# reached), then 16, 32, ... until a churn needs fewer.  Past the first
# few N the failure is in a window after others were mapped.  Each churn
# must fail with -ENOMEM and, up to N = 8 (a count costs seconds;
# pcpw_set_pte() warns at any N about an entry a failed map left
# behind), every window must then map exactly the populated pages:
# pcpu_map_pages() unmapped the windows it had mapped.
# The held objects (at most 8192 of 4 KiB, 32 MiB per CPU) must cover
# several PTE tables of the window: 2 MiB each at 4K pages, but 32 MiB
# at 16K and 512 MiB at 64K, so this phase runs at 4K pages only.
win_range=
page_kib=$(awk '/^KernelPageSize:/ { print $2; exit }' /proc/self/smaps)
if [ -z "$page_kib" ]; then
	fail "window tables: no KernelPageSize in /proc/self/smaps"
elif ! pcpt_active || ! grep -q '^client this_cpu_window:' "$PCPT_DEBUGFS/status"; then
	echo "# window tables: not run: no per-CPU tables or no this_cpu window here"
elif ! have_ptdump; then
	echo "# window tables: not run: $NO_PTDUMP"
elif [ "$page_kib" != 4 ]; then
	echo "# window tables: not run: a PTE table of the window spans" \
		"$((page_kib * page_kib / 8)) MiB at ${page_kib}K pages," \
		"at least all the 32 MiB per CPU pcpw_test_mod can hold"
else
	if [ ! -f "$F/fail_page_alloc/require-start" ]; then
		fail "no $F/fail_page_alloc/require-start:" \
			"CONFIG_FAULT_INJECTION_STACKTRACE_FILTER (pcpt.config)"
	else
		win_range=$(text_range pcpu_window_map)
		[ -n "$win_range" ] || fail "no pcpu_window_map in /proc/kallsyms"
	fi
fi
if [ -n "$win_range" ]; then
	b=$pcpt_failures
	confine $win_range $(text_range stack_depot_save_flags)
	n=1 nomem=0 calls=0 held=512 t0=$(date +%s)
	echo $held > "$PW/hold" || { fail "window tables: holding $held percpu objects"; held=0; }
	while [ $held -gt 0 ]; do
		c=$(echo $cpus | cut -d' ' -f$((calls % ncpus + 1)))
		set -- $(taskset -c "$c" "$FN" "$n" write "$PW/churn" 512)
		fired=$2 err=$4
		calls=$((calls + 1))
		echo "# window tables: churn on cpu$c, $held held, allocation $n:" \
			"fired '$fired' errno '$err' ($(($(date +%s) - t0)) s)"
		[ -n "$err" ] ||
			{ fail "window tables: pcpt_failnth $n write churn: no result"; break; }
		if [ "$fired" != 1 ]; then
			[ "$err" = 0 ] ||
				{ fail "window tables: the churn at $n on cpu$c" \
					"ended with errno '$err', no failure injected"; break; }
			[ $n -gt 8 ] && break
			if [ $held -ge 8192 ]; then
				fail "window tables: with $held objects held, a churn of 512" \
					"made fewer than $n window table allocations"
				break
			fi
			echo 512 > "$PW/hold" || { fail "window tables: holding 512 percpu" \
				"objects after $held"; break; }
			held=$((held + 512))
			continue
		fi
		if [ "$err" = 12 ]; then
			nomem=$((nomem + 1))
		else
			fail "window table allocation $n failed on cpu$c," \
				"yet the churn ended with errno '$err', not ENOMEM (12)"
		fi
		if [ $n -le 8 ]; then
			win=$(pcpw_window_pages) ||
				fail "window table allocation $n failed on cpu$c: $win"
		fi
		n=$((n * 2))
	done
	unconfine
	echo 0 > "$PW/hold" || fail "window tables: freeing the $held objects held"
	win=$(pcpw_window_pages) || fail "window tables, after the churns: $win"
	[ $pcpt_failures -eq $b ] &&
		pass "window tables: $nomem churns on top of $held objects held" \
			"failed with -ENOMEM at table allocation 1 to $((n / 2))," \
			"every window mapping the populated pages after those up to 8" \
			"and at the end; the churn at $n needed fewer"
fi
# pcpw_counter.sh counts the windows after clean churns.
for c in $cpus; do
	taskset -c "$c" sh -c "echo 128 > $PW/churn" || fail "cpu$c: churn after the sweep"
done
rmmod pcpw_test_mod || fail "rmmod pcpw_test_mod"
pcpt_active && pcpt_check "the injected failures"
finish
