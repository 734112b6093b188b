#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Load stress: on one CPU of every node at once, insmod and rmmod a
# large-text module (each node its own, ktext_big0..7), in total
# pcpt.ktext_modload_iters times (default 1000).  Module text and rodata
# are replicated per node (or mapped below the image's private top-level
# entries when not), so every node's tables must see them.  Each load
# runs all of the module's text; then copies and tables are compared with
# the master, and the module window must hold as many pages and node
# copies as before: unloading gives every page back.  Last, every CPU
# reads a newly loaded module's text through its own table
# (ktext_observe_mod): the master's bytes, from its node's memory.
DIR=$(dirname "$0")
. "$DIR/lib.sh"

debugfs_mount
iters=$(cmdline_opt ktext_modload_iters 1000)
workers=
w=0
for node in $(online_nodes); do
	cpus=$(cpulist_expand "$(cat /sys/devices/system/node/node$node/cpulist)")
	[ -n "$cpus" ] || continue
	workers="$workers $node:$(echo "$cpus" | awk '{ print $NF }'):$((w % 8))"
	w=$((w + 1))
done
[ $w -gt 0 ] || { fail "no online node with CPUs"; finish; }
per=$(( (iters + w - 1) / w ))
for x in $workers; do
	m=${x##*:}
	[ -f "$DIR/test_modules/ktext_big$m.ko" ] || { fail "ktext_big$m.ko not built"; finish; }
	grep -q "^ktext_big$m " /proc/modules && rmmod ktext_big$m
done
before=$(mw_pages)
errs=/tmp/ktext_modload.$$
: > $errs
start=$(date +%s)
for x in $workers; do
	cpu=${x#*:}
	cpu=${cpu%%:*}
	m=${x##*:}
	(
		i=0
		while [ $i -lt $per ]; do
			taskset -c "$cpu" insmod "$DIR/test_modules/ktext_big$m.ko" ||
				echo "insmod ktext_big$m on cpu$cpu, round $i" >> $errs
			rmmod ktext_big$m || echo "rmmod ktext_big$m, round $i" >> $errs
			i=$((i + 1))
		done
	) &
done
wait
n=$(wc -l < $errs)
if [ "$n" -eq 0 ]; then
	pass "$((per * w)) loads and unloads on $w nodes in parallel in $(($(date +%s) - start)) s"
else
	fail "$n failures: $(head -3 $errs | tr '\n' ';')"
fi
rm -f $errs
pcpt_active && pcpt_check "module load stress"
tr_active && tr_verify "module load stress"
if tr_modules; then
	after=$(mw_pages)
	[ "$after" = "$before" ] && pass "module window back to $after" ||
		fail "module window held $before before, $after after"
fi
# After the stress, what every CPU reads of a newly loaded module: the
# master's bytes, from its own node's memory while modules are replicated.
if insmod "$DIR/test_modules/ktext_big0.ko"; then
	tr_view "ktext_big0 loaded after the stress, its text" "$(mod_text ktext_big0)" 1
	rmmod ktext_big0
else
	fail "insmod ktext_big0 after the stress"
fi
finish
