#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Boot the base and the patched kernel alternately, ITERS times each, in
# pcpt.mode=bench; collect the PCPT-BENCH lines, and print a table of
# base, patched and patched/base ratio (medians), also written as JSON
# and plotted as PNG (gnuplot) under OUT.
#
# Usage: bench.py --out DIR --iters N --initrd CPIO [--plugin SO]
#                 [--pathlen-plugin SO] [--pathlen-runs N] [--parts LIST]
#                 [--scale-topologies "NxM ..."] BASE_IMAGE PATCHED_IMAGE
# BASE_IMAGE '-': the patched kernel alone (timing and fetch parts).
# With --plugin, each kernel is also booted once with the TCG plugin
# (tools/pcpt-bench/ktext_fetch_plugin.c) to count where its kernel
# instruction fetches come from: fetch_remote_pct_* are the percentages
# served from another node's memory, per node of the fetching CPU.
# With --pathlen-plugin, five kernels (base, patched, patched with
# percpu_pgtable=off, base and patched on one node) are booted RUNS times
# each with tools/pcpt-bench/pathlen_plugin.c and pathlen.c: kernel
# instructions per operation, exact when the runs agree within 1%.
# The topology and command line come from the environment, as for boot.sh.

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def boot(image, initrd, log, extra_cmdline='', extra_env=None):
    # The built-in KUnit suites differ between the kernels and would be
    # timed as boot time: both boot without running them.
    cmdline = (os.environ.get('CMDLINE', '') + ' kunit.enable=0 ' + extra_cmdline).strip()
    env = dict(os.environ, MODE='bench', QUIET='1', CMDLINE=cmdline, **(extra_env or {}))
    rc = subprocess.call(['bash', os.path.join(HERE, 'boot.sh'), image, initrd, log], env=env)
    metrics, errors = {}, []
    with open(log, errors='replace') as f:
        for line in f:
            line = line.strip()
            if line.startswith('PCPT-BENCH-ERROR'):
                errors.append(line)
            elif line.startswith('PCPT-BENCH '):
                _, name, value, unit, better = line.split()[:5]
                # Kernel messages can run into the line on the console.
                better = next((b for b in ('lower', 'higher', 'info')
                               if better.startswith(b)), better)
                metrics[name] = (float(value), unit, better)
    if rc != 0:
        errors.append(f'boot of {image} failed (log: {log})')
    return metrics, errors


def probe_dump(log, out):
    """The PCPT-PROBE lines of a bench boot's console, as 'name hex'."""
    with open(log, errors='replace') as f, open(out, 'w') as o:
        for line in f:
            w = line.split()
            if w[:1] == ['PCPT-PROBE'] and len(w) >= 3:
                o.write(f'{w[1]} {w[2]}\n')


def ksym(image, name):
    """Link-time address of a symbol, from the System.map next to vmlinux."""
    smap = os.path.join(os.path.dirname(image), '..', '..', '..', 'System.map')
    with open(smap) as f:
        for line in f:
            addr, _, sym = line.split()[:3]
            if sym == name:
                return '0x' + addr
    raise SystemExit(f'bench.py: {name} not in {smap}')


def fetch_locality(kind, image, initrd, plugin, out):
    """Boot once with the TCG plugin counting kernel instruction fetches by
    the node of their memory; return {metric: (value, unit, better)}."""
    cpn = int(os.environ.get('CPUS_PER_NODE', '2'))
    res = os.path.join(out, f'{kind}-fetch.txt')
    mem = tempfile.mkdtemp(prefix='pcpt-bench-mem.', dir='/dev/shm')
    try:
        extra = {'MEM_PATH': mem,
                 'QEMU_EXTRA': (os.environ.get('QEMU_EXTRA', '') +
                                f' -plugin {plugin},out={res},cpus_per_node={cpn},'
                                f'mark={ksym(image, "ksys_sync")},'
                                f'img_lo={ksym(image, "_text")},'
                                f'img_hi={ksym(image, "_end")}').strip()}
        # nokaslr: the plugin's mark is the link-time address of ksys_sync.
        m, errors = boot(image, initrd, os.path.join(out, f'{kind}-fetch.log'),
                         'nokaslr pcpt.bench_fetch=1', extra)
    finally:
        shutil.rmtree(mem, ignore_errors=True)
    metrics = {}
    if errors or not os.path.exists(res):
        return metrics, errors + [f'{kind}: no fetch counts ({res})']
    per_node, marks = {}, 0
    with open(res) as f:
        for line in f:
            w = line.split()
            if w[:2] == ['#', 'marks']:
                marks = int(w[2])
            elif w and w[0] == 'vcpu':
                node = int(w[3])
                t = per_node.setdefault(node, [0] * 6)
                for i in range(6):
                    t[i] += int(w[5 + 2 * i])
    if marks < 2:
        errors.append(f'{kind}: the plugin saw {marks} of the 2 sync marks')
    tot = [sum(t[i] for t in per_node.values()) for i in range(6)]
    # Kernel image, then everything outside it: module text in this workload.
    for node, t in sorted(per_node.items()):
        if t[0] + t[1]:
            metrics[f'fetch_remote_pct_node{node}'] = (100.0 * t[1] / (t[0] + t[1]), '%', 'lower')
        if t[3] + t[4]:
            metrics[f'fetch_mod_remote_pct_node{node}'] = (100.0 * t[4] / (t[3] + t[4]), '%', 'lower')
    if tot[0] + tot[1]:
        metrics['fetch_remote_pct_all'] = (100.0 * tot[1] / (tot[0] + tot[1]), '%', 'lower')
        metrics['fetch_kernel_insns'] = (float(tot[0] + tot[1]), 'insns', 'info')
    if tot[3] + tot[4]:
        metrics['fetch_mod_remote_pct_all'] = (100.0 * tot[4] / (tot[3] + tot[4]), '%', 'lower')
        metrics['fetch_mod_insns'] = (float(tot[3] + tot[4]), 'insns', 'info')
    if tot[2] + tot[5] > 0.01 * (sum(tot) or 1):
        errors.append(f'{kind}: {tot[2] + tot[5]} kernel instructions from memory of no known node')
    return metrics, errors


