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
