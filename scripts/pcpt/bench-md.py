#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Render the results.json files make bench writes as the Markdown tables
# of the README's figures section, so that the README carries the bench's
# output rather than figures copied by hand.
#
# Usage: bench-md.py RESULTS.json [RESULTS.json ...]
# Each file contributes the parts it has: timing and fetch rows, path
# length per operation, the boot phases, scaling; insn-count.py's JSON
# (this_cpu_insns*.json) the instructions of each this_cpu probe;
# window-sites.py's (window_sites.json) the window operations of the image.

import json
import os
import sys

# Operations in the order of the table, and the CPUs counted: the loop's
# CPU where the operation stays on it, all CPUs where it involves others.
OPS = (('getppid', 'cpu', 'getppid'),
       ('read1', 'cpu', 'read 1 byte of /dev/zero'),
       ('pipe_rtt', 'all', 'pipe round trip, CPU 1 to the last'),
       ('fork_exit_wait', 'cpu', 'fork + exit + wait'),
       ('page_fault', 'cpu', 'mmap + touch + munmap (a page fault)'),
       ('open_close', 'cpu', 'open + close'),
       ('static_key', 'all', 'static key on + off (`sched_switch`)'),
       ('module_key', 'all', 'static key on + off (one site in a module)'),
       ('ftrace', 'all', 'function tracer on + off (`vfs_read`)'),
       ('module', 'all', 'module load + unload (256 KiB of text)'),
       ('new_top_entry', 'cpu', '`vmalloc()` + `vfree()` creating a top-level entry'),
       ('top_entry_clear', 'cpu', 'a top-level entry made and cleared (vmemmap, as memory '
        'hot-add and hot-remove)'))
KERNELS = ('base', 'patched', 'patched_off', 'base_1node', 'patched_1node')
HEAD = ('base', 'patched', '`percpu_pgtable=off`', 'base, 1 node', 'patched, 1 node')


def num(v):
    return f'{v:,.0f}' if abs(v) >= 100 else f'{v:.3g}'


def cell(k, name):
    """A kernel's median with '*' when not exact, and its ratio to base."""
    if name not in k:
        return '-'
    ref = k.get('base_1node' if name.endswith('_1node') else 'base')
    v = k[name]
    s = num(v['median']) + ('' if v.get('exact') else '*')
    if ref and ref['median'] and not name.startswith('base'):
        s += f" ({v['median'] / ref['median']:.3f})"
    return s


def pathlen(rows, topo):
    by = {(r['op'], r['cpus']): r['kernels'] for r in rows}
    print(f"Kernel instructions per operation, {topo}; `*`: the runs differ by more "
          'than 1% (not exact); in brackets the ratio to base (to base on one node for the '
          'one-node kernel); window ops, TLBIs and `DSB ISH` per operation on all CPUs '
          '(`*` there too when the runs differ by more than 1% or the count is negative):\n')
    print('| operation (CPUs counted) | ' + ' | '.join(HEAD) +
          ' | window ops | TLBI / DSB ISH, base → patched |')
    print('|---' * (len(HEAD) + 3) + '|')
    verdict = []
    for op, where, label in OPS:
        k = by.get((op, where))
        if not k:
            continue
        w = by.get((op, 'window ops'), {}).get('patched', {}).get('median', 0)
        t = by.get((op, 'TLBI'), {})
        d = by.get((op, 'DSB ISH'), {})

        def m(x, n):
            """A count per operation; '*' when the runs differ by more than
            1% or it is negative (a difference of two intervals that work
            left over from the previous iterations biased: not a count)."""
            v = x.get(n, {})
            bad = not v.get('exact', True) or v.get('median', 0) < 0
            return num(v.get('median', 0)) + ('*' if bad else '')
        wo = by.get((op, 'window ops'), {})
        print(f'| {label} ({where}) | ' + ' | '.join(cell(k, n) for n in KERNELS) +
              f" | {m(wo, 'patched') if wo else num(w)} | {m(t, 'base')} / {m(d, 'base')} → "
              f"{m(t, 'patched')} / {m(d, 'patched')} |")
        for n, ref in (('patched_off', 'base'), ('patched_1node', 'base_1node'),
                       ('patched', 'base')):
            if n in k and ref in k and k[ref]['median']:
                r = k[n]['median'] / k[ref]['median']
                exact = k[n].get('exact') and k[ref].get('exact')
                verdict.append((op, n, r, exact))
    print()
    for n, what in (('patched_off', 'switched off'), ('patched_1node', 'on one node')):
        v = [x for x in verdict if x[1] == n]
        within = [x[0] for x in v if abs(x[2] - 1) <= 0.005 and x[3]]
        other = [f'{x[0]} {x[2]:.3f}{"" if x[3] else "*"}' for x in v
                 if not (abs(x[2] - 1) <= 0.005 and x[3])]
        print(f"- {what}: within 0.5% of base, exactly, on {', '.join(within) or 'none'}; "
              f"not: {', '.join(other) or 'none'}.")
    below = [x[0] for x in verdict if x[1] == 'patched' and x[2] < 0.995 and x[3]]
    print(f"- patched below base by more than 0.5%, exactly: {', '.join(below) or 'none'}.\n")


