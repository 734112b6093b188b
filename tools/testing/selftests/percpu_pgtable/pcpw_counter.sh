#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# this_cpu ops under migration and CPU hotplug: writer threads make the
# helper module increment a static (module, reserved chunk) and a dynamic
# percpu counter with this_cpu_inc()/this_cpu_add() while a migrator moves
# them across every CPU with sched_setaffinity (taskset) and CPUs go
# offline and online.  The sums over all CPUs must equal the number of
# increments exactly: an op that reached another CPU's copy without being
# atomic against it, or was lost across a migration, shows up here.  The
# s8 and s16 counters are incremented with this_cpu_try_cmpxchg() and
# wrap through -1, where a sub-word compare that sees stray upper bits
# loses updates.  Then a writer pinned to each CPU in turn: its
# increments must land in that CPU's copies (per_cpu_ptr()) and nowhere
# else, which a total cannot tell.  Last, percpu chunks are added and
# emptied on every CPU, and every CPU's window must map exactly the
# populated percpu pages.
DIR=$(dirname "$0")
. "$DIR/lib.sh"

mod=pcpw_test_mod
ko="$DIR/test_modules/$mod.ko"
debugfs_mount
[ -f "$ko" ] || { fail "$ko not built"; finish; }
grep -q "^$mod " /proc/modules && rmmod $mod
insmod "$ko" || { fail "insmod $mod"; finish; }
D=/sys/kernel/debug/pcpw_test

threads=$(cmdline_opt pcpw_threads 4)
secs=$(cmdline_opt pcpw_seconds 6)
per_write=$(cmdline_opt pcpw_per_write 2000)
cpus=$(cpulist_expand "$(cat /sys/devices/system/cpu/online)")
ncpus=$(echo "$cpus" | wc -w)
stop=/tmp/pcpw.stop.$$
rm -f "$stop"

# Each writer counts its writes; each write is $per_write increments.
pids=""
for t in $(seq "$threads"); do
	(
		w=0
		while [ ! -e "$stop" ]; do
			echo "$per_write" > $D/inc
			w=$((w + 1))
		done
		echo "$w" > "$stop.$t"
	) &
	pids="$pids $!"
done

# Walk the CPU list with a stride that differs per writer, so writers
# keep meeting on and leaving every CPU; unplug a CPU every eight rounds.
moves=0 plugs=0 n=0
end=$(($(date +%s) + secs))
while [ "$(date +%s)" -lt "$end" ]; do
	for round in 1 2 3 4 5 6 7 8; do
		k=0
		for p in $pids; do
			k=$((k + 1))
			n=$((n + 1))
			c=$(echo "$cpus" | cut -d' ' -f$(((n * (2 * k - 1)) % ncpus + 1)))
			taskset -p "$(printf %x $((1 << c)))" "$p" >/dev/null 2>&1 &&
				moves=$((moves + 1))
		done
	done
	c=$(echo "$cpus" | cut -d' ' -f$((n % ncpus + 1)))
	f=/sys/devices/system/cpu/cpu$c/online
	if [ -w "$f" ]; then
		echo 0 > "$f" 2>/dev/null && plugs=$((plugs + 1))
		echo 1 > "$f"
	fi
done
touch "$stop"
wait

writes=0
for t in $(seq "$threads"); do
	writes=$((writes + $(cat "$stop.$t")))
done
rm -f "$stop" "$stop".*
want=$((writes * per_write))
expect="static $want dynamic $want s8 $((want % 256)) s16 $((want % 65536))"
got=$(cat $D/sum)
if [ "$got" = "$expect" ]; then
	pass "$want increments each, exact ($moves migrations, $plugs CPU offlines)"
else
	fail "expected $expect, got $got ($moves migrations, $plugs CPU offlines)"
fi
# Without migrations and unplugs this proves nothing.
if [ "$moves" -eq 0 ] || [ "$plugs" -eq 0 ] || [ "$writes" -eq 0 ]; then
	fail "only $moves migrations, $plugs CPU offlines, $writes writes"
fi
for c in $cpus; do
	f=/sys/devices/system/cpu/cpu$c/online
	[ -w "$f" ] && [ "$(cat "$f")" = 0 ] && echo 1 > "$f"
done

# Pinned: N increments from CPU c change c's copies by N, no other's.
n=1000
bad=0
for c in $cpus; do
	cat $D/cpus > /tmp/pcpw.before.$$
	taskset "$(printf %x $((1 << c)))" sh -c "echo $n > $D/inc" ||
		{ fail "cpu$c: pinned write failed"; bad=$((bad + 1)); continue; }
	cat $D/cpus > /tmp/pcpw.after.$$
	r=$(awk -v c="cpu$c" -v n=$n '
		NR == FNR { for (i = 3; i <= 9; i += 2) b[$1, i] = $i; next }
		{
			for (i = 3; i <= 9; i += 2) {
				d = $i - b[$1, i]
				w = ($1 == c) ? n : 0
				if (i == 7) { d = (d + 256) % 256; w %= 256 }
				if (i == 9) { d = (d + 65536) % 65536; w %= 65536 }
				if (d != w) {
					print $1 " " $(i - 1) " +" d " (expected +" w ")"
					exit
				}
			}
		}' /tmp/pcpw.before.$$ /tmp/pcpw.after.$$)
	if [ -n "$r" ]; then
		fail "cpu$c: $n pinned increments, but $r"
		bad=$((bad + 1))
	fi
done
rm -f /tmp/pcpw.before.$$ /tmp/pcpw.after.$$
[ $bad -eq 0 ] && pass "pinned to each of $ncpus CPUs, $n increments landed in its own copies only"

# Chunks added and emptied on every CPU: then every window maps exactly
# the populated percpu pages.
churns=0
for c in $cpus; do
	taskset "$(printf %x $((1 << c)))" sh -c "echo 128 > $D/churn" ||
		fail "cpu$c: percpu churn of 128 objects failed (-EIO: a wrong value, see dmesg)"
	churns=$((churns + 1))
done
if pcpw_window_countable; then
	if win=$(pcpw_window_pages); then
		pass "after $churns percpu churns, every window maps" \
			"the $win populated percpu pages"
	else
		fail "after $churns percpu churns: $win"
	fi
else
	echo "# windows not counted: no per-CPU tables, window client or table dumps here"
fi
rmmod $mod || fail "rmmod $mod"
finish