# The path-length kernels: (name, image: 'base' or 'patched', extra
# command line, environment).  The single-node ones keep the CPUs and the
# memory of the default topology in one node.
PATHLEN_KINDS = (
    ('base', 'base', '', {}),
    ('patched', 'patched', '', {}),
    ('patched_off', 'patched', 'percpu_pgtable=off', {}),
    ('base_1node', 'base', '', 'one-node'),
    ('patched_1node', 'patched', '', 'one-node'),
)


# Functions whose entry begins a boot phase (those a kernel lacks are left
# out for it): the path-length boot splits the kernel instructions of all
# CPUs up to the workload into phases that run from one of these entries
# to the next; each do_one_initcall() entry is named after its initcall.
# percpu_pgtable_register_client() runs twice, for the window (inside its
# initcall) and for the text replica (the switch to the copies, then the
# copies protected and the module window set up): the second is named
# with '#2'.
# Functions that run once, after setup_per_cpu_areas() (start_kernel()'s
# steps, then kernel_init_freeable()), split what runs up to the first
# early initcall (the page allocator's start-up, the boot alternatives,
# ftrace's call sites...), where the off kernel ran 1.6 M more.
# Not jump_label_init(): setup_arch() calls it first, before the roots.
BOOT_PHASES = ('kernel_replication_reserve', 'percpu_pgtable_init', 'setup_per_cpu_areas',
               'smp_prepare_boot_cpu', 'mm_core_init', 'ftrace_init', 'sched_init',
               'rcu_init', 'init_IRQ',
               'time_init', 'perf_event_init', 'console_init', 'setup_per_cpu_pageset',
               'vfs_caches_init', 'kernel_init_freeable',
               'do_one_initcall', 'smp_init', 'setup_system_features', 'setup_user_features',
               'sched_init_smp', 'mark_readonly', 'kernel_replication_init',
               'percpu_pgtable_register_client', 'ptdump_check_wx', 'rcu_end_inkernel_boot')


def system_map(image):
    smap = os.path.join(os.path.dirname(image), '..', '..', '..', 'System.map')
    syms = []
    with open(smap) as f:
        for line in f:
            w = line.split()
            if len(w) >= 3:
                syms.append((int(w[0], 16), w[1], w[2]))
    return syms


def initcalls(syms):
    """Initcall function names in the order the kernel calls them: the
    __initcall__* entries between __initcall_start and __initcall_end,
    by address."""
    addr = {name: a for a, _, name in syms}
    lo, hi = addr.get('__initcall_start'), addr.get('__initcall_end')
    if lo is None or hi is None:
        return []
    seen, names = set(), []
    for a, _, name in sorted(syms):
        if (lo <= a < hi and name.startswith('__initcall_') and a not in seen and
                not re.match(r'__initcall\w*_(start|end)$', name)):
            seen.add(a)
            m = re.match(r'__initcall__kmod_\w+?__\d+_\d+_(\w+?)(early|rootfs|[0-7]s?)$', name)
            names.append('initcall ' + (m.group(1) if m else name))
    return names


def one_node_env():
    nodes = int(os.environ.get('NODES', '4'))
    cpn = int(os.environ.get('CPUS_PER_NODE', '2'))
    mem = int(os.environ.get('NODE_MEM', '1024'))
    return {'NODES': '1', 'CPUS_PER_NODE': str(nodes * cpn), 'NODE_MEM': str(nodes * mem),
            'MEMLESS': ''}


# Operations a kernel of this configuration cannot run (pathlen.c's
# PCPT-PATHLEN-SKIP lines: the reason), left out of the tables.
SKIPPED = {}


