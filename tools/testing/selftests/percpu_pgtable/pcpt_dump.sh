#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Every CPU's table dumps in the kernel_page_tables format and translates
# like the master: its dump equals kernel_page_tables line for line outside
# the ranges that change all the time (the check file compares those
# entries under the lock) and outside the private ranges of registered
# clients, which differ by design.
DIR=$(dirname "$0")
. "$DIR/lib.sh"

debugfs_mount
pcpt_active || skip "per-CPU kernel page tables not active"
have_ptdump || skip "$NO_PTDUMP"

# "START END" of every client's private range, from the status file.
private=$(sed -n 's/^client [^:]*: \(0x[0-9a-f]*\)-\(0x[0-9a-f]*\)$/\1 \2/p' "$PCPT_DEBUGFS/status")

# The linear map, vmalloc space and the KASAN shadow change under our
# feet (DEBUG_PAGEALLOC remaps the linear map on every allocation, every
# new process maps a vmalloc stack); compare their markers and every
# other mapped range line by line.  Kernel addresses all print as 0x and
# 16 hex digits, so they compare as strings.
settled()
{
	awk -v private="$private" '
	BEGIN { n = split(private, p, /[ \n]+/) }
	/---\[ (Linear Mapping start|vmalloc\(\) area|Kasan shadow start) \]---/ {
		print; skip = 1; next }
	/---\[ (Linear Mapping end|vmalloc\(\) end|Kasan shadow end) \]---/ { skip = 0 }
	/^0x/ {
		# Unmapped gaps ("range size LEVEL") map nothing, and where they
		# start depends on what a private range next to them holds.
		if (NF <= 3)
			next
		start = substr($1, 1, 18)
		end = substr($1, 20, 18)
		for (i = 1; i + 1 <= n; i += 2)
			if (start < p[i + 1] && end > p[i])
				next
	}
	!skip' "$1" > "$2"
}

master=/tmp/master.$$
copy=/tmp/copy.$$
for f in "$PCPT_DEBUGFS"/tables/cpu*; do
	cpu=${f##*/}
	if grep -q "^$cpu: master" "$PCPT_DEBUGFS/status"; then
		grep -q 'runs on the master table' "$f" &&
			pass "$cpu has no table of its own: says so" ||
			fail "$cpu has no table of its own, but its dump says otherwise"
		continue
	fi
	same=0
	# Kernel threads may still map or unmap something between the two
	# reads; a few tries tell that apart from a real difference.
	for try in 1 2 3; do
		settled /sys/kernel/debug/kernel_page_tables "$master"
		settled "$f" "$copy"
		if cmp -s "$master" "$copy"; then
			same=1
			break
		fi
	done
	lines=$(wc -l < "$copy")
	if [ $same -eq 1 ] && [ "$lines" -gt 10 ]; then
		pass "$cpu: $lines lines outside the linear map and vmalloc," \
			"identical to kernel_page_tables"
	else
		fail "$cpu: differs from kernel_page_tables ($lines lines)"
		diff "$master" "$copy" | head -10 | sed 's/^/#   /'
	fi
done
rm -f "$master" "$copy"
finish