def phases(rows, top=8):
    def med(r, n):
        return r['kernels'].get(n, {}).get('median', 0)
    rest = [r for r in rows if r['phase'] != 'total']
    rest.sort(key=lambda r: -abs(med(r, 'patched') - med(r, 'base')))
    # Only phases whose spread is small: the others move with the host
    # between boots and say nothing about the kernels.
    steady = [r for r in rest
              if all(len(k['samples']) >= 3 for k in r['kernels'].values()) and
              max((k['spread'] for k in r['kernels'].values()), default=0) <= 0.01][:top]
    # And every phase holding a part only the patched kernel has (the text
    # switch runs inside a phase that moves with the host): '*' if unsteady.
    parts = [r for r in rest if r not in steady and
             any(v >= 1e5 for v in r['parts'].get('patched', {}).values())]
    print('Boot to the workload, kernel instructions of all CPUs, the phases where patched '
          'differs most from base (of those within 1% across boots), the phases holding '
          'work only the patched kernel does (`*`: the phase differs by more than 1% '
          'across boots), then the total; "+": parts only the patched kernel has:\n')
    print('| phase | ' + ' | '.join(HEAD) + ' |')
    print('|---' * (len(HEAD) + 1) + '|')
    for r in steady + parts + [r for r in rows if r['phase'] == 'total']:
        star = '*' if r in parts else ''
        print(f"| {r['phase']}{star} | " + ' | '.join(
            f'{med(r, n) / 1e6:.2f}M' + (f' ({med(r, n) / med(r, "base"):.3f})'
                                          if n != 'base' and med(r, 'base') else '')
            for n in KERNELS) + ' |')
        for sub, v in sorted(r['parts'].get('patched', {}).items(), key=lambda x: -x[1]):
            if v >= 1e5:
                print(f'| + {sub} | ' + ' | '.join(
                    f"{r['parts'].get(n, {}).get(sub, 0) / 1e6:.2f}M" for n in KERNELS) + ' |')
    print()


def scaling(rows, growth):
    by = {}
    for r in rows:
        by.setdefault((r['cpus'], r['nodes']), {})[r['kernel']] = r
    # The operations the rows have: older runs toggled the tracepoint's key.
    ops = [op for op in ('new_top_entry', 'top_entry_clear', 'module', 'module_key',
                         'static_key') if any(op in r['ops'] for r in rows)]
    ph = (('early', 'boot to percpu'), ('kernel_replication_init', 'text tables'),
          ('percpu_pgtable_register_client#2', 'text switch'), ('ptdump_check_wx', 'W^X check'),
          ('total', 'boot'))
    print('Scaling, one boot per topology and kernel (exact counts of that boot; how much '
          'they move between boots is what the path-length table\'s `*` says at 8 CPUs): '
          'kernel instructions of all CPUs, patched (ratio to base; TLBIs per operation in '
          'brackets), and memory:\n')
    print('| CPUs | nodes | ' + ' | '.join(ops) + ' | ' + ' | '.join(p[1] for p in ph) +
          ' | root | window tables | copy per node | text tables, all nodes | '
          'PageTables, MemFree vs base |')
    print('|---' * (2 + len(ops) + len(ph) + 5) + '|')
    for (cpus, nodes), k in sorted(by.items()):
        p, b = k.get('patched'), k.get('base')
        if not p or not b:
            continue
        cells = []
        for op in ops:
            x, y = p['ops'].get(op), b['ops'].get(op)
            cells.append(f"{num(x['insns'])} ({x['insns'] / y['insns']:.2f}; {x['tlbi']:.0f})"
                         if x and y else '-')
        for key, _ in ph:
            x, y = p['phases'].get(key), b['phases'].get(key)
            cells.append(f'{x / 1e6:.2f}M' + (f' ({x / y:.2f})' if y else '') if x else '-')
        pm, bm = p['memory'], b['memory']
        cells.append(f"{pm.get('pcpt_table_bytes_per_cpu', 0) / 1024:.0f} KiB")
        w = pm.get('pcpw_table_bytes_per_cpu')
        cells.append(f'{w / 1024:.0f} KiB' if w is not None else '-')
        cells.append(f"{pm.get('ktext_copy_bytes', 0) / 2**20:.1f} MiB")
        t = pm.get('ktext_table_bytes')
        cells.append(f'{t / 1024:.0f} KiB' if t is not None else '-')
        cells.append(f"{pm.get('page_tables', 0) - bm.get('page_tables', 0):+.0f} / "
                     f"{pm.get('mem_free', 0) - bm.get('mem_free', 0):+.0f} kB")
        print(f'| {cpus} | {nodes} | ' + ' | '.join(cells) + ' |')
    if growth:
        print('\nGrowth per CPU (patched - base, a line fitted over the boots with the node '
              'count most of them have) and that line at 384 CPUs, an extrapolation:\n')
        print('| figure | per CPU | at 384 CPUs |')
        print('|---|---|---|')
        for label, g in growth.items():
            print(f"| {label} | {num(g['per_cpu'])} | {num(g['at_384'])} |")
    print()


