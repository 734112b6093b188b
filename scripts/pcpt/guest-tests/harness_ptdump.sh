#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The kernel page table dump is readable, carries every address marker
# of the arm64 layout in order, maps kernel text read-only executable,
# and the boot-time W^X check ran and passed.
DIR=$(dirname "$0")
. "$DIR/lib.sh"

debugfs_mount
f=/sys/kernel/debug/kernel_page_tables
have_ptdump || skip "$NO_PTDUMP"
[ -r "$f" ] || { fail "$f is not readable"; finish; }

dump=/tmp/kernel_page_tables.$$
cat "$f" > "$dump" || fail "reading $f failed"
lines=$(wc -l < "$dump")
[ "$lines" -gt 20 ] && pass "$f: $lines lines" || fail "$f: only $lines lines"

# Markers in address order (arch/arm64/mm/ptdump.c).
prev=0
for m in "Linear Mapping start" "Linear Mapping end" "Modules start" "Modules end" \
	 "vmalloc() area" "vmalloc() end" "vmemmap start" "vmemmap end" \
	 "PCI I/O start" "PCI I/O end" "Fixmap start" "Fixmap end"; do
	n=$(grep -nF -- "---[ $m ]---" "$dump" | head -1 | cut -d: -f1)
	if [ -z "$n" ]; then
		fail "marker '$m' missing"
	elif [ "$n" -le "$prev" ]; then
		fail "marker '$m' out of order (line $n)"
	else
		pass "marker '$m' at line $n"
		prev=$n
	fi
done

# Kernel text: at least one read-only executable mapping in the image
# between "vmalloc() area" and "vmalloc() end" (the image lives there).
rox=$(sed -n '/vmalloc() area/,/vmalloc() end/p' "$dump" | grep -c ' ro x ')
[ "$rox" -gt 0 ] && pass "$rox read-only executable kernel mapping(s)" ||
	fail "no read-only executable mapping in the vmalloc/image range"

wx=$(grep -c ' RW x ' "$dump")
[ "$wx" -eq 0 ] && pass "no writable+executable mapping in the dump" ||
	fail "$wx writable+executable mapping(s) in the dump"

# The boot-time check runs right after init memory is freed; KUnit's W^X
# cases print the same lines earlier and later.
wxline=$(dmesg | sed -n '/Freeing unused kernel memory/,$p' | grep -m1 'Checked W+X mappings')
if echo "$wxline" | grep -q 'Checked W+X mappings: passed, no W+X pages found'; then
	pass "boot-time W^X check passed"
else
	fail "boot-time W^X check: '${wxline:-no line after init memory was freed}'"
fi

rm -f "$dump"
finish
