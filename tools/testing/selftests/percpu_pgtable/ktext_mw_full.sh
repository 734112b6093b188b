#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A full module window.  Booted with a small kernel_replication_modules=
# (556K with 4K pages: room for the observer and one
# ktext_big module, 272 KiB with rodata and guard pages, then for a text
# but not its rodata; the sizes for 16K and 64K pages differ),
# load ktext_big0..3 in turn.  The first ones must land in the window,
# replicated (every CPU reads the master's bytes from its own node's
# memory, ktext_observe_mod); once it is full, the next ones must load
# outside it, unreplicated (every CPU reads the same memory), with the
# kernel's warning naming them, and all must run on a CPU of every node.
# Unloading must give the window's pages back, and a module that did not
# fit must then load replicated.
DIR=$(dirname "$0")
. "$DIR/lib.sh"

debugfs_mount
grep -q 'kernel_replication_modules=' /proc/cmdline ||
	skip "boot with a small kernel_replication_modules= (556K with 4K pages)"
tr_active || skip "text replication is not active"
tr_modules ||
	{ fail "modules are not replicated: $(grep '^modules:' "$TR_DEBUGFS/status")"; finish; }

mods="ktext_big0 ktext_big1 ktext_big2 ktext_big3"
for m in $mods; do
	grep -q "^$m " /proc/modules && rmmod $m
done
pages()
{
	sed -n 's/^modules: [^,]*, \([0-9]*\) pages,.*/\1/p' "$TR_DEBUGFS/status"
}
free_kib()
{
	sed -n 's/.*, \([0-9]*\) KiB free$/\1/p' "$TR_DEBUGFS/status"
}
# The observer takes room in the window too: loaded first, it stays.
observe_load || finish
set -- $(mw_range)
lo=$1 hi=$2
pages0=$(pages)
free0=$(free_kib)
[ -n "$free0" ] || { fail "no free KiB in: $(grep '^modules:' "$TR_DEBUGFS/status")"; finish; }
echo "# window $lo-$hi," \
	"$(sed -n 's/.*, \([0-9]*\) KiB usable,.*/\1/p' "$TR_DEBUGFS/status") KiB usable," \
	"$free0 KiB free, $pages0 pages mapped"
# A ktext_big module: 256 KiB and a little of text, one page of rodata,
# each followed by a guard page (with 4K pages: 65 + 1 + 1 + 1 pages).
page_kib=$(awk '/^KernelPageSize:/ { print $2; exit }' /proc/self/smaps)
[ -n "$page_kib" ] || { fail "no KernelPageSize in /proc/self/smaps"; finish; }
text_kib=$(((256 / page_kib + 2) * page_kib))
whole_kib=$((text_kib + 2 * page_kib))
echo "# $page_kib KiB pages: a ktext_big module takes" \
	"$text_kib KiB of text with its guard, $whole_kib KiB in all"

# in_mw MOD: its text starts in the module window.
in_mw()
{
	t=$(mod_text "$1")
	[ -n "$t" ] && within "$t" "$lo" "$hi"
}

# rodata_with MOD IN: its rodata is in the window exactly when its text
# is (IN 1 or 0): a module is replicated whole or not at all.
rodata_with()
{
	r=$(cat "/sys/module/$1/sections/.rodata" 2>/dev/null)
	[ -n "$r" ] || { fail "$1: no .rodata in /sys/module/$1/sections"; return; }
	r_in=0
	within "$r" "$lo" "$hi" && r_in=1
	[ "$r_in" = "$2" ] && pass "$1: rodata at $r goes with its text" ||
		fail "$1: rodata at $r, text at $(mod_text "$1"): replicated by halves"
}

# runs MOD: its text computes the right result on a CPU of every node.
runs()
{
	for node in $(online_nodes); do
		cpu=$(cpulist_expand "$(cat /sys/devices/system/node/node$node/cpulist)" |
			awk '{ print $1 }')
		[ -n "$cpu" ] || continue
		taskset -c "$cpu" sh -c "echo 1 > /sys/module/$1/parameters/run" ||
			{ fail "$1: its text failed on cpu$cpu (node $node)"; return; }
	done
	pass "$1: ran on a CPU of every node"
}

# load MOD: insmod it and check it is where the room left says: in the
# window, replicated, when the text and the rodata fit; outside,
# unreplicated, with the warning, when they do not (also when the text
# alone would).
n=0
load()
{
	f=$(free_kib)
	n=$((n + 1))
	echo "ktext_mw_full: mark $n" > /dev/kmsg
	insmod "$DIR/test_modules/$1.ko" || { fail "insmod $1"; return; }
	warned=$(dmesg | sed -n "/ktext_mw_full: mark $n\$/,\$p" |
		grep -c "module window full: $1 is not replicated")
	if in_mw "$1"; then
		inside="$inside $1"
		[ "$f" -ge $whole_kib ] ||
			fail "$1: in the window with $f KiB free, under $whole_kib"
		[ "$warned" -eq 0 ] || fail "$1: in the window, yet warned as not replicated"
		tr_view "$1, in the window ($f KiB were free)" "$(mod_text $1)" 1
		rodata_with "$1" 1
	else
		outside="$outside $1"
		[ "$f" -lt $whole_kib ] || fail "$1: outside the window with $f KiB free"
		[ "$f" -ge $text_kib ] && rodata_rule=$((rodata_rule + 1))
		[ "$warned" -eq 1 ] &&
			pass "$1: outside the window ($f KiB free), with the warning" ||
			fail "$1: outside the window at $(mod_text $1)," \
				"$warned warning(s) naming it"
		tr_view "$1, outside the window" "$(mod_text $1)" same
		rodata_with "$1" 0
	fi
	runs "$1"
}

inside=
outside=
rodata_rule=0
for m in $mods; do
	load "$m"
done
echo "# in the window:${inside:- none}; outside:${outside:- none}"
[ -n "$inside" ] || fail "no module fits in the window"
[ -n "$outside" ] || fail "the window never filled (kernel_replication_modules= too large?)"
# The boot's size leaves room for a text but not for its rodata once.
[ "$rodata_rule" -gt 0 ] &&
	pass "$rodata_rule module(s) whose text alone fitted loaded whole outside" ||
	fail "no load found room for the text but not the rodata:" \
		"adjust kernel_replication_modules= (Makefile)"

# Unloading gives the window back: the first module that did not fit
# now does.
for m in $mods; do
	rmmod "$m" || fail "rmmod $m"
done
[ "$(pages)" = "$pages0" ] && [ "$(free_kib)" = "$free0" ] &&
	pass "unloaded: the window maps $pages0 pages and has $free0 KiB free again" ||
	fail "unloaded: the window maps $(pages) pages with $(free_kib) KiB free," \
		"$pages0 and $free0 before"
m=${outside# }
m=${m%% *}
if [ -n "$m" ]; then
	inside= outside=
	load "$m"
	[ -n "$inside" ] || fail "$m: still outside the window after the others were unloaded"
	rmmod "$m"
fi
finish
