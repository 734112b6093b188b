#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Boot the base and the patched kernel alternately, ITERS times each, in
# pcpt.mode=bench; collect the PCPT-BENCH lines, and print a table of
# base, patched and patched/base ratio (medians), also written as JSON
# and plotted as PNG (gnuplot) under OUT.
#
# Usage: bench.py --out DIR --iters N --initrd CPIO BASE_IMAGE PATCHED_IMAGE
# The topology and command line come from the environment, as for boot.sh.

import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def boot(image, initrd, log):
    # The built-in KUnit suites differ between the kernels and would be
    # timed as boot time: both boot without running them.
    cmdline = (os.environ.get('CMDLINE', '') + ' kunit.enable=0').strip()
    env = dict(os.environ, MODE='bench', QUIET='1', CMDLINE=cmdline)
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--out', required=True)
    ap.add_argument('--iters', type=int, default=3)
    ap.add_argument('--initrd', required=True)
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