def pathlen_boot(name, image, initrd, plugin, out, run, cmdline, env):
    """Boot once with the path-length plugin; return ({op: (n, cpu,
    kernel insns per op on the loop's CPU, on all CPUs, [window ops,
    TLBIs, DSB ISHs per op])}, boot phases, the boot's PCPT-BENCH
    metrics, errors)."""
    res = os.path.join(out, f'pathlen-{name}-{run}.txt')
    log = os.path.join(out, f'pathlen-{name}-{run}.log')
    if os.path.exists(res):
        os.unlink(res)
    syms = system_map(image)
    addr = {name: a for a, t, name in syms if t in 'tT'}
    ids = ['__arm64_sys_getcpu'] + [p for p in BOOT_PHASES if p in addr]
    if ids[0] not in addr:
        return {}, None, {}, [f'pathlen {name}: no __arm64_sys_getcpu in System.map']
    extra = dict(env)
    # One TCG thread and a virtual clock driven by the instruction count
    # (1 ns each, idle time skipped): timer ticks and preemption land at
    # the same instruction in every run, whatever the host's load.
    icount = ''
    if os.environ.get('PATHLEN_ICOUNT', '1') != '0':
        extra['TCG_THREAD'] = 'single'
        icount = ' -icount shift=0,sleep=off'
    extra['QEMU_EXTRA'] = (os.environ.get('QEMU_EXTRA', '') + icount +
                           f' -plugin {plugin},out={res},mark=' +
                           ':'.join(hex(addr[i]) for i in ids)).strip()
    # nokaslr: the mark is a link-time address.
    metrics, errors = boot(image, initrd, log,
                           ('nokaslr norandmaps pcpt.bench_pathlen=1 ' + cmdline).strip(), extra)
    ops, window_imm, skips = [], None, 0
    with open(log, errors='replace') as f:
        for line in f:
            w = line.split()
            if w[:1] == ['PCPT-PATHLEN'] and len(w) >= 4:
                ops.append((w[1], int(w[2]), int(w[3])))
            elif w[:1] == ['PCPT-PATHLEN-SKIP'] and len(w) >= 2:
                SKIPPED[w[1]] = ' '.join(w[2:])
                skips += 1
            elif w[:2] == ['PCPT-PROBE', 'read'] and len(w) >= 3:
                window_imm = movz_imm(w[2])
    if errors or not os.path.exists(res):
        return {}, None, metrics, errors + [f'pathlen {name} run {run}: no counts ({res}, {log})']
    every, imms, errors = [], [], []
    with open(res) as f:
        for line in f:
            w = line.split()
            if w[:2] == ['#', 'imms']:
                errors.append(f'pathlen {name} run {run}: {line.strip()}')
            if w[:1] == ['imms']:
                imms = [int(x) for x in w[1:]]
            elif w[:1] == ['mark']:
                k, u, z, t = w.index('kernel'), w.index('user'), w.index('movz'), w.index('tlbi')
                movz = dict(zip(imms, (int(x) for x in w[z + 1:t])))
                every.append((int(w[3]), int(w[5]), [int(x) for x in w[k + 1:u]],
                              (movz.get(window_imm, 0), int(w[t + 1]), int(w[t + 3]))))
    first = next((i for i, m in enumerate(every) if m[1] == 0), len(every))
    if name.startswith('patched') and 'percpu_pgtable=off' not in cmdline and \
            window_imm not in imms:
        errors.append(f'pathlen {name} run {run}: the window\'s MOVZ ({window_imm}) not counted '
                      f'(counted immediates: {imms})')
    phases, e = boot_phases(every[:first + 1], ids, initcalls(syms), name, run)
    errors += e
    # The workload's getcpu(2) marks: one at the start, three per operation.
    marks = [(m[0], m[2], m[3]) for m in every[first:] if m[1] == 0]
    if len(marks) != 1 + 3 * len(ops) or not (ops or skips):
        return {}, None, metrics, errors + [f'pathlen {name} run {run}: {len(marks)} marks for {len(ops)} '
                                   f'operations, {1 + 3 * len(ops)} expected (a stray getcpu(2)?)']
    result = {}
    for i, (op, n, cpu) in enumerate(ops):
        m0, m1, m2 = marks[1 + 3 * i:4 + 3 * i]
        if any(m[0] != cpu for m in (m0, m1, m2)):
            errors.append(f'pathlen {name} run {run}: {op}: a mark on another vCPU than {cpu}')
        one = ((m2[1][cpu] - m1[1][cpu]) - (m1[1][cpu] - m0[1][cpu])) / n
        every = ((sum(m2[1]) - sum(m1[1])) - (sum(m1[1]) - sum(m0[1]))) / n
        # this_cpu window ops executed, TLBIs and DSB ISHs, all CPUs.
        counts = [((m2[2][j] - m1[2][j]) - (m1[2][j] - m0[2][j])) / n for j in range(3)]
        result[op] = (n, cpu, one, every, counts)
    return result, phases, metrics, errors


def movz_imm(hexbytes):
    """The immediate of the first "movz Xd, #imm, lsl #32" in a probe's
    bytes: the window offset's bits [47:32]; None without one."""
    try:
        code = bytes.fromhex(hexbytes)
    except ValueError:
        return None
    # Its first instruction, after a BTI or PACIASP at most.
    for i in range(0, min(len(code) - 3, 16), 4):
        w = int.from_bytes(code[i:i + 4], 'little')
        if w & 0xffe00000 == 0xd2c00000:
            return (w >> 5) & 0xffff
    return None


def boot_phases(marks, ids, calls, name, run):
    """[(phase, kernel instructions of all CPUs)] in boot order, from the
    marks up to and including the workload's first: each phase runs from
    its mark to the next, 'start' up to the first mark."""
    phases, errors = [], []
    if not marks or marks[-1][1] != 0:
        return None, [f'pathlen {name} run {run}: the workload never marked its start']
    nr_calls = sum(1 for m in marks if ids[m[1]] == 'do_one_initcall')
    if nr_calls != len(calls):
        errors.append(f'pathlen {name} run {run}: {nr_calls} initcalls run before the workload, '
                      f'{len(calls)} in System.map: initcalls named by number')
        calls = []
    prev, label, c, seen = 0, 'start', 0, {}
    for _, k, counts, _ in marks:
        now = sum(counts)
        phases.append((label, now - prev))
        prev = now
        if ids[k] == 'do_one_initcall':
            label = calls[c] if calls else f'initcall #{c}'
            c += 1
        else:
            seen[ids[k]] = seen.get(ids[k], 0) + 1
            label = ids[k] + (f'#{seen[ids[k]]}' if seen[ids[k]] > 1 else '')
    return phases, errors


