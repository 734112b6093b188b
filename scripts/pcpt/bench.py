#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Boot the base and the patched kernel alternately, ITERS times each, in
# pcpt.mode=bench; collect the PCPT-BENCH lines, and print a table of
# base, patched and patched/base ratio (medians), also written as JSON
# and plotted as PNG (gnuplot) under OUT.
#
# Usage: bench.py --out DIR --iters N --initrd CPIO [--plugin SO] BASE_IMAGE PATCHED_IMAGE
# With --plugin, each kernel is also booted once with the TCG plugin
# (tools/pcpt-bench/ktext_fetch_plugin.c) to count where its kernel
# instruction fetches come from: fetch_remote_pct_* are the percentages
# served from another node's memory, per node of the fetching CPU.
# The topology and command line come from the environment, as for boot.sh.

import argparse
import json
import os
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--out', required=True)
    ap.add_argument('--iters', type=int, default=3)
    ap.add_argument('--initrd', required=True)
    ap.add_argument('--plugin', help='ktext_fetch_plugin.so: also measure fetch locality')
    ap.add_argument('base')
    ap.add_argument('patched')
    a = ap.parse_args()
    if a.iters < 1:
        sys.exit('bench.py: --iters must be at least 1')
    os.makedirs(a.out, exist_ok=True)

    samples = {'base': {}, 'patched': {}}
    units, errors = {}, []
    for i in range(a.iters):
        for kind, image in (('base', a.base), ('patched', a.patched)):
            log = os.path.join(a.out, f'{kind}-{i}.log')
            print(f'pcpt: bench run {i + 1}/{a.iters}: {kind}', flush=True)
            m, e = boot(image, a.initrd, log)
            errors += e
            for name, (v, unit, better) in m.items():
                samples[kind].setdefault(name, []).append(v)
                units[name] = (unit, better)

    if a.plugin:
        for kind, image in (('base', a.base), ('patched', a.patched)):
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
        if not b or not p:
            errors.append(f'{name}: missing samples (base {len(b)}, patched {len(p)})')
            continue
        mb, mp = statistics.median(b), statistics.median(p)
        ratio = mp / mb if mb else None
        unit, better = units[name]
        rows.append({'metric': name, 'unit': unit, 'better': better,
                     'base': mb, 'patched': mp, 'ratio': ratio,
                     'base_samples': b, 'patched_samples': p})

    print(f"{'metric':32} {'unit':7} {'base':>12} {'patched':>12} {'ratio':>7}  better")
    for r in rows:
        ratio = f"{r['ratio']:7.3f}" if r['ratio'] is not None else '    n/a'
        print(f"{r['metric']:32} {r['unit']:7} {r['base']:12.4g} {r['patched']:12.4g} "
              f"{ratio}  {r['better']}")
    with open(os.path.join(a.out, 'results.json'), 'w') as f:
        json.dump({'iters': a.iters, 'rows': rows, 'errors': errors,
                   'topology': {k: os.environ.get(k) for k in
                                ('NODES', 'CPUS_PER_NODE', 'NODE_MEM', 'CMDLINE')}},
                  f, indent=1)
    plot(a.out, rows)
    for e in errors:
        print('pcpt: bench error: ' + e)
    print(f'pcpt: results in {a.out}/results.json and {a.out}/results.png')
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
