#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# How often the function tracer step misses a CPU, per kernel: boot, in
# turn, the unpatched base kernel and the patched one as it boots by
# default, with percpu_pgtable=off and with kernel_replication=off, RUNS
# times each, and run ktext_ftrace_probe.sh (ROUNDS rounds per boot) in
# each boot.  Prints one line per boot and a table of the miss counts;
# exits 1 if a boot did not report (hang, crash).  CMDLINE is added to
# every boot (pcpt.ftrace_sleep=0, for example); KINDS picks kernels of
# the four (default: all).
#
# Usage: ftrace-rate.sh BASE_IMAGE IMAGE INITRD LOGDIR RUNS ROUNDS
# Environment: what boot.sh takes (NODES, CPUS_PER_NODE, CPU, ...).
set -uo pipefail

[ $# -eq 6 ] || { echo "usage: ftrace-rate.sh BASE_IMAGE IMAGE INITRD LOGDIR RUNS ROUNDS" >&2; exit 2; }
base=$1 image=$2 initrd=$3 logdir=$4 runs=$5 rounds=$6
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$logdir"

all="base default percpu_pgtable=off kernel_replication=off"
kinds=${KINDS:-$all}
for k in $kinds; do
	case " $all " in
	*" $k "*) ;;
	*) echo "ftrace-rate.sh: KINDS has '$k'; accepted: $all" >&2; exit 2 ;;
	esac
done
declare -A boots missed_rounds missed_boots merged_rounds merged_boots
for k in $kinds; do
	boots[$k]=0 missed_rounds[$k]=0 missed_boots[$k]=0
	merged_rounds[$k]=0 merged_boots[$k]=0
done
common="kunit.enable=0 pcpt.only=ktext_ftrace_probe pcpt.extra=ktext_ftrace_probe.sh"
common+=" pcpt.ftrace_rounds=$rounds"
bad=0
for ((i = 1; i <= runs; i++)); do
	for k in $kinds; do
		# No second ftrace_ops (pcpt.ftrace_count): the same call
		# site state on every kernel.
		img=$image extra=
		case $k in
		base) img=$base ;;
		default) ;;
		*) extra=$k ;;
		esac
		log=$logdir/ftrace-rate-${k%%=*}-$i.log
		CMDLINE="${CMDLINE:-} $common $extra" MODE=check QUIET=1 TIMEOUT=${TIMEOUT:-600} \
			bash "$here/boot.sh" "$img" "$initrd" "$log" >/dev/null 2>&1
		res=$(sed -n 's/.*PCPT-FTRACE-PROBE: \([0-9]*\) of \([0-9]*\) rounds missed a CPU, merged trace \([0-9]*\).*/\1 \2 \3/p' "$log")
		if [ -z "$res" ]; then
			echo "pcpt: $k boot $i did not report (log: $log)"
			bad=1
			continue
		fi
		set -- $res
		boots[$k]=$((${boots[$k]} + 1))
		missed_rounds[$k]=$((${missed_rounds[$k]} + $1))
		[ "$1" -gt 0 ] && missed_boots[$k]=$((${missed_boots[$k]} + 1))
		merged_rounds[$k]=$((${merged_rounds[$k]} + $3))
		[ "$3" -gt 0 ] && merged_boots[$k]=$((${merged_boots[$k]} + 1))
		echo "pcpt: $k boot $i: $1 of $2 rounds missed a CPU in its own buffer, $3 in the merged trace"
		grep -E 'MISSING|MERGED' "$log" | sed 's/^/    /' | head -3
	done
done
echo "CPUs missing from their own ring buffer / from the merged trace file:"
printf '%-24s %6s %20s %20s\n' kernel boots "boots (own/merged)" "rounds (own/merged)"
for k in $kinds; do
	printf '%-24s %6d %20s %20s\n' "$k" "${boots[$k]}" \
		"${missed_boots[$k]}/${merged_boots[$k]}" \
		"${missed_rounds[$k]}/${merged_rounds[$k]} of $((${boots[$k]} * rounds))"
done
exit $bad