def fold_phases(per_kind):
    """Phases every kernel has, so that kernels compare: a phase only some
    have (the patched kernel's own functions and initcalls) is added to
    the common phase before it and listed under it.  per_kind: {kernel:
    [runs of [(phase, insns)]]}; returns rows {'phase', 'kernels': {kernel:
    {'median', 'samples', 'spread'}}, 'parts': {kernel: {phase: median}}}."""
    common = None
    for runs in per_kind.values():
        for phases in runs:
            labels = {p for p, _ in phases}
            common = labels if common is None else common & labels
    common = common or {'start'}
    order, folded, parts = [], {}, {}
    for kind, runs in per_kind.items():
        for phases in runs:
            into, sums, own = 'start', {}, {}
            for label, v in phases:
                if label in common:
                    into = label
                    if label not in order:
                        order.append(label)
                else:
                    own.setdefault(into, {}).setdefault(label, 0)
                    own[into][label] += v
                sums[into] = sums.get(into, 0) + v
            sums['total'] = sum(v for _, v in phases)
            for label, v in sums.items():
                folded.setdefault(label, {}).setdefault(kind, []).append(v)
            for label, d in own.items():
                for sub, v in d.items():
                    parts.setdefault(label, {}).setdefault(kind, {}).setdefault(sub, []).append(v)
    rows = []
    for label in order + ['total']:
        per = folded.get(label, {})
        row = {'phase': label, 'kernels': {}, 'parts': {}}
        for kind, v in per.items():
            med = statistics.median(v)
            row['kernels'][kind] = {'median': med, 'samples': v,
                                    'spread': (max(v) - min(v)) / abs(med) if med else 0.0}
        for kind, d in parts.get(label, {}).items():
            row['parts'][kind] = {sub: statistics.median(v) for sub, v in d.items()}
        rows.append(row)
    return rows


def pathlen(images, initrd, plugin, out, runs, ops=''):
    """Path length per operation for every kind of PATHLEN_KINDS, RUNS
    boots each (alternating); OPS: pathlen.c's operations to run
    (NAME[:N], comma-separated), empty for all; returns (rows, errors)."""
    samples, boot, errors = {}, {}, []
    for run in range(runs):
        for name, which, cmdline, env in PATHLEN_KINDS:
            env = one_node_env() if env == 'one-node' else env
            if ops:
                cmdline = (cmdline + ' pcpt.bench_ops=' + ops).strip()
            print(f'pcpt: bench path length run {run + 1}/{runs}: {name}', flush=True)
            res, boot_insns, _, e = pathlen_boot(name, images[which], initrd, plugin, out,
                                                 run, cmdline, env)
            errors += e
            for op, (n, cpu, one, every, counts) in res.items():
                samples.setdefault((op, 'cpu'), {}).setdefault(name, []).append(one)
                samples.setdefault((op, 'all'), {}).setdefault(name, []).append(every)
                for j, what in enumerate(('window ops', 'TLBI', 'DSB ISH')):
                    samples.setdefault((op, what), {}).setdefault(name, []).append(counts[j])
            if boot_insns:
                boot.setdefault(name, []).append(boot_insns)
    rows = []
    for (op, where), per in sorted(samples.items()):
        row = {'op': op, 'cpus': where, 'kernels': {}}
        for name, _, _, _ in PATHLEN_KINDS:
            v = per.get(name, [])
            if not v:
                errors.append(f'pathlen {op} ({where}): no samples for {name}')
                continue
            med = statistics.median(v)
            spread = (max(v) - min(v)) / abs(med) if med else 0.0
            row['kernels'][name] = {'median': med, 'samples': v, 'spread': spread,
                                    'exact': len(v) >= 3 and spread <= 0.01}
        rows.append(row)
    return rows, fold_phases(boot), errors


# Scaling: operations whose cost grows with the number of roots or nodes,
# and the boot phases that build and switch them.
SCALE_OPS = ('new_top_entry', 'top_entry_clear', 'module', 'module_key')
# Their loop counts in the scaling boots (pathlen.c's NAME:N): module
# load's and the static key's counts of the path-length table would make
# a 64-CPU boot take long; a new top-level entry is cheap and gets the
# table's 16 (pathlen.c takes 4 with 64K pages, which have ~30 slots).
# The static key is the module's (module_key), which is exact: the
# tracepoint's moves by 6 to 18% between boots of one kernel.
SCALE_N = {'new_top_entry': 16, 'top_entry_clear': 50, 'module': 5, 'module_key': 100}
# kernel_replication_init() up to the switch builds every node's tables;
# the switch copies the text under stop_machine() and replaces every root.
# 'early' is boot up to setup_per_cpu_areas(): base has it as its first
# phase, the patched kernel splits it at kernel_replication_reserve() and
# percpu_pgtable_init() (the roots), so only the sum compares.
SCALE_PHASES = (('early', 'boot to percpu'),
                ('kernel_replication_init', 'text tables'),
                ('percpu_pgtable_register_client#2', 'text switch'),
                ('ptdump_check_wx', 'W^X check'),
                ('total', 'boot'))
SCALE_MEM = ('pcpt_table_bytes_per_cpu', 'pcpw_table_bytes_per_cpu', 'ktext_copy_bytes',
             'ktext_table_bytes', 'page_tables', 'mem_free')
# Phases only the patched kernel has: they cost base nothing.
SCALE_PATCHED_ONLY = {'kernel_replication_init', 'percpu_pgtable_register_client#2'}
EARLY = ('start', 'kernel_replication_reserve', 'percpu_pgtable_init')


