#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot a kernel and initramfs under qemu-system-aarch64 -M virt with a
# NUMA topology, and save the console.
#
# Usage: boot.sh IMAGE INITRD LOG
# Environment (defaults in brackets):
#   NODES [4], CPUS_PER_NODE [2], NODE_MEM [1024] (MiB per node)
#   CPU [max]       QEMU CPU model: max (every feature QEMU has, LSE, PAN,
#                   pointer authentication), cortex-a57 (ARMv8.0: no LSE
#                   atomics, no PAN), neoverse-n1 (ARMv8.2: LSE, PAN)
#   HIBERNATE [0]   1: give the guest a swap disk (virtio-blk, /dev/vda);
#                   when the guest hibernates (it prints PCPT-HIBERNATE)
#                   and powers off, start QEMU again on the same disk with
#                   resume=/dev/vda, so the image is restored
#   MODE [run]      guest action: run, check, bench, shell
#   CMDLINE []      extra kernel command line
#   BROKEN [0]      1: also run the deliberately failing selftest
#   TIMEOUT [900]   seconds before the boot counts as hung
#   VMEM_MB [1024]  size of a virtio-mem device (id vm0, unplugged at
#                   boot, at 8 TiB) the memory hotplug selftest resizes;
#                   0: none
#   KEXEC [0]       1: the guest boots the same kernel again through
#                   kexec_file_load first (INITRD must carry /kexec/, as
#                   'make ... KEXEC=1' builds it); KUnit runs in the new one
#   TCG_THREAD [multi]  multi: one host thread per vCPU (MTTCG); single:
#                   all vCPUs in turn on one thread, so no vCPU runs or
#                   translates code while another writes it
#   MEMLESS []      a node (1 to NODES-1) that gets CPUs and no memory;
#                   the other nodes have NODE_MEM each.  Node distances
#                   are then given: 20 between any two nodes, but 15
#                   between it and the node below it (above it for node
#                   1, when there is one), so that its nearest node is
#                   not node 0, which holds the image
#   QEMU_EXTRA []   extra QEMU arguments (e.g. "-s -S" for gdb)
#   MEM_PATH []     back node N's RAM with a file in MEM_PATH/pcpt-nodeN/
#                   (memory-backend-file), so host addresses tell the node
#                   (tools/pcpt-bench/ktext_fetch_plugin.c)
#
# Exit status: 0 when the guest powered itself off after printing
# PCPT-DONE, 1 otherwise (hang, crash, QEMU error).  The guest's own
# test results are judged from LOG by results.py, not here.
set -uo pipefail

[ $# -eq 3 ] || { echo "usage: boot.sh IMAGE INITRD LOG" >&2; exit 2; }
image=$1 initrd=$2 log=$3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

NODES=${NODES:-4}
CPUS_PER_NODE=${CPUS_PER_NODE:-2}
NODE_MEM=${NODE_MEM:-1024}
MODE=${MODE:-run}
TIMEOUT=${TIMEOUT:-900}
VMEM_MB=${VMEM_MB:-1024}

[ -f "$image" ] || die "kernel image $image not found"
[ -f "$initrd" ] || die "initramfs $initrd not found"

CPU=${CPU:-max}
HIBERNATE=${HIBERNATE:-0}
case "$CPU" in
max) cpu="max,pauth-impdef=on" ;;
cortex-a57|neoverse-n1) cpu=$CPU ;;
*) die "CPU=$CPU is not accepted; use one of: max cortex-a57 neoverse-n1" ;;
esac
case "$HIBERNATE" in
0|1) ;;
*) die "HIBERNATE=$HIBERNATE is not accepted; use 0 or 1" ;;
esac
TCG_THREAD=${TCG_THREAD:-multi}
case "$TCG_THREAD" in
multi|single) ;;
*) die "TCG_THREAD=$TCG_THREAD is not accepted; use multi or single" ;;
esac

