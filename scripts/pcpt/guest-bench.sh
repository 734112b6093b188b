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

# Per-CPU kernel page tables: memory per CPU (0 when the kernel has none).
st=/sys/kernel/debug/percpu_pgtable/status
if [ -r "$st" ] && grep -q '^active: yes' "$st"; then
	bytes=$(sed -n 's/^bytes: //p' "$st")
	tables=$(sed -n 's/^tables: //p' "$st")
	result pcpt_table_bytes_per_cpu $((bytes / tables)) B info
else
	result pcpt_table_bytes_per_cpu 0 B info
fi

# Memory: what the kernel keeps for itself after boot.
kb=$(awk '/MemTotal/ { t = $2 } /MemFree/ { f = $2 } END { print t - f }' /proc/meminfo)
result mem_used_after_boot "$kb" kB lower
