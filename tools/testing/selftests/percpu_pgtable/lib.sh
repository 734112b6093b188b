#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Helpers shared by the percpu_pgtable selftests (POSIX sh: busybox is
# enough).  Parameters come from the kernel command line as pcpt.NAME=
# (cmdline_opt): a harness that starts the machine gives the topology it
# made (pcpt.nodes=, pcpt.cpus_per_node=, ...), so that a kernel which
# loses a node fails; without them the tests take the machine as sysfs
# shows it, and the sizes of their loops are the defaults.

# Each check is one KTAP result (Documentation/dev-tools/ktap.rst), from
# the kernel's helpers; there is no plan line, since how many checks a
# test makes depends on the topology it finds.
. "$DIR/../kselftest/ktap_helpers.sh"
ksft_pass=$KSFT_PASS
ksft_fail=$KSFT_FAIL
ksft_skip=$KSFT_SKIP

pcpt_failures=0
# Set while checks run with their output kept aside (the soak's
# checkpoints): they print diagnostics only, and the caller reports one
# result for all of them.
PCPT_KTAP_QUIET=

ktap_print_header

# cmdline_opt NAME DEFAULT: value of the last pcpt.NAME= on the command
# line; a test that runs another may override it with PCPT_NAME in the
# environment.
cmdline_opt()
{
	v=$2
	for w in $(cat /proc/cmdline); do
		case "$w" in
		"pcpt.$1="*) v=${w#*=} ;;
		esac
	done
	eval "echo \"\${PCPT_$1:-\$v}\""
}

# ktap_line HELPER TEXT: one result line; TEXT on one line, without '#'
# (which would start a directive), and not expanded by the helpers'
# unquoted echo.
ktap_line()
{
	set -f
	"$1" "$(printf '%s' "$2" | tr '\n#' ' _')"
	set +f
}

fail()
{
	pcpt_failures=$((pcpt_failures + 1))
	if [ -n "$PCPT_KTAP_QUIET" ]; then
		echo "# FAIL: $*"
	else
		ktap_line ktap_test_fail "$*"
	fi
}

pass()
{
	if [ -n "$PCPT_KTAP_QUIET" ]; then
		echo "# ok: $*"
	else
		ktap_line ktap_test_pass "$*"
	fi
}

# A check that failed before the skip makes it a failure: skipping must
# never hide one (tr_present fails and then skips on a 4K kernel without
# the replica).
skip()
{
	if [ "$pcpt_failures" -ne 0 ]; then
		echo "# $pcpt_failures check(s) failed before the skip: $*"
		ktap_print_totals
		exit $ksft_fail
	fi
	if [ "$KTAP_TESTNO" -eq 1 ]; then
		ktap_line ktap_skip_all "$*"
	else
		ktap_line ktap_test_skip "$*"
		ktap_print_totals
	fi
	exit $ksft_skip
}

finish()
{
	# A test that loaded the observer leaves it to the next one clean.
	[ -d "$OBSERVE" ] && rmmod ktext_observe_mod 2>/dev/null
	ktap_print_totals
	if [ "$pcpt_failures" -ne 0 ]; then
		echo "# $pcpt_failures check(s) failed"
		exit $ksft_fail
	fi
	exit $ksft_pass
}

# cpulist_expand LIST: "0-2,5" -> "0 1 2 5"
cpulist_expand()
{
	echo "$1" | tr ',' '\n' | while IFS=- read -r a b; do
		[ -n "$a" ] || continue
		seq "$a" "${b:-$a}"
	done | tr '\n' ' ' | sed 's/ $//'
}

# node_of_cpu CPU: the node whose cpulist holds CPU, from sysfs.
node_of_cpu()
{
	for n in /sys/devices/system/node/node[0-9]*; do
		for c in $(cpulist_expand "$(cat "$n/cpulist")"); do
			[ "$c" = "$1" ] && { echo "${n##*node}"; return; }
		done
	done
	echo -1
}

online_nodes()
{
	cpulist_expand "$(cat /sys/devices/system/node/online)"
}

debugfs_mount()
{
	[ -d /sys/kernel/debug/tracing ] || [ -e /sys/kernel/debug/kernel_page_tables ] ||
		mount -t debugfs none /sys/kernel/debug 2>/dev/null
	true
}

PCPT_DEBUGFS=/sys/kernel/debug/percpu_pgtable