MEMLESS=${MEMLESS:-}
if [ -n "$MEMLESS" ]; then
	[[ "$MEMLESS" =~ ^[1-7]$ ]] && [ "$MEMLESS" -lt "$NODES" ] ||
		die "MEMLESS=$MEMLESS is not accepted; use a node from 1 to NODES-1 ($((NODES - 1))), or nothing"
fi
ram=$((NODES * NODE_MEM))
[ -n "$MEMLESS" ] && ram=$((ram - NODE_MEM))
mem="${ram}M"
# The virtio-mem device sits 8 TiB up, two top-level entries of the
# linear map away from the RAM at every page size: hot-add creates a new
# one, hot-remove clears it (pcpt_memhotplug.sh).
vmem_addr=$((8 << 40))
[ "$VMEM_MB" -gt 0 ] && mem+=",maxmem=$((ram + (vmem_addr >> 20) + VMEM_MB))M"
args=(-M virt,gic-version=3 -cpu "$cpu" -accel tcg,thread=$TCG_THREAD
      -smp $((NODES * CPUS_PER_NODE)) -m "$mem"
      -nographic -nic none -no-reboot -kernel "$image" -initrd "$initrd")
for ((n = 0; n < NODES; n++)); do
	first=$((n * CPUS_PER_NODE))
	last=$((first + CPUS_PER_NODE - 1))
	if [ "$n" = "$MEMLESS" ]; then
		args+=(-numa "node,nodeid=$n,cpus=$first-$last")
		continue
	fi
	if [ -n "${MEM_PATH:-}" ]; then
		mkdir -p "$MEM_PATH/pcpt-node$n"
		args+=(-object "memory-backend-file,id=mem$n,size=${NODE_MEM}M,mem-path=$MEM_PATH/pcpt-node$n")
	else
		args+=(-object "memory-backend-ram,id=mem$n,size=${NODE_MEM}M")
	fi
	args+=(-numa "node,nodeid=$n,cpus=$first-$last,memdev=mem$n")
done
if [ -n "$MEMLESS" ]; then
	near=$((MEMLESS - 1))
	[ $near -eq 0 ] && [ $((MEMLESS + 1)) -lt "$NODES" ] && near=$((MEMLESS + 1))
	for ((a = 0; a < NODES; a++)); do
		for ((b = a + 1; b < NODES; b++)); do
			d=20
			if { [ $a -eq "$near" ] && [ $b -eq "$MEMLESS" ]; } ||
			   { [ $a -eq "$MEMLESS" ] && [ $b -eq "$near" ]; }; then
				d=15
			fi
			args+=(-numa "dist,src=$a,dst=$b,val=$d")
		done
	done
fi
# The guest asks for virtio-mem resizes on its console; qmp-watch.py
# forwards them to this QMP socket (unix socket paths are short: /tmp).
qmpdir=$(mktemp -d /tmp/pcpt-qmp.XXXXXX)
trap 'rm -rf "$qmpdir"' EXIT
if [ "$HIBERNATE" = 1 ]; then
	# Sparse: only the image the guest writes takes space.
	truncate -s 3G "$qmpdir/swap.img"
	args+=(-drive "if=none,id=swap0,format=raw,file=$qmpdir/swap.img"
	       -device virtio-blk-pci,drive=swap0)
fi
args+=(-qmp "unix:$qmpdir/qmp.sock,server=on,wait=off")
if [ "$VMEM_MB" -gt 0 ]; then
	args+=(-object "memory-backend-ram,id=vmem0,size=${VMEM_MB}M"
	       -device "virtio-mem-pci,id=vm0,memdev=vmem0,requested-size=0,memaddr=$vmem_addr")