def timing(rows):
    print('| metric | unit | base | patched | ratio |')
    print('|---|---|---|---|---|')
    for r in rows:
        b = num(r['base']) if r.get('base') is not None else '-'
        ratio = f"{r['ratio']:.3f}" if r.get('ratio') is not None else '-'
        print(f"| {r['metric']} | {r['unit']} | {b} | {num(r['patched'])} | {ratio} |")
    print()


def probes(rows, live):
    """insn-count.py's JSON: a this_cpu probe's instructions per kernel."""
    print(('this_cpu operations as the running kernels execute them (the probe module\'s '
           'text read back after alternatives)' if live else
           'this_cpu operations in the probe module\'s object files') +
          ', instructions of one probe function (a C function doing one operation); '
          '"patched has": which of a TPIDR read, a preempt count update, a call, a stack '
          'frame or a store-only atomic the patched probe still has:\n')
    print('| operation | base | patched | patched/base | patched has |')
    print('|---|---|---|---|---|')
    for r in rows:
        b, p = r.get('base', {}), r.get('patched', {})
        has = [k for k in ('tpidr', 'preempt_count', 'call', 'frame', 'st_atomic') if p.get(k)]
        ratio = f"{p['insns'] / b['insns']:.2f}" if b.get('insns') and 'insns' in p else '-'
        print(f"| `{r['op']}` | {b.get('insns', '-')} | {p.get('insns', '-')} | {ratio} | "
              f"{', '.join(has) or 'none'} |")
    print()


def window_sites(r):
    """window-sites.py's JSON: the window operations of the patched image."""
    print(f"this_cpu window operations in the patched image, decoded from its "
          f".altinstructions: {r['sites']:,} sites (each an inlined this_cpu op); "
          f"store-only LSE atomics (ST*) among them: {len(r['store_only'])}. "
          f"Sites per atomic they are patched to on a CPU with LSE (without it, each "
          f"keeps its LL/SC loop):\n")
    print('| atomic | sites |')
    print('|---|---|')
    for name, n in sorted(r['atomics_per_site'].items(), key=lambda x: -x[1]):
        print(f'| `{name}` | {n} |')
    print()


def main():
    if len(sys.argv) < 2:
        sys.exit('usage: bench-md.py RESULTS.json [RESULTS.json ...]')
    for path in sys.argv[1:]:
        try:
            with open(path) as f:
                r = json.load(f)
        except (OSError, ValueError) as e:
            sys.exit(f'bench-md.py: {path}: {e}')
        if isinstance(r, list):
            print(f'<!-- from {path} -->\n')
            probes(r, 'live' in os.path.basename(path))
            continue
        if 'atomics_per_site' in r:
            print(f'<!-- from {path} -->\n')
            window_sites(r)
            continue
        t = r.get('topology', {})
        # The scaling part boots its own topologies, listed in its rows.
        topo = ('scaling topologies' if r.get('parts') == ['scaling'] else
                f"{t.get('NODES')} nodes x {t.get('CPUS_PER_NODE')} CPUs, "
                f"parts {', '.join(r.get('parts', []))}")
        print(f'<!-- from {path}: {topo} -->\n')
        if r.get('rows'):
            timing(r['rows'])
        if r.get('pathlen'):
            pathlen(r['pathlen'], topo)
        if r.get('boot_phases'):
            phases(r['boot_phases'])
        if r.get('scaling'):
            scaling(r['scaling'], r.get('scaling_growth'))
        for e in r.get('errors', []):
            print(f'- bench error: {e}')


if __name__ == '__main__':
    main()
