#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot a kernel and initramfs under qemu-system-aarch64 -M virt -cpu max
# with a NUMA topology, and save the console.
#
# Usage: boot.sh IMAGE INITRD LOG
# Environment (defaults in brackets):
#   NODES [4], CPUS_PER_NODE [2], NODE_MEM [1024] (MiB per node)
#   MODE [run]      guest action: run, check, bench, shell
#   CMDLINE []      extra kernel command line
#   BROKEN [0]      1: also run the deliberately failing selftest
#   TIMEOUT [900]   seconds before the boot counts as hung
#   VMEM_MB [1024]  size of a virtio-mem device (id vm0, unplugged at
#                   boot) the memory hotplug selftest resizes; 0: none
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

ram=$((NODES * NODE_MEM))
mem="${ram}M"
[ "$VMEM_MB" -gt 0 ] && mem+=",maxmem=$((ram + VMEM_MB))M"
args=(-M virt,gic-version=3 -cpu max,pauth-impdef=on -accel tcg,thread=multi
      -smp $((NODES * CPUS_PER_NODE)) -m "$mem"
      -nographic -nic none -no-reboot -kernel "$image" -initrd "$initrd")
for ((n = 0; n < NODES; n++)); do
	first=$((n * CPUS_PER_NODE))
	last=$((first + CPUS_PER_NODE - 1))
	if [ -n "${MEM_PATH:-}" ]; then
		mkdir -p "$MEM_PATH/pcpt-node$n"
		args+=(-object "memory-backend-file,id=mem$n,size=${NODE_MEM}M,mem-path=$MEM_PATH/pcpt-node$n")
	else
		args+=(-object "memory-backend-ram,id=mem$n,size=${NODE_MEM}M")
	fi
	args+=(-numa "node,nodeid=$n,cpus=$first-$last,memdev=mem$n")
done
# The guest asks for virtio-mem resizes on its console; qmp-watch.py
# forwards them to this QMP socket (unix socket paths are short: /tmp).
qmpdir=$(mktemp -d /tmp/pcpt-qmp.XXXXXX)
trap 'rm -rf "$qmpdir"' EXIT
args+=(-qmp "unix:$qmpdir/qmp.sock,server=on,wait=off")
if [ "$VMEM_MB" -gt 0 ]; then
	args+=(-object "memory-backend-ram,id=vmem0,size=${VMEM_MB}M"
	       -device "virtio-mem-pci,id=vm0,memdev=vmem0,requested-size=0")
fi
# A large log buffer: the tests look for boot lines after KUnit's output.
append="console=ttyAMA0 panic=-1 oops=panic log_buf_len=4M pcpt.mode=$MODE pcpt.nodes=$NODES"
append+=" pcpt.cpus_per_node=$CPUS_PER_NODE pcpt.node_mem=$NODE_MEM pcpt.broken=${BROKEN:-0}"
append+=" pcpt.vmem_mb=$VMEM_MB"
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
timeout --foreground -k 10 "$TIMEOUT" qemu-system-aarch64 "${args[@]}" </dev/null 2>&1 |
	python3 "$here/qmp-watch.py" --log "$log" --qmp "$qmpdir/qmp.sock" "${quiet[@]}"
rc=${PIPESTATUS[0]}
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
