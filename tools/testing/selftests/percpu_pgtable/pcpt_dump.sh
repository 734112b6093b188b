#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Every CPU's table dumps in the kernel_page_tables format, and with no
# private range registered it translates exactly like the master: its
# dump equals kernel_page_tables line for line.
DIR=$(dirname "$0")
. "$DIR/lib.sh"

debugfs_mount
pcpt_active || skip "per-CPU kernel page tables not active"
grep -q '^client ' "$PCPT_DEBUGFS/status" &&
	skip "a private range is registered; dumps differ by design"

# Read with shell builtins only: a new process would map a new vmalloc
# stack between the two reads and make the dumps differ.
slurp()
{
	while IFS= read -r line; do
		printf '%s\n' "$line"
	done < "$1" > "$2"
}

master=/tmp/master.$$
copy=/tmp/copy.$$
for f in "$PCPT_DEBUGFS"/tables/cpu*; do
	cpu=${f##*/}
	same=0
	# Kernel threads may still map or unmap something between the two
	# reads; a few tries tell that apart from a real difference.
	for try in 1 2 3 4 5; do
		slurp /sys/kernel/debug/kernel_page_tables "$master"
		slurp "$f" "$copy"
		if cmp -s "$master" "$copy"; then
			same=1
			break
		fi
	done
	lines=$(wc -l < "$copy")
	if [ $same -eq 1 ] && [ "$lines" -gt 20 ]; then
		pass "$cpu: $lines lines, identical to kernel_page_tables"
	else
		fail "$cpu: differs from kernel_page_tables ($lines lines)"
		diff "$master" "$copy" | head -10 | sed 's/^/#   /'
	fi
done
rm -f "$master" "$copy"
finish