def parse_topologies(text):
    """'4x2 4x16 8x2' -> [(4, 2), (4, 16), (8, 2)]: NODES x CPUS_PER_NODE,
    1 to 8 nodes, 64 CPUs at most (the scale configuration's NR_CPUS)."""
    tops = []
    for t in text.replace(',', ' ').split():
        m = re.fullmatch(r'([1-8])x([0-9]+)', t)
        if not m or not 1 <= int(m[2]) <= 16 or int(m[1]) * int(m[2]) > 64:
            sys.exit(f"bench.py: scaling topology '{t}' is not accepted: NODESxCPUS_PER_NODE, "
                     '1 to 8 nodes, 1 to 16 CPUs each, 64 CPUs at most, e.g. 4x16')
        if (int(m[1]), int(m[2])) in tops:
            sys.exit(f"bench.py: scaling topology '{t}' is given twice")
        tops.append((int(m[1]), int(m[2])))
    if not tops:
        sys.exit('bench.py: no scaling topology given')
    return tops


def booted_cpus(log):
    """The CPUs the kernel brought up ("smp: Brought up N nodes, M CPUs")."""
    try:
        with open(log, errors='replace') as f:
            for line in f:
                m = re.search(r'smp: Brought up \d+ nodes?, (\d+) CPUs?', line)
                if m:
                    return int(m[1])
    except OSError:
        pass
    return None

def scaling(images, initrd, plugin, out, topologies):
    """Boot base and patched once per topology with the path-length plugin,
    running SCALE_OPS only (one TCG thread, icount); returns (rows,
    errors), a row per topology and kernel.  One boot each: exact counts
    of that boot, without the spread the path-length part measures."""
    rows, errors = [], []
    mem = int(os.environ.get('NODE_MEM', '1024'))
    for nodes, cpn in topologies:
        env = {'NODES': str(nodes), 'CPUS_PER_NODE': str(cpn), 'NODE_MEM': str(mem),
               'MEMLESS': ''}
        for kind in ('base', 'patched'):
            name = f'{kind}-{nodes}x{cpn}'
            print(f'pcpt: bench scaling: {nodes} nodes x {cpn} CPUs: {kind}', flush=True)
            ops = ','.join(f'{op}:{SCALE_N[op]}' for op in SCALE_OPS)
            res, phases, metrics, e = pathlen_boot(name, images[kind], initrd, plugin, out, 0,
                                                   'pcpt.bench_ops=' + ops, env)
            errors += e
            row = {'kernel': kind, 'nodes': nodes, 'cpus': nodes * cpn, 'ops': {},
                   'phases': {}, 'memory': {}}
            for op in SCALE_OPS:
                if op not in res and op in SKIPPED:
                    continue
                if op not in res:
                    errors.append(f'scaling {name}: no figure for {op}')
                    continue
                _, _, _, every, counts = res[op]
                row['ops'][op] = {'insns': every, 'window_ops': counts[0], 'tlbi': counts[1],
                                  'dsb_ish': counts[2]}
            sums = {}
            for label, v in phases or []:
                sums[label] = sums.get(label, 0) + v
            if phases:
                sums['total'] = sum(v for _, v in phases)
                sums['early'] = sum(sums.get(label, 0) for label in EARLY)
            for label, _ in SCALE_PHASES:
                if label in sums:
                    row['phases'][label] = sums[label]
            # The topology asked for, and the one the guest brought up.
            up = booted_cpus(os.path.join(out, f'pathlen-{name}-0.log'))
            if up != nodes * cpn:
                errors.append(f'scaling {name}: {up} CPUs brought up, {nodes * cpn} asked for '
                              '(NR_CPUS of the build, or maxcpus= in CMDLINE?)')
            for m in SCALE_MEM:
                if m in metrics:
                    row['memory'][m] = metrics[m][0]
            rows.append(row)
    return rows, errors


def fit(points):
    """Least-squares line through [(x, y)]: (intercept, slope)."""
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    slope = sum((x - mx) * (y - my) for x, y in points) / sxx if sxx else 0.0
    return my - slope * mx, slope


