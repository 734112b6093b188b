#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The guest sees the NUMA topology QEMU was asked for: the expected
# number of online nodes, the expected CPU list on each node and memory
# on each node (none on the node pcpt.memless= names).  With maxcpus= the
# CPUs beyond it are offline at boot (ktext_late_cpus.sh brings them up):
# this test then runs first, so they are still offline.
DIR=$(dirname "$0")
. "$DIR/lib.sh"

nodes=$(cmdline_opt nodes "")
cpn=$(cmdline_opt cpus_per_node "")
mem=$(cmdline_opt node_mem "")
[ -n "$nodes" ] && [ -n "$cpn" ] && [ -n "$mem" ] ||
	skip "no pcpt.nodes/cpus_per_node/node_mem on the command line (not booted by scripts/pcpt/boot.sh)"

want_online="0"
[ "$nodes" -gt 1 ] && want_online="0-$((nodes - 1))"
got=$(cat /sys/devices/system/node/online)
[ "$got" = "$want_online" ] && pass "nodes online: $got" ||
	fail "nodes online: '$got', expected '$want_online'"

memless=$(cmdline_opt memless "")
maxcpus=$((nodes * cpn))
for w in $(cat /proc/cmdline); do
	case "$w" in
	maxcpus=*) [ "${w#*=}" -lt $maxcpus ] && maxcpus=${w#*=} ;;
	esac
done
want_cpus="0-$((maxcpus - 1))"
[ "$maxcpus" -eq 1 ] && want_cpus=0
got=$(cat /sys/devices/system/cpu/online)
[ "$got" = "$want_cpus" ] && pass "cpus online: $got" ||
	fail "cpus online: '$got', expected '$want_cpus'"

i=0
while [ $i -lt "$nodes" ]; do
	first=$((i * cpn))
	last=$((first + cpn - 1))
	[ $last -ge "$maxcpus" ] && last=$((maxcpus - 1))
	want="$first-$last"
	[ "$last" -eq "$first" ] && want="$first"
	[ "$last" -lt "$first" ] && want=
	f=/sys/devices/system/node/node$i/cpulist
	got=$(cat "$f" 2>/dev/null || echo missing)
	[ "$got" = "$want" ] && pass "node$i cpus: $got" ||
		fail "node$i cpus: '$got', expected '$want'"

	# MemTotal of the node, in kB; at least half of what QEMU gave it
	# (the kernel image, memmap and reservations take the rest).
	kb=$(awk '/MemTotal/ { print $4 }' /sys/devices/system/node/node$i/meminfo 2>/dev/null)
	kb=${kb:-0}
	if [ "$i" = "$memless" ]; then
		[ "$kb" -eq 0 ] && pass "node$i memory: none, as asked" ||
			fail "node$i memory: $kb kB, expected none (pcpt.memless=$i)"
	elif [ "$kb" -ge $((mem * 1024 / 2)) ] && [ "$kb" -le $((mem * 1024)) ]; then
		pass "node$i memory: $kb kB of $mem MiB"
	else
		fail "node$i memory: $kb kB, expected between half of and all of $mem MiB"
	fi
	i=$((i + 1))
done

finish