# have_ptdump: can page tables be walked and dumped here?  arm64 allows
# it (kernel_page_tables, the per-CPU dumps) only where vmalloc never
# frees a table under a walker: with CONFIG_PTDUMP_DEBUGFS, which keeps
# block mappings out of vmalloc space (arch_vmap_p?d_supported()).
have_ptdump()
{
	[ -e /sys/kernel/debug/kernel_page_tables ]
}

NO_PTDUMP="no page-table dumps here: this configuration allows block mappings in vmalloc space"
NO_PTDUMP="$NO_PTDUMP (CONFIG_PTDUMP_DEBUGFS=n), which may free a table under a walk"

# pcpt_active: are per-CPU kernel tables in use (debugfs status)?
pcpt_active()
{
	grep -q '^active: yes' "$PCPT_DEBUGFS/status" 2>/dev/null
}

# pcpt_check WHAT: the copy-vs-master comparison must report 0 mismatches.
pcpt_check()
{
	out=$(cat "$PCPT_DEBUGFS/check" 2>&1)
	if echo "$out" | grep -qx 'mismatches: 0'; then
		pass "consistent after $1"
	else
		fail "after $1: $(echo "$out" | tail -5 | tr '\n' ';')"
	fi
}

# pcpt_loaded_ok WHAT: every online CPU's TTBR1 holds its own root (or
# the master when it has none), as read on that CPU.
pcpt_loaded_ok()
{
	bad=$(awk '
		/^master: / { master = $2 }
		/^cpu[0-9]+: / {
			if ($0 ~ / offline$/) next
			want = ($2 == "master") ? master : $5
			got = $NF
			if (got != want) print $1 " loaded " got " expected " want
		}' "$PCPT_DEBUGFS/status")
	if [ -z "$bad" ]; then
		pass "every online CPU on its own table after $1"
	else
		fail "after $1: $(echo "$bad" | tr '\n' ';')"
	fi
}

TR_DEBUGFS=/sys/kernel/debug/kernel_replication

# tr_active: is kernel text replication in use (debugfs status)?
tr_active()
{
	grep -q '^active: yes' "$TR_DEBUGFS/status" 2>/dev/null
}

# tr_present: is kernel replication built into this kernel?  It is in
# every kernel of the test configuration, on every page size, so its
# absence fails (and skip() then fails too).
tr_present()
{
	[ -f "$TR_DEBUGFS/status" ] && return 0
	fail "no $TR_DEBUGFS: CONFIG_KERNEL_REPLICATION missing?"
	return 1
}

# tr_why_inactive: print why replication must be off on this boot and
# succeed, or fail (return 1) if it must be on.
tr_why_inactive()
{
	for w in $(cat /proc/cmdline); do
		case "$w" in
		kernel_replication=off|percpu_pgtable=off) echo "$w"; return 0 ;;
		esac
	done
	[ "$(cmdline_opt nodes "$(online_nodes | wc -w)")" -le 1 ] &&
		{ echo "a single node"; return 0; }
	return 1
}

# tr_testfail_nodes: the nodes whose copy the command line makes fail.
tr_testfail_nodes()
{
	for w in $(cat /proc/cmdline); do
		case "$w" in
		kernel_replication_testfail=*) cpulist_expand "${w#*=}"; return ;;
		esac
	done
}

# tr_modules: are module text and rodata replicated (debugfs status)?
tr_modules()
{
	grep -q '^modules: 0x' "$TR_DEBUGFS/status" 2>/dev/null
}

# tr_expected_node CPU: the node whose copy CPU must translate text to:
# its own, the one its node uses, or, for a CPU on the master's table
# (percpu_pgtable_testfail=), the master's.
tr_expected_node()
{
	n=$(node_of_cpu "$1")
	u=$(sed -n "s/^node $n: uses node \([0-9]*\)$/\1/p" "$TR_DEBUGFS/status")
	if grep -q "^cpu$1: master" "$PCPT_DEBUGFS/status" 2>/dev/null; then
		sed -n 's/^node \([0-9]*\): .* master$/\1/p' "$TR_DEBUGFS/status"
	else
		echo "${u:-$n}"
	fi
}