def scaling_print(rows, out):
    """The scaling table, each figure's growth per CPU (at the most common
    node count) and what it would be at 384 CPUs; writes the PNG."""
    def get(r, what):
        kind, key = what
        return r[kind].get(key, {}).get('insns') if kind == 'ops' else r[kind].get(key)

    cols = [(('ops', op), op) for op in SCALE_OPS] + \
           [(('phases', p), label) for p, label in SCALE_PHASES]
    print('scaling: kernel instructions of all CPUs per operation and per boot phase, base and '
          'patched, TLBIs per operation in brackets; one boot each, so no figure is exact by the '
          'path-length rule (3 boots within 1%): the pathlen part gives their spread at 8 CPUs')
    print(f"{'CPUs':>5} {'nodes':>5}  {'kernel':8}" + ''.join(f'{c[1]:>22}' for c in cols))
    by = {}
    for r in rows:
        by.setdefault((r['cpus'], r['nodes']), {})[r['kernel']] = r
    for (cpus, nodes), k in sorted(by.items()):
        for kind in ('base', 'patched'):
            if kind not in k:
                continue
            cells = []
            for what, _ in cols:
                v = get(k[kind], what)
                b = get(k.get('base', {}), what) if 'base' in k else None
                if v is None:
                    cells.append(f"{'-':>22}")
                    continue
                cell = f'{v:.4g}'
                if what[0] == 'ops':
                    cell += f" [{k[kind]['ops'][what[1]]['tlbi']:.0f}]"
                if kind == 'patched' and b:
                    cell += f' {v / b:.2f}x'
                cells.append(f'{cell:>22}')
            print(f'{cpus:5} {nodes:5}  {kind:8}' + ''.join(cells))
    print('memory after the workload: bytes of one CPU\'s root and of its window\'s tables '
          '(patched), of one node\'s copy of text and rodata and of all nodes\' text and '
          'module window tables (patched), more kB in PageTables and less kB free than base')
    print(f"{'CPUs':>5} {'nodes':>5}  {'root B':>10}{'window B':>10}{'copy B':>12}"
          f"{'text tbl B':>11}{'tables kB':>11}{'free kB':>10}")
    for (cpus, nodes), k in sorted(by.items()):
        p, b = k.get('patched', {}).get('memory', {}), k.get('base', {}).get('memory', {})
        print(f"{cpus:5} {nodes:5}  {p.get('pcpt_table_bytes_per_cpu', 0):10.0f}"
              f"{p.get('pcpw_table_bytes_per_cpu', 0):10.0f}"
              f"{p.get('ktext_copy_bytes', 0):12.0f}"
              f"{p.get('ktext_table_bytes', 0):11.0f}"
              f"{p.get('page_tables', 0) - b.get('page_tables', 0):11.0f}"
              f"{b.get('mem_free', 0) - p.get('mem_free', 0):10.0f}")
    # Growth per CPU at the node count with the most topologies.
    counts = {}
    for cpus, nodes in by:
        counts[nodes] = counts.get(nodes, 0) + 1
    nodes = max(counts, key=lambda n: (counts[n], n))
    growth = {}
    if counts[nodes] >= 2:
        print(f'growth with the CPUs at {nodes} nodes: patched - base instructions, a line '
              'fitted over those boots; the line at 384 CPUs (an extrapolation)')
        for what, label in cols:
            # A phase only the patched kernel has costs base nothing; any
            # other figure missing on either side drops the point.
            def base_of(k):
                b = get(k['base'], what)
                return 0 if b is None and what[1] in SCALE_PATCHED_ONLY else b
            pts = [(c, get(k['patched'], what) - base_of(k))
                   for (c, n), k in by.items() if n == nodes and 'base' in k and 'patched' in k
                   and get(k['patched'], what) is not None and base_of(k) is not None]
            if len(pts) < 2:
                continue
            a, b = fit(pts)
            growth[label] = {'per_cpu': b, 'intercept': a, 'at_384': a + 384 * b}
            print(f'  {label:12} {b:12.1f} per CPU, {a + 384 * b:14.4g} more than base at 384 CPUs')
    scaling_plot(by, cols, out)
    return growth


def scaling_plot(by, cols, out):
    """patched/base per figure against CPUs (the 4-node series) and
    against nodes (16 CPUs)."""
    def value(r, what):
        kind, key = what
        return r['ops'].get(key, {}).get('insns') if kind == 'ops' else r['phases'].get(key)

    def ratio(k, what):
        p, b = value(k['patched'], what), value(k['base'], what)
        return f'{p / b:.6f}' if p and b else 'NaN'

    def extra(k, what):
        # A phase only the patched kernel has costs base nothing.
        p, b = value(k['patched'], what), value(k['base'], what)
        if b is None and what[1] in SCALE_PATCHED_ONLY:
            b = 0
        return f'{p - b:.0f}' if p is not None and b is not None and p > b else 'NaN'

    series = {}
    for (cpus, nodes), k in sorted(by.items()):
        if 'base' in k and 'patched' in k:
            series.setdefault(('cpus', nodes), []).append((cpus, k))
            series.setdefault(('nodes', cpus), []).append((nodes, k))
    panels = []
    for axis in ('cpus', 'nodes'):
        cand = [(len(v), key) for key, v in series.items() if key[0] == axis and len(v) >= 2]
        if not cand:
            continue
        key = max(cand)[1]
        dat = os.path.join(out, f'scaling-{axis}.dat')
        with open(dat, 'w') as f:
            for x, k in series[key]:
                f.write(f"{x} {' '.join(ratio(k, w) for w, _ in cols)}\n")
        what = 'CPUs' if axis == 'cpus' else 'nodes'
        fixed = f'{key[1]} nodes' if axis == 'cpus' else f'{key[1]} CPUs'
        plots = ', '.join(f'"{dat}" using 1:{i + 2} with linespoints title "{label}"'
                          for i, (_, label) in enumerate(cols))
        panels.append(f'set title "patched / base against {what} ({fixed})"\n'
                      f'set xlabel "{what}"\nplot {plots}, 1 with lines lt 0 notitle\n')
        if axis != 'cpus':
            continue
        dat = os.path.join(out, 'scaling-extra.dat')
        with open(dat, 'w') as f:
            for x, k in series[key]:
                f.write(f"{x} {' '.join(extra(k, w) for w, _ in cols)}\n")
        plots = ', '.join(f'"{dat}" using 1:{i + 2} with linespoints title "{label}"'
                          for i, (_, label) in enumerate(cols))
        panels.append(f'set title "patched - base, kernel instructions ({fixed})"\n'
                      f'set xlabel "CPUs"\nset logscale y 10\nplot {plots}\n'
                      'set logscale y 2\n')
    if not panels:
        return
    script = (f'set terminal pngcairo size {600 * len(panels)},480 noenhanced\n'
              f'set output "{os.path.join(out, "scaling.png")}"\n'
              f'set multiplot layout 1,{len(panels)}\nset grid\nset logscale y 2\n' +
              ''.join(panels) + 'unset multiplot\n')
    try:
        subprocess.run(['gnuplot'], input=script, text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f'pcpt: bench: gnuplot failed ({e}); no PNG', file=sys.stderr)


