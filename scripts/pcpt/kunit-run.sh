#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The project's KUnit suites through the kernel's own runner, as a
# reviewer would run them (make kunit): tools/testing/kunit/kunit.py with
# mm/tests/.kunitconfig on arm64 under QEMU, NODES nodes of CPUS_PER_NODE
# CPUs (Documentation/mm/percpu-pgtable.rst, Tests, gives the line for
# 4 x 2).  kunit.py builds its own kernel (olddefconfig from the
# kunitconfig, not the project's fragments) in BUILD_DIR.
#
# Usage: kunit-run.sh TREE BUILD_DIR NODES CPUS_PER_NODE
set -euo pipefail

[ $# -eq 4 ] || { echo "usage: kunit-run.sh TREE BUILD_DIR NODES CPUS_PER_NODE" >&2; exit 2; }
tree=$(cd "$1" && pwd) bld=$2 nodes=$3 cpn=$4
. "$(dirname "$0")/lib.sh"
case "$nodes" in [1-8]) ;; *) die "NODES=$nodes: 1 to 8 expected" ;; esac
case "$cpn" in [1-9]|1[0-6]) ;; *) die "CPUS_PER_NODE=$cpn: 1 to 16 expected" ;; esac
[ $((nodes * cpn)) -le 16 ] || die "NODES x CPUS_PER_NODE = $((nodes * cpn)): 16 at most"

mkdir -p "$bld"
bld=$(cd "$bld" && pwd)
mem=512
args="-smp $((nodes * cpn)) -m $((nodes * mem))M"
# kunit.py's virt machine has a GICv2, which stops at 8 CPUs.
[ $((nodes * cpn)) -le 8 ] || args+=" -machine gic-version=3"
for ((n = 0; n < nodes; n++)); do
	args+=" -object memory-backend-ram,id=m$n,size=${mem}M"
done
for ((n = 0; n < nodes; n++)); do
	args+=" -numa node,nodeid=$n,cpus=$((n * cpn))-$((n * cpn + cpn - 1)),memdev=m$n"
done
info "kunit.py on $nodes nodes x $cpn CPUs (build: $bld)"
cd "$tree"
./tools/testing/kunit/kunit.py run --arch=arm64 \
	--cross_compile=aarch64-linux-gnu- --kunitconfig=mm/tests \
	--build_dir="$bld" --jobs="$(($(nproc) + 1))" \
	--make_options="CC=ccache aarch64-linux-gnu-gcc" \
	--qemu_args="$args"
