#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# vmalloc stress (lib/test_vmalloc.c) with a thread per CPU, then every
# table must still match the master and every CPU run on its own.
DIR=$(dirname "$0")
. "$DIR/lib.sh"

debugfs_mount
ko=$(find /lib/modules -name 'test_vmalloc.ko*' 2>/dev/null | head -1)
[ -n "$ko" ] || skip "test_vmalloc.ko not installed (CONFIG_TEST_VMALLOC=m)"
nr=$(cpulist_expand "$(cat /sys/devices/system/cpu/online)" | wc -w)
loops=$(cmdline_opt vmalloc_loops 100)

# fix_size, random_size and fix_align (mask 25): the others are
# slow under TCG, and align_shift_alloc_test (64) is meant to fail.
# test_vmalloc runs at load time and then refuses to stay (-EAGAIN).
# Only what the module prints counts; the log is not cleared, other
# tests look for boot lines in it.
before=$(dmesg | wc -l)
insmod "$ko" nr_threads="$nr" test_loop_count="$loops" run_test_mask=25 2>/dev/null
log=$(dmesg | tail -n +$((before + 1)))
summaries=$(echo "$log" | grep -c 'Summary: .* passed: ')
[ "$summaries" -gt 0 ] && pass "test_vmalloc: $summaries test/thread summaries" ||
	fail "test_vmalloc printed no summary"
bad=$(echo "$log" | grep 'Summary: ' | grep -v 'failed: 0 ')
[ -z "$bad" ] && pass "test_vmalloc: no failed test" ||
	{ fail "test_vmalloc reported failures"; echo "$bad" | head -10 | sed 's/^/#   /'; }
if pcpt_active; then
	pcpt_check "test_vmalloc"
	pcpt_loaded_ok "test_vmalloc"
	# test_vmalloc stays in the populated part of vmalloc space: also
	# create a new top-level entry, from a CPU of every node at once.
	slot=$(sed -n 's/^vmalloc free slot: //p' "$PCPT_DEBUGFS/status")
	n0=$(sed -n 's/^master entries: //p' "$PCPT_DEBUGFS/status")
	if [ -z "$slot" ] || [ "$slot" = 0 ]; then
		fail "no empty top-level slot left in vmalloc space"
	elif echo "$slot" > "$PCPT_DEBUGFS/test_vmalloc"; then
		n1=$(sed -n 's/^master entries: //p' "$PCPT_DEBUGFS/status")
		[ "$n1" -eq $((n0 + 1)) ] &&
			pass "vmalloc at $slot created a top-level entry ($n0 -> $n1)," \
				"read back on every CPU" ||
			fail "vmalloc at $slot: master entries $n0 -> $n1, expected one more"
		pcpt_check "a new top-level vmalloc entry"
	else
		fail "vmalloc at $slot: $(dmesg | grep 'test_vmalloc: ' | tail -1)"
	fi
	# The roots' write alias is mapped only inside a batch of writes,
	# under the core's lock: after those writes, no table maps any of it.
	alias=$(sed -n 's/^write alias: //p' "$PCPT_DEBUGFS/status")
	if [ -z "$alias" ]; then
		grep -q '^read-only: yes' "$PCPT_DEBUGFS/status" &&
			fail "the roots are read-only, but status shows no write alias"
	elif ! have_ptdump; then
		echo "# write alias $alias: not checked: $NO_PTDUMP"
	else
		bad=
		for f in /sys/kernel/debug/kernel_page_tables "$PCPT_DEBUGFS"/tables/cpu*; do
			m=$(awk -v a="${alias%-*}" -v b="${alias#*-}" '
			/^0x/ && NF > 3 && substr($1, 1, 18) < b &&
				substr($1, 20, 18) > a { print $1 }' "$f")
			[ -z "$m" ] || bad="$bad ${f##*/}: $m"
		done
		[ -z "$bad" ] &&
			pass "the write alias $alias is unmapped in the master" \
				"and every root after the writes" ||
			fail "the write alias $alias is still mapped:$bad"
	fi
fi
finish