def boot_print(brows, top=15):
    """The boot phases where the patched kernel differs most from base."""
    names = [k[0] for k in PATHLEN_KINDS]

    def med(r, n):
        return r['kernels'].get(n, {}).get('median', 0)

    print('boot to the workload, kernel instructions of all CPUs, by phase (medians, the '
          'largest spread last; phases every kernel has, where patched differs most from base, '
          'then the total; "+" lines: parts of the phase above only the patched kernel has):')
    print(f"{'phase':44}" + ''.join(f'{n:>15}' for n in names) + '  spread')
    rest = [r for r in brows if r['phase'] != 'total']
    rest.sort(key=lambda r: -abs(med(r, 'patched') - med(r, 'base')))
    for r in rest[:top] + [r for r in brows if r['phase'] == 'total']:
        spread = max((k['spread'] for k in r['kernels'].values()), default=0)
        print(f"{r['phase'][:44]:44}" + ''.join(f'{med(r, n):15.0f}' for n in names) +
              f'  {100 * spread:.2f}%')
        for sub, v in sorted(r['parts'].get('patched', {}).items(), key=lambda x: -x[1]):
            print(f"{'+ ' + sub[:42]:44}" + ''.join(
                f"{r['parts'].get(n, {}).get(sub, 0):15.0f}" for n in names))