# start_node_readers: a background loop of read(2) (no fork per call) on
# the last CPU of every node, their PIDs in $pids.  One per node keeps
# the guest responsive under TCG.
start_node_readers()
{
	pids=
	for node in $(online_nodes); do
		cpu=$(cpulist_expand "$(cat /sys/devices/system/node/node$node/cpulist)" |
			awk '{ print $NF }')
		[ -n "$cpu" ] || continue
		taskset -c "$cpu" sh -c 'while :; do read -r x < /proc/self/stat; done' &
		pids="$pids $!"
	done
	readers_trap
}

# readers_trap: the loops of $pids end with the test, also when the
# kselftest runner's timeout stops it; left running, they would keep
# every CPU busy for the tests after it.
readers_trap()
{
	trap 'kill $pids 2>/dev/null' EXIT
	trap 'kill -CONT $pids 2>/dev/null; kill $pids 2>/dev/null
	      echo "# FAIL: stopped by SIGTERM/SIGINT (the runner'"'"'s timeout?)"; exit 143' \
		TERM INT
}

# pause_readers / resume_readers: stop the loops of $pids, and wait until
# each is stopped (out of the kernel; one still running after 10 s fails
# the test, since the step it guards would then not be what it says),
# then let them run again.  Under
# QEMU's multi-threaded TCG, a vCPU that translates a page while another
# vCPU writes it can keep running what it translated from the old bytes
# (Documentation/mm/kernel-replication.rst, Limitations): the patching
# steps whose check is "every CPU runs the new code" keep the readers
# stopped while the code changes.
pause_readers()
{
	kill -STOP $pids 2>/dev/null
	for pr_p in $pids; do
		# A reader gone would leave the patches landing with no
		# CPU running what they patch, and nothing saying so.
		[ -r "/proc/$pr_p/stat" ] || { fail "reader $pr_p is gone"; continue; }
		pr_i=0
		while [ $pr_i -lt 100 ] && [ -r "/proc/$pr_p/stat" ] &&
		      [ "$(cut -d' ' -f3 "/proc/$pr_p/stat")" != T ]; do
			sleep 0.1
			pr_i=$((pr_i + 1))
		done
		[ $pr_i -lt 100 ] ||
			fail "reader $pr_p did not stop in 10 s" \
				"(state $(cut -d' ' -f3 "/proc/$pr_p/stat" 2>/dev/null))"
	done
}

resume_readers()
{
	kill -CONT $pids 2>/dev/null
}

