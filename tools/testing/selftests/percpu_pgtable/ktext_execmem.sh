#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Executable memory the text replica does not replicate: kprobe
# instruction slots and BPF JIT images.  Each must lie outside the image
# and the module window, run on every CPU (a kprobe on vfs_read hit on
# every CPU, which single-steps in the slot; a JIT-compiled BPF program
# attached to another probe there counts its runs per CPU: ktext_bpf),
# and be mapped by every CPU to the same node's memory, holding the
# master's bytes (ktext_observe_mod).  A CPU whose table missed such a
# mapping would fault running it.
DIR=$(dirname "$0")
. "$DIR/lib.sh"

debugfs_mount
T=/sys/kernel/tracing
[ -d "$T/events" ] || mount -t tracefs none "$T" 2>/dev/null
[ -f "$T/kprobe_events" ] || { fail "tracefs with kprobe events needed"; finish; }
cpus=$(cpulist_expand "$(cat /sys/devices/system/cpu/online)")
READ1='read -r x < /proc/self/stat'

# outside WHAT ADDR: ADDR is neither in the image nor in the module window.
outside()
{
	where=
	within "$2" "$(ksym _text)" "$(ksym _end)" && where="the image"
	mw=$(mw_range)
	if [ -n "$mw" ]; then
		set -- "$1" "$2" $mw
		within "$2" "$3" "$4" && where="the module window $3-$4"
	fi
	[ -z "$where" ] && pass "$1 at $2: outside the image and the module window" ||
		fail "$1 at $2: inside $where"
}

echo 'p:ktext_slot vfs_read' >> "$T/kprobe_events"
echo 1 > "$T/events/kprobes/ktext_slot/enable"
missing=$(pinned_events "$READ1" $cpus | sed -n 's/^\([0-9]*\):0$/\1/p' | tr '\n' ' ')
echo 1 > "$T/tracing_on"
[ -z "$missing" ] && pass "kprobe on vfs_read: every CPU ran it (and its slot)" ||
	fail "kprobe on vfs_read: no hit on CPU(s) $missing"
slots=$(awk '$4 == "[__builtin__kprobes]" { print "0x" $1 }' /proc/kallsyms)
if [ -z "$slots" ]; then
	fail "no kprobe instruction slot in /proc/kallsyms"
fi
for s in $slots; do
	outside "kprobe instruction slot" "$s"
	tr_view "kprobe instruction slot at $s" "$s" same
done
echo 0 > "$T/events/kprobes/ktext_slot/enable"
echo '-:ktext_slot' >> "$T/kprobe_events"

echo 'p:ktext_bpf vfs_read' >> "$T/kprobe_events"
id=$(cat "$T/events/kprobes/ktext_bpf/id")
in=/tmp/ktext_bpf.$$.in
out=/tmp/ktext_bpf.$$.out
# ktext_bpf keeps the program loaded until its input ends: a FIFO this
# shell holds open (read-write: that open does not block).
: > "$out"
mkfifo "$in"
exec 3<> "$in"
"$DIR/ktext_bpf" "$id" < "$in" > "$out" 2>&1 3>&- &
bpid=$!
t=0
while ! grep -q '^ready$' "$out" && kill -0 $bpid 2>/dev/null && [ $t -lt 120 ]; do
	sleep 1
	t=$((t + 1))
done
[ $t -lt 120 ] || kill $bpid 2>/dev/null
if grep -q '^ready$' "$out"; then
	zero=
	for c in $cpus; do
		n=$(sed -n "s/^cpu$c: //p" "$out")
		[ "${n:-0}" -gt 0 ] || zero="$zero $c"
	done
	[ -z "$zero" ] &&
		pass "BPF program ran on every CPU ($(grep '^cpu' "$out" | tr '\n' ' '))" ||
		fail "BPF program did not run on CPU(s)$zero: $(tr '\n' ' ' < "$out")"
	jit=$(awk '$4 == "[bpf]" && $3 ~ /_ktext_bpf$/ { print "0x" $1 }' /proc/kallsyms)
	if [ -z "$jit" ]; then
		fail "no JIT image of ktext_bpf in /proc/kallsyms"
	else
		outside "BPF JIT image" "$jit"
		tr_view "BPF JIT image at $jit" "$jit" same
	fi
else
	fail "ktext_bpf: $(tr '\n' ' ' < "$out")"
fi
exec 3>&-
wait $bpid
rc=$?
grep -q '^ready$' "$out" && [ $rc -ne 0 ] &&
	fail "ktext_bpf exited with $rc: $(tail -2 "$out" | tr '\n' ' ')"
rm -f "$in" "$out"
echo '-:ktext_bpf' >> "$T/kprobe_events"
finish