def pathlen_print(rows, out):
    names = [k[0] for k in PATHLEN_KINDS]
    print('kernel instructions per operation (TCG plugin; * = spread over 1% or under 3 runs,'
          ' not exact); ratio to base (1node: to base_1node)')
    print(f"{'operation':28}" + ''.join(f'{n:>16}' for n in names))
    for r in rows:
        k = r['kernels']
        cells = []
        for n in names:
            if n not in k:
                cells.append(f"{'-':>16}")
                continue
            ref = k.get('base_1node' if n.endswith('_1node') else 'base')
            mark = '' if k[n]['exact'] else '*'
            ratio = (f" {k[n]['median'] / ref['median']:.3f}"
                     if ref and ref['median'] and not n.startswith('base') else '')
            cells.append(f"{k[n]['median']:.0f}{mark}{ratio}".rjust(16))
        print(f"{r['op'] + ' (' + r['cpus'] + ')':28}" + ''.join(cells))
    dat = os.path.join(out, 'pathlen.dat')
    with open(dat, 'w') as f:
        for i, r in enumerate(x for x in rows if x['cpus'] == 'cpu'):
            k = r['kernels']
            vals = []
            for n, ref in (('patched', 'base'), ('patched_off', 'base'),
                           ('patched_1node', 'base_1node')):
                ok = n in k and ref in k and k[ref]['median']
                vals.append(f"{k[n]['median'] / k[ref]['median']:.6f}" if ok else 'NaN')
            f.write(f"{i} {' '.join(vals)} \"{r['op']}\"\n")
    script = f'''
set terminal pngcairo size 1000,480 noenhanced
set output "{os.path.join(out, 'pathlen.png')}"
set title "kernel instructions per operation, ratio to base (1.0 = same)"
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.6
set yrange [0:*]
set xtics rotate by -30
set grid ytics
plot "{dat}" using 2:xtic(5) title "patched", "" using 3 title "percpu_pgtable=off", \\
     "" using 4 title "one node", 1 with lines lt 0 notitle
'''
    try:
        subprocess.run(['gnuplot'], input=script, text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f'pcpt: bench: gnuplot failed ({e}); no PNG', file=sys.stderr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--out', required=True)
    ap.add_argument('--iters', type=int, default=3)
    ap.add_argument('--initrd', required=True)
    ap.add_argument('--plugin', help='ktext_fetch_plugin.so: also measure fetch locality')
    ap.add_argument('--pathlen-plugin', help='pathlen_plugin.so: kernel path length per operation')
    ap.add_argument('--pathlen-runs', type=int, default=3)
    ap.add_argument('--pathlen-ops', default='',
                    help="the path-length part's operations, NAME[:N] comma-separated (all)")
    ap.add_argument('--parts', default='timing,fetch,pathlen',
                    help='comma-separated: timing, fetch, pathlen, scaling')
    ap.add_argument('--scale-topologies', default='4x2 4x4 4x8 4x16 2x8 8x2',
                    help='NODESxCPUS_PER_NODE boots of the scaling part')
    ap.add_argument('--probe-objs', nargs=2, metavar=('BASE_O', 'PATCHED_O'),
                    help='this_cpu_probe.o of each kernel: count the probes as the kernels run them')
    ap.add_argument('base', help="the base kernel's Image, '-' for none (timing, fetch)")
    ap.add_argument('patched')
    a = ap.parse_args()
    if a.iters < 1:
        sys.exit('bench.py: --iters must be at least 1')
    if a.pathlen_runs < 1:
        sys.exit('bench.py: --pathlen-runs must be at least 1')
    parts = set(a.parts.split(','))
    if not parts or parts - {'timing', 'fetch', 'pathlen', 'scaling'}:
        sys.exit(f"bench.py: --parts '{a.parts}': accepted: timing, fetch, pathlen, scaling, "
                 'comma-separated')
    if a.base == '-' and parts & {'pathlen', 'scaling'}:
        sys.exit('bench.py: the pathlen and scaling parts compare with base: give the base Image')
    kernels = [(k, i) for k, i in (('base', a.base), ('patched', a.patched)) if i != '-']
    topologies = parse_topologies(a.scale_topologies) if 'scaling' in parts else []
    if topologies and not a.pathlen_plugin:
        sys.exit('bench.py: the scaling part needs --pathlen-plugin')
    os.makedirs(a.out, exist_ok=True)

    samples = {'base': {}, 'patched': {}}
    units, errors = {}, []
    for i in range(a.iters if 'timing' in parts else 0):
        for kind, image in kernels:
            log = os.path.join(a.out, f'{kind}-{i}.log')
            print(f'pcpt: bench run {i + 1}/{a.iters}: {kind}', flush=True)
            m, e = boot(image, a.initrd, log)
            errors += e
            if i == 0:
                probe_dump(log, os.path.join(a.out, f'{kind}-probe-text.txt'))
            for name, (v, unit, better) in m.items():
                samples[kind].setdefault(name, []).append(v)
                units[name] = (unit, better)

    if a.plugin and 'fetch' in parts:
        for kind, image in kernels:
            print(f'pcpt: bench fetch locality: {kind}', flush=True)
            m, e = fetch_locality(kind, image, a.initrd, a.plugin, a.out)
            errors += e
            for name, (v, unit, better) in m.items():
                samples[kind].setdefault(name, []).append(v)
                units[name] = (unit, better)

    rows = []
    for name in sorted(units):
        b = samples['base'].get(name, [])
        p = samples['patched'].get(name, [])
        if (not b and a.base != '-') or not p:
            # A memory figure one kernel cannot give (the window's
            # tables without ptdump) is left out; a timing is an error.
            if units[name] == ('B', 'info'):
                print(f'pcpt: bench: {name} left out (base {len(b)}, patched {len(p)} samples)')
            else:
                errors.append(f'{name}: missing samples (base {len(b)}, patched {len(p)})')
            continue
        mb, mp = statistics.median(b) if b else None, statistics.median(p)
        ratio = mp / mb if mb else None
        unit, better = units[name]
        rows.append({'metric': name, 'unit': unit, 'better': better,
                     'base': mb, 'patched': mp, 'ratio': ratio,
                     'base_samples': b, 'patched_samples': p})

    if a.probe_objs and 'timing' in parts:
        print('this_cpu probes as the running kernels execute them (after alternatives):')
        r = subprocess.call([sys.executable, os.path.join(HERE, 'insn-count.py'),
                             '--json', os.path.join(a.out, 'this_cpu_insns_live.json'),
                             '--live', os.path.join(a.out, 'base-probe-text.txt'),
                             os.path.join(a.out, 'patched-probe-text.txt')] + a.probe_objs)
        if r:
            errors.append('this_cpu probes of the running kernels: see above')

    plrows, brows = [], []
    if a.pathlen_plugin and 'pathlen' in parts:
        plrows, brows, e = pathlen({'base': a.base, 'patched': a.patched}, a.initrd,
                                   a.pathlen_plugin, a.out, a.pathlen_runs, a.pathlen_ops)
        errors += e

    srows, growth = [], {}
    if topologies:
        srows, e = scaling({'base': a.base, 'patched': a.patched}, a.initrd,
                           a.pathlen_plugin, a.out, topologies)
        errors += e

    if rows:
        print(f"{'metric':32} {'unit':7} {'base':>12} {'patched':>12} {'ratio':>7}  better")
    for r in rows:
        ratio = f"{r['ratio']:7.3f}" if r['ratio'] is not None else '    n/a'
        base = f"{r['base']:12.4g}" if r['base'] is not None else f"{'-':>12}"
        print(f"{r['metric']:32} {r['unit']:7} {base} {r['patched']:12.4g} "
              f"{ratio}  {r['better']}")
    if plrows:
        pathlen_print(plrows, a.out)
    if brows:
        boot_print(brows)
    if srows:
        growth = scaling_print(srows, a.out)
    with open(os.path.join(a.out, 'results.json'), 'w') as f:
        json.dump({'iters': a.iters, 'parts': sorted(parts), 'rows': rows,
                   'pathlen': plrows, 'boot_phases': brows, 'scaling': srows,
                   'scaling_growth': growth, 'errors': errors, 'skipped': SKIPPED,
                   'topology': {k: os.environ.get(k) for k in
                                ('NODES', 'CPUS_PER_NODE', 'NODE_MEM', 'CMDLINE')}},
                  f, indent=1)
    if any(r['ratio'] is not None for r in rows):
        plot(a.out, rows)
    for op, why in sorted(SKIPPED.items()):
        print(f'pcpt: bench: {op} not run: {why}')
    for e in errors:
        print('pcpt: bench error: ' + e)
    pngs = [f for f in ('results.png', 'pathlen.png', 'scaling.png')
            if os.path.exists(os.path.join(a.out, f))]
    print(f"pcpt: results in {a.out}/results.json{''.join(' and ' + a.out + '/' + f for f in pngs)}")
    return 1 if errors else 0


def plot(out, rows):
    """Bar chart of patched/base ratio per metric (1.0 = no change)."""
    dat = os.path.join(out, 'ratios.dat')
    with open(dat, 'w') as f:
        for i, r in enumerate(r for r in rows if r['ratio'] is not None):
            f.write(f"{i} {r['ratio']:.6f} \"{r['metric']}\"\n")
    script = f'''
set terminal pngcairo size 900,480 noenhanced
set output "{os.path.join(out, 'results.png')}"
set title "patched / base (median of runs; 1.0 = no change)"
set style fill solid 0.6
set boxwidth 0.6
set yrange [0:*]
set xtics rotate by -30
set grid ytics
plot "{dat}" using 1:2:xtic(3) with boxes notitle, 1 with lines lt 0 notitle
'''
    try:
        subprocess.run(['gnuplot'], input=script, text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f'pcpt: bench: gnuplot failed ({e}); no PNG', file=sys.stderr)


if __name__ == '__main__':
    sys.exit(main())