# pinned_events CMD CPU...: with the trace of $T cleared and tracing on,
# run CMD pinned to each CPU in turn, turn tracing off, and print
# "CPU:EVENTS" for each, the events in that CPU's own ring buffer (read
# before anything resets it; only lines matching $pe_pattern if set).
# Tracing stays off.
pinned_events()
{
	pe_cmd=$1
	shift
	echo 0 > "$T/tracing_on"
	echo > "$T/trace"
	echo 1 > "$T/tracing_on"
	for pe_c in "$@"; do
		taskset -c "$pe_c" sh -c "$pe_cmd"
	done
	echo 0 > "$T/tracing_on"
	for pe_c in "$@"; do
		echo "$pe_c:$(grep -c "${pe_pattern:-^[^#]}" "$T/per_cpu/cpu$pe_c/trace")"
	done
}

# below A B: kernel address A is below B (both 0x and 16 hex digits).
below()
{
	[ "$1" != "$2" ] &&
		[ "$(printf '%s\n%s\n' "${1#0x}" "${2#0x}" | sort | head -1)" = "${1#0x}" ]
}

# within A LO HI: LO <= A < HI.
within()
{
	! below "$1" "$2" && below "$1" "$3"
}

# mw_range: "LO HI" of the module window while modules are replicated.
mw_range()
{
	sed -n 's/^modules: \(0x[0-9a-f]*\)-\(0x[0-9a-f]*\),.*/\1 \2/p' \
		"$TR_DEBUGFS/status" 2>/dev/null
}

# mw_pages: "N pages, M node copies" the module window maps (debugfs).
mw_pages()
{
	sed -n 's/^modules: 0x[0-9a-f]*-0x[0-9a-f]*, \([0-9]* pages, [0-9]* node copies\).*/\1/p' \
		"$TR_DEBUGFS/status" 2>/dev/null
}

# ksym NAME: address of a kernel symbol, 0x and 16 lowercase hex digits.
ksym()
{
	awk -v s="$1" '$3 == s { print "0x" $1; exit }' /proc/kallsyms
}

# pa_node PA: the node whose memory holds physical address PA (sysfs
# memory blocks), or -1.
pa_node()
{
	bs=$((0x$(cat /sys/devices/system/memory/block_size_bytes)))
	blk=$(($1 / bs))
	for n in /sys/devices/system/node/node[0-9]*; do
		[ -e "$n/memory$blk" ] && { echo "${n##*node}"; return; }
	done
	echo -1
}

# tr_verify WHAT: the copy-vs-master byte comparison must find nothing.
tr_verify()
{
	out=$(cat "$TR_DEBUGFS/verify" 2>&1)
	if echo "$out" | grep -qx 'mismatches: 0' &&
	   [ "$(echo "$out" | sed -n 's/^compared: //p')" -gt 0 ]; then
		pass "copies identical after $1 ($(echo "$out" | sed -n 's/^compared: //p') bytes)"
	else
		fail "after $1: $(echo "$out" | grep -v ' 0 differ$' | tail -6 | tr '\n' ';')"
	fi
}

OBSERVE=/sys/kernel/debug/ktext_observe

# observe_load: load ktext_observe_mod, which reads what every CPU sees of
# the text without the text replica's bookkeeping (test_modules/).
observe_load()
{
	[ -d "$OBSERVE" ] && return 0
	insmod "$DIR/test_modules/ktext_observe_mod.ko" 2>/dev/null && return 0
	fail "insmod ktext_observe_mod: $(dmesg | tail -2 | tr '\n' ';')"
	return 1
}

# tr_view WHAT image|MODULE_ADDR [NODE]: every CPU of ktext_cpus reads,
# through its own table, the image's text and rodata ([_stext,
# __end_rodata)) or the module allocation at MODULE_ADDR, and compares
# each page with the master's (ktext_observe_mod).  No page may differ.
# For the image, each CPU's pages must all be in the memory of one node:
# tr_expected_node's while replication is active, else the same node for
# every CPU.  For a module, NODE=1 asks for tr_expected_node's memory
# while module text is replicated (tr_modules), and nothing else;
# NODE=same asks that every CPU map it to the same nodes' memory, page
# for page counted (memory that is not replicated; a second copy on the
# same node would pass).
tr_view()
{
	observe_load || return
	cpus_v=$(ktext_cpus | tr ' \n' ',,' | sed 's/^,*//; s/,*$//; s/,,*/,/g')
	if [ "$2" = image ]; then
		req="image $(ksym _stext) $(ksym __end_rodata) $cpus_v"
	else
		req="module $2 $cpus_v"
	fi
	if ! echo "$req" > "$OBSERVE/view"; then
		fail "$1: ktext_observe_mod refused \"$req\""
		return
	fi
	out=$(cat "$OBSERVE/view")
	bad=
	one=
	active_v=0
	if [ "$2" = image ]; then
		tr_active && active_v=1
	elif [ "${3:-0}" = 1 ]; then
		tr_active && tr_modules && active_v=1
	fi
	while read -r cpu _ node pages _ differ _ _ _ nodes; do
		[ -n "$cpu" ] || continue
		cpu=${cpu#cpu}
		want=
		if [ $active_v -eq 1 ]; then
			want=$(tr_expected_node "$cpu")
		elif [ "${3:-0}" = same ]; then
			# Every CPU's counts per node as the first one's.
			one=${one:-$nodes}
			want=$one
		elif [ "$2" = image ]; then
			# No node ("none") is no node to agree on.
			one=${one:-${nodes%%:*}}
			[ "$one" = none ] && one=a-node
			want=$one:$pages
		fi
		[ -n "$want" ] && [ $active_v -eq 1 ] && want=$want:$pages
		if [ "$pages" -eq 0 ] || [ "$differ" != 0 ] ||
		   { [ -n "$want" ] && [ "$nodes" != "$want" ]; }; then
			bad="$bad cpu$cpu node ${node%:}: $pages pages, $differ differ,"
			bad="$bad on nodes $nodes${want:+ (want $want)};"
		fi
	done <<EOF
$(echo "$out" | sed 's/, first at .*//; s/, pa nodes:/ /; s/,//g')
EOF
	# One line per CPU asked for, no more, no fewer.
	nl=$(echo "$out" | grep -c '^cpu')
	want_nl=$(echo "$cpus_v" | tr ',' '\n' | grep -c .)
	[ "$nl" -eq "$want_nl" ] || bad="$bad $nl CPU lines for $want_nl CPUs;"
	if [ -z "$bad" ] && [ -n "$out" ]; then
		pass "$1: every CPU reads the master's bytes" \
			"($(echo "$out" | awk 'NR == 1 { print $4 }') pages each)"
	else
		fail "$1:${bad:- no output}"
		echo "$out" | grep -v ' 0 differ' | head -4 | sed 's/^/# /'
	fi
}

# mod_text MOD: the start of module MOD's .text section, which lies in
# its text allocation (sysfs; else its lowest text symbol in
# /proc/kallsyms, where an init function may stay listed at an address
# below the module window).
mod_text()
{
	if [ -r "/sys/module/$1/sections/.text" ]; then
		cat "/sys/module/$1/sections/.text"
		return
	fi
	awk -v m="[$1]" '$4 == m && ($2 == "t" || $2 == "T") { print "0x" $1 }' /proc/kallsyms |
		sort | head -1
}

# ktext_cpus: the online CPUs whose own tables the text replica tests
# read: all of them, or with pcpt.ktext_all_cpus=0 (the debug boot, where
# reading a whole per-CPU dump under KASAN takes minutes) the last CPU
# of every node.
ktext_cpus()
{
	if [ "$(cmdline_opt ktext_all_cpus 1)" = 1 ]; then
		cpulist_expand "$(cat /sys/devices/system/cpu/online)"
		return
	fi
	for node in $(online_nodes); do
		cpulist_expand "$(cat /sys/devices/system/node/node$node/cpulist)" |
			awk 'NF { print $NF }'
	done
}

# Memory hotplug through a virtio-mem device with id vm0.  The guest
# cannot resize its own device: it asks the host by printing
# "PCPT-QMP: qom-set vm0 requested-size BYTES" on the console, which
# the harness turns into a QMP qom-set.  The request is
# repeated until the memory shows up, so a line mangled by interleaved
# kernel messages only costs time.
MEM=/sys/devices/system/memory

mem_blocks()
{
	ls -d $MEM/memory[0-9]* | sed 's/.*memory//' | sort -n
}

# vmem_init: the device's geometry, or 1 with the reason in $vmem_why.
# Sets vmem_bs (block size), vmem_want (bytes a hot-add asks for: two
# blocks when the device has room, so it crosses a block boundary),
# vmem_before (the blocks present now) and vmem_wait (seconds a resize
# may take, pcpt.memhp_wait=).
vmem_init()
{
	vmem_why=
	if ! ls -d /sys/bus/virtio/drivers/virtio_mem/virtio* >/dev/null 2>&1; then
		vmem_why="no virtio-mem device"
		vmem_why="$vmem_why (QEMU: -device virtio-mem-pci,id=vm0,... and pcpt.vmem_mb=)"
		return 1
	fi
	vmem_wait=$(cmdline_opt memhp_wait 180)
	vmem_bs=$(($(printf '%d' "0x$(cat $MEM/block_size_bytes)")))
	vmem_size=$(($(cmdline_opt vmem_mb 0) * 1024 * 1024))
	if [ "$vmem_size" -lt "$vmem_bs" ]; then
		vmem_why="virtio-mem device of $vmem_size bytes"
		vmem_why="$vmem_why holds no whole memory block of $vmem_bs bytes"
		return 1
	fi
	vmem_want=$vmem_bs
	[ "$vmem_size" -ge $((2 * vmem_bs)) ] && vmem_want=$((2 * vmem_bs))
	vmem_before=$(mem_blocks)
}

# vmem_request BYTES COND: ask the host for BYTES until COND succeeds,
# for at most $vmem_wait seconds.
vmem_request()
{
	vmem_t=0
	while [ "$vmem_t" -lt "$vmem_wait" ]; do
		[ $((vmem_t % 10)) -eq 0 ] &&
			echo "PCPT-QMP: qom-set vm0 requested-size $1" > /dev/console
		eval "$2" && return 0
		sleep 1
		vmem_t=$((vmem_t + 1))
	done
	return 1
}

# vmem_added: the blocks that were not there at vmem_init.
vmem_added()
{
	mem_blocks | grep -vxF "$vmem_before" | tr '\n' ' '
}

# vmem_online: all $vmem_want bytes hot-added and online.
vmem_online()
{
	vmem_n=0
	for vmem_b in $(vmem_added); do
		[ "$(cat $MEM/memory$vmem_b/state)" = online ] && vmem_n=$((vmem_n + 1))
	done
	[ $((vmem_n * vmem_bs)) -eq "$vmem_want" ]
}

# vmem_gone: every hot-added block removed again.
vmem_gone()
{
	[ "$(mem_blocks)" = "$vmem_before" ]
}

# vmem_touch BLOCK: pcpt_test_mod allocates the hot-added BLOCK and
# reads and writes its pages and struct pages from a CPU of every node.
vmem_touch()
{
	insmod "$DIR/test_modules/pcpt_test_mod.ko" touch_phys=$(($1 * vmem_bs)) \
		touch_size="$vmem_bs" || return 1
	rmmod pcpt_test_mod
}

# vmem_kept_entries: top-level entries a hot-add leaves after removal.
# Generic KASAN maps the shadow of hot-added memory with vmalloc
# (kasan_mem_notifier()) and vfree()s it on removal; vmalloc page tables
# are never freed, so the shadow's top-level entry (one: 256 MiB of
# memory, 32 MiB of shadow) stays, in the master and every copy alike.
vmem_kept_entries()
{
	grep -q ' kasan_mem_notifier$' /proc/kallsyms && echo 1 || echo 0
}

# pcpt_master_entries: the master's top-level entries (debugfs status).
pcpt_master_entries()
{
	sed -n 's/^master entries: //p' "$PCPT_DEBUGFS/status"
}

# pcpw_window_countable: can pcpw_window_pages count here?
pcpw_window_countable()
{
	pcpt_active && have_ptdump &&
		grep -q '^client this_cpu_window:' "$PCPT_DEBUGFS/status"
}

# pcpw_window_pages: "N" when the window of every CPU with a table of its
# own maps exactly the N pages per CPU that percpu has populated, else
# what differs.  The mappings are counted from each CPU's table dump, the
# populated pages from Percpu in /proc/meminfo (populated pages times
# units, one unit per possible CPU): a mapping left behind by a
# depopulate, or missing after a populate, shows as a difference.
# Percpu memory comes and goes under the reads (pcpu_balance_workfn), so
# a count is taken only when Percpu did not change across it.
pcpw_window_pages()
{
	range=$(sed -n 's/^client this_cpu_window: \(0x[0-9a-f]*\)-\(0x[0-9a-f]*\)$/\1 \2/p' \
		"$PCPT_DEBUGFS/status")
	units=$(cpulist_expand "$(cat /sys/devices/system/cpu/possible)" | wc -w)
	page=$(($(awk '/^KernelPageSize:/ { print $2; exit }' /proc/self/smaps) * 1024))
	msg="Percpu in /proc/meminfo never stood still across a count"
	for try in 1 2 3 4 5; do
		[ $try -eq 1 ] || sleep 1
		pc0=$(awk '/^Percpu:/ { print $2 }' /proc/meminfo)
		got=
		for f in "$PCPT_DEBUGFS"/tables/cpu*; do
			grep -q "^${f##*/}: master" "$PCPT_DEBUGFS/status" && continue
			got="$got $(awk -v range="$range" -v page="$page" '
			BEGIN { split(range, r, " ") }
			/^0x/ && NF > 3 {
				start = substr($1, 1, 18)
				end = substr($1, 20, 18)
				if (start < r[1] || end > r[2])
					next
				u = substr($2, length($2))
				n = substr($2, 1, length($2) - 1)
				if (u == "K")
					n *= 1024
				else if (u == "M")
					n *= 1048576
				else if (u == "G")
					n *= 1073741824
				b += n
			}
			END { print b / page }' "$f")"
		done
		pc1=$(awk '/^Percpu:/ { print $2 }' /proc/meminfo)
		[ "$pc0" = "$pc1" ] || continue
		want=$((pc0 * 1024 / page / units))
		bad=$(echo $got | tr ' ' '\n' | grep -cvx "$want")
		[ "$bad" -eq 0 ] && { echo "$want"; return 0; }
		msg="populated $want pages per CPU, windows map:$got"
	done
	echo "$msg"
	return 1
}