fi
# A large log buffer: the tests look for boot lines after KUnit's output.
append="console=ttyAMA0 panic=-1 oops=panic log_buf_len=4M pcpt.mode=$MODE pcpt.nodes=$NODES"
append+=" pcpt.cpus_per_node=$CPUS_PER_NODE pcpt.node_mem=$NODE_MEM pcpt.broken=${BROKEN:-0}"
append+=" pcpt.vmem_mb=$VMEM_MB pcpt.cpu=$CPU pcpt.hibernate=$HIBERNATE"
[ -n "$MEMLESS" ] && append+=" pcpt.memless=$MEMLESS"
[ "${KEXEC:-0}" = 1 ] && append+=" pcpt.kexec=1 kunit.enable=0"
append+=" ${CMDLINE:-}"
args+=(-append "$append")
# shellcheck disable=SC2206
args+=(${QEMU_EXTRA:-})

mkdir -p "$(dirname "$log")"
info "booting: qemu-system-aarch64 ${args[*]}"
info "console log: $log"
start=$(date +%s)
if [ "$MODE" = shell ]; then
	qemu-system-aarch64 "${args[@]}" 2>&1 | tee "$log"
	exit 0
fi
quiet=()
[ "${QUIET:-0}" = 1 ] && quiet=(--quiet)
: > "$log"
: > "$log.times"
sysmap=$(dirname "$image")/../../../System.map
[ -f "$sysmap" ] || sysmap=
run_qemu()
{
	# Shortly before the timeout, where every CPU is goes into the log.
	(
		trap 'kill $s 2>/dev/null; exit 0' TERM
		sleep $((TIMEOUT > 30 ? TIMEOUT - 15 : TIMEOUT)) &
		s=$!
		wait $s && python3 "$here/qmp-regs.py" "$qmpdir/qmp.sock" ${sysmap:+"$sysmap" "$log"} >> "$log"
	) </dev/null >/dev/null 2>&1 &
	regs=$!
	timeout --foreground -k 10 "$TIMEOUT" qemu-system-aarch64 "$@" </dev/null 2>&1 |
		python3 "$here/qmp-watch.py" --log "$log" --qmp "$qmpdir/qmp.sock" \
			--times "$log.times" "${quiet[@]}"
	rc_q=${PIPESTATUS[0]}
	kill "$regs" 2>/dev/null
	wait "$regs" 2>/dev/null
	return "$rc_q"
}
run_qemu "${args[@]}"
rc=$?
# The guest wrote a hibernation image and powered off: boot again on the
# same disk.  The restored kernel carries on where the guest hibernated;
# if the image is not restored, a fresh /init runs with pcpt.mode=
# resumefail and says so.  virtio-mem refuses hibernation, so the kernel
# that restores the image does without its driver (the hibernating one
# unbound it, pcpt_hibernate.sh).
if [ "$rc" -eq 0 ] && [ "$HIBERNATE" = 1 ] && grep -q 'PCPT-HIBERNATE: powering off' "$log" &&
   ! grep -q '^PCPT-DONE' "$log"; then
	info "guest hibernated after $(($(date +%s) - start)) s: restoring it from $qmpdir/swap.img"
	echo "pcpt-boot: === restoring the hibernated guest ===" >> "$log"
	resume=("${args[@]}")
	for ((i = 0; i < ${#resume[@]}; i++)); do
		[ "${resume[$i]}" = -append ] &&
			resume[$((i + 1))]="${resume[$((i + 1))]} resume=/dev/vda initcall_blacklist=virtio_mem_driver_init pcpt.mode=resumefail"
	done
	run_qemu "${resume[@]}"
	rc=$?
fi
secs=$(($(date +%s) - start))
echo "$secs" > "$log.seconds"
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
	warn "guest did not power off within $TIMEOUT s: counted as hung (log: $log)"
	exit 1
fi
if [ "$rc" -ne 0 ]; then
	warn "qemu exited with status $rc after $secs s (log: $log)"
	exit 1
fi
if ! grep -q '^PCPT-DONE' "$log"; then
	warn "guest stopped after $secs s without finishing its run (log: $log)"
	exit 1
fi
info "guest powered off after $secs s"
