#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# In-guest benchmarks, run by /init in pcpt.mode=bench.  Each result is
# one console line:
#
#   PCPT-BENCH <name> <value> <unit> <lower|higher>
#
# where the last word says which direction is better.  Under TCG the
# timings are indicative only; scripts/pcpt/bench.sh compares base and
# patched kernels booted in the same run.
export PATH=/bin:/sbin:/usr/bin:/usr/sbin

result()
{
	echo "PCPT-BENCH $1 $2 $3 $4"
}

ncpus=$(grep -c '^processor' /proc/cpuinfo)

# Fetch locality boot (pcpt.bench_fetch=1, with the QEMU TCG plugin
# tools/pcpt-bench/ktext_fetch_plugin.c counting kernel instruction
# fetches by node): only a workload, bracketed by two sync(2) calls that
# start and stop the plugin's count.  Every CPU reads a proc file in a
# loop, which runs the syscall, VFS and procfs paths, and runs the 256 KiB
# of text of a module loaded beforehand on CPU 0 (ktext_big0, "run"
# parameter) five times: module fetches, of a module loaded on one node
# and used by all, as modules loaded at boot are.
if grep -q 'pcpt.bench_fetch=1' /proc/cmdline; then
	kind=base
	[ -d /sys/kernel/debug/percpu_pgtable ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
	[ -d /sys/kernel/debug/percpu_pgtable ] && kind=patched
	run=/sys/module/ktext_big0/parameters/run
	taskset -c 0 insmod /bench/$kind/ktext_big0.ko 2>/dev/null || run=
	sync
	cpu=0
	while [ $cpu -lt "$ncpus" ]; do
		taskset -c $cpu sh -c 'i=0; while [ $i -lt 3000 ]; do read -r x < /proc/self/stat; i=$((i + 1)); done' &
		[ -n "$run" ] && taskset -c $cpu sh -c "for i in 1 2 3 4 5; do echo 1 > $run; done" &
		cpu=$((cpu + 1))
	done
	wait
	sync
	[ -n "$run" ] && rmmod ktext_big0
	result fetch_workload_cpus "$ncpus" cpus info
	exit 0
fi

# The this_cpu window's page tables of one CPU, in bytes: every table
# below the window's top-level entry, from cpu0's dump (what the tables
# hold, not the window's bookkeeping).  ptdump reports every entry of a
# table that exists, empty ones as gap lines at that table's level, so a
# line at level L shows a table of level L and one of each level above it
# up to the entry.  Window tables are never freed: an emptied one still
# shows.  Every CPU maps its unit of every chunk at the same place, so
# each has as many.  Not counted: the window's mm_struct and its PGD,
# which holds only the entry the root copies.  Nothing without the
# window, or without ptdump (the dump is then the root's entries only).
window_table_bytes()
{
	st=/sys/kernel/debug/percpu_pgtable/status
	dump=/sys/kernel/debug/percpu_pgtable/tables/cpu0
	kib=$(awk '/^KernelPageSize:/ { print $2; exit }' /proc/self/smaps 2>/dev/null)
	range=$(sed -n 's/^client this_cpu_window: \(0x[0-9a-f]*\)-\(0x[0-9a-f]*\)$/\1 \2/p' "$st" 2>/dev/null)
	[ -n "$kib" ] && [ -n "$range" ] && [ -r "$dump" ] || return 0
	# Addresses are 0x and 16 hex digits: they compare as strings, and
	# their low 12 digits (48 bits) are exact in awk's doubles.
	awk -v range="$range" -v page=$((kib * 1024)) '
	function low(a,   i, v) {
		v = 0
		for (i = 7; i <= 18; i++)
			v = v * 16 + index("0123456789abcdef", substr(a, i, 1)) - 1
		return v
	}
	BEGIN {
		split(range, r, " ")
		wlo = r[1]; whi = r[2]
		size = low(whi) - low(wlo)
		if (size <= 0)
			size += 2 ^ 48
		# What a table of each level spans (8-byte entries).
		fan = page / 8
		span["PTE"] = page * fan
		span["PMD"] = span["PTE"] * fan
		span["PUD"] = span["PMD"] * fan
		span["P4D"] = span["PUD"] * fan
	}
	/^0x/ && ($3 in span) {
		start = substr($1, 1, 18); end = substr($1, 20, 18)
		if (start < wlo || start >= whi)
			next
		s = low(start) - low(wlo); e = low(end) - low(wlo)
		if (s < 0)
			s += 2 ^ 48
		if (e <= 0 || e > size)
			e = size
		for (sp = span[$3] < size ? span[$3] : size; ; sp *= fan) {
			if (sp > size)
				sp = size
			for (b = int(s / sp); b <= int((e - 1) / sp); b++)
				seen[sp " " b] = 1
			if (sp == size)
				break
		}
	}
	END {
		n = 0
		for (k in seen)
			n++
		if (n)
			print n * page
	}' "$dump"
}

# Memory each node uses, the text replica's copy, the per-CPU roots,
# kernel page tables made with a constructor (the window's, the module
# window's node copies) and what the kernel keeps for itself.
memory()
{
	for n in /sys/devices/system/node/node[0-9]*; do
		kb=$(awk '/MemUsed/ { print $4 }' "$n/meminfo")
		result "mem_used_${n##*/}" "$kb" kB lower
	done
	tr=/sys/kernel/debug/kernel_replication/status
	if [ -r $tr ] && grep -q '^active: yes' $tr; then
		result ktext_copy_bytes "$(sed -n 's/^size: //p' $tr)" B info
		# The tables the replica copied for the nodes with a copy of
		# their own (text, rodata, the module window; not the nodes'
		# PGDs): PageTables holds the PTE tables copied with a
		# constructor among them, not the others.
		kib=$(awk '/^KernelPageSize:/ { print $2; exit }' /proc/self/smaps 2>/dev/null)
		pages=$(sed -n 's/^table pages: //p' $tr)
		[ -z "$kib" ] || [ -z "$pages" ] ||
			result ktext_table_bytes $((pages * kib * 1024)) B info
	else
		result ktext_copy_bytes 0 B info
		result ktext_table_bytes 0 B info
	fi

	# Per-CPU kernel page tables: memory per CPU (0 when the kernel has none).
	st=/sys/kernel/debug/percpu_pgtable/status
	if [ -r "$st" ] && grep -q '^active: yes' "$st"; then
		bytes=$(sed -n 's/^bytes: //p' "$st")
		tables=$(sed -n 's/^tables: //p' "$st")
		result pcpt_table_bytes_per_cpu $((bytes / tables)) B info
	else
		result pcpt_table_bytes_per_cpu 0 B info
	fi
	# Base has no window (0, as the timing part compares every figure
	# with base); a patched kernel without ptdump reports none.
	if [ -r "$st" ]; then
		bytes=$(window_table_bytes)
	else
		bytes=0
	fi
	[ -z "$bytes" ] || result pcpw_table_bytes_per_cpu "$bytes" B info

	# Memory: what the kernel keeps for itself after boot.
	kb=$(awk '/MemTotal/ { t = $2 } /MemFree/ { f = $2 } END { print t - f }' /proc/meminfo)
	result mem_used_after_boot "$kb" kB lower
	kb=$(awk '/^PageTables:/ { print $2 }' /proc/meminfo)
	result page_tables "$kb" kB info
	# MemTotal leaves out what memblock reserved (the text copies): the
	# same RAM free in base and patched compares all of it.
	kb=$(awk '/^MemFree:/ { print $2 }' /proc/meminfo)
	result mem_free "$kb" kB higher
}

# Path-length boot (pcpt.bench_pathlen=1, with the QEMU TCG plugin
# tools/pcpt-bench/pathlen_plugin.c counting instructions per vCPU and
# snapshotting them at every getcpu(2)): only the loops of
# tools/pcpt-bench/pathlen.c, on CPU 1 (the pipe's other end on the
# last CPU), while the other CPUs idle.
if grep -q 'pcpt.bench_pathlen=1' /proc/cmdline; then
	kind=base
	mount -t debugfs none /sys/kernel/debug 2>/dev/null
	mount -t tracefs none /sys/kernel/tracing 2>/dev/null
	[ -d /sys/kernel/debug/percpu_pgtable ] && kind=patched
	# pcpt.bench_ops=A,B: only those operations (the scaling boots).
	ops=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^pcpt.bench_ops=//p' | tr ',' ' ')
	# shellcheck disable=SC2086 # one word per operation
	/bench/pathlen 1 $((ncpus - 1)) /bench/$kind/ktext_big0.ko /bench/$kind/pcpt_bench_mod.ko $ops ||
		echo "PCPT-BENCH-ERROR pathlen failed"
	# After the workload's last mark: the window offset's MOVZ, as the
	# plugin's count of window ops needs it.
	if insmod /bench/$kind/this_cpu_probe.ko 2>/dev/null; then
		sed 's/^/PCPT-PROBE /' /sys/kernel/debug/this_cpu_probe_text
		rmmod this_cpu_probe
	fi
	# After the last mark too, so that it costs no phase anything.
	memory
	exit 0
fi

# Boot: guest time from kernel start to this script.
result boot_to_userspace "$(cut -d' ' -f1 /proc/uptime)" s lower

# Context switches: perf bench sched pipe (two tasks ping-pong a pipe).
# TTBR1 does not change on context switch, so per-CPU tables must not
# slow this down.
loops=${PCPT_PIPE_LOOPS:-20000}
out=$(/bench/perf bench sched pipe -l "$loops" 2>&1)
usecs=$(echo "$out" | awk '/usecs\/op/ { print $1 }')
if [ -n "$usecs" ]; then
	result sched_pipe_usecs_per_op "$usecs" us/op lower
else
	echo "PCPT-BENCH-ERROR perf bench sched pipe: $out"
fi

# vmalloc()+vfree() of a page in an empty top-level slot, whose root
# entry the per-CPU tables copy to every CPU (tools/pcpt-bench/), and
# again in the same slots for reference.  Medians over the iterations.
# The helper module is built against each kernel: only the patched one
# has percpu_pgtable in debugfs.  It also times loops of this_cpu ops.
kind=base
[ -d /sys/kernel/debug/percpu_pgtable ] && kind=patched
if [ -f /bench/$kind/pcpt_bench_mod.ko ]; then
	insmod /bench/$kind/pcpt_bench_mod.ko iters="${PCPT_VMALLOC_ITERS:-64}" 2>/dev/null
	for m in this_cpu_inc_ns this_cpu_read_ns \
		 vmalloc_vfree_new_top_entry_ns vmalloc_vfree_same_top_entry_ns; do
		v=$(dmesg | sed -n "s/.*pcpt_bench_mod: $m //p" | tail -1)
		if [ -n "$v" ]; then
			result "$m" "$v" ns lower
		else
			echo "PCPT-BENCH-ERROR $m: $(dmesg | grep pcpt_bench_mod | tail -1)"
		fi
	done
fi

# The this_cpu probe functions as this kernel executes them, after
# alternatives (tools/pcpt-bench/this_cpu_probe.c): the bench counts
# their instructions.
if insmod /bench/$kind/this_cpu_probe.ko 2>/dev/null; then
	sed 's/^/PCPT-PROBE /' /sys/kernel/debug/this_cpu_probe_text
	rmmod this_cpu_probe
else
	echo "PCPT-BENCH-ERROR insmod this_cpu_probe.ko"
fi

# Module load + unload of a module with 256 KiB of text (its init
# runs all of it), average of 20; the text replica must not slow this.
if [ -f /bench/$kind/ktext_big0.ko ]; then
	t0=$(cut -d' ' -f1 /proc/uptime)
	i=0
	while [ $i -lt 20 ]; do
		insmod /bench/$kind/ktext_big0.ko && rmmod ktext_big0
		i=$((i + 1))
	done
	t1=$(cut -d' ' -f1 /proc/uptime)
	result module_load_unload_ms "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) * 1000 / 20 }')" ms lower
fi

# Text patching: a static key switched on and off (the sched_switch
# tracepoint: one jump label site per use, every copy written with the
# text replica), average of 20 on/off pairs.
T=/sys/kernel/tracing
[ -d $T/events ] || mount -t tracefs none $T 2>/dev/null
if [ -w $T/events/sched/sched_switch/enable ]; then
	t0=$(cut -d' ' -f1 /proc/uptime)
	i=0
	while [ $i -lt 20 ]; do
		echo 1 > $T/events/sched/sched_switch/enable
		echo 0 > $T/events/sched/sched_switch/enable
		i=$((i + 1))
	done
	t1=$(cut -d' ' -f1 /proc/uptime)
	result static_key_toggle_us "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", (b - a) * 1e6 / 20 }')" us lower
fi

memory
