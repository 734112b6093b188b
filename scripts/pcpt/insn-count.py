#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Count the instructions of the this_cpu probe functions in two objects.

Usage: insn-count.py --json OUT [--live BASE.txt PATCHED.txt] BASE.o PATCHED.o

Each pcpw_probe_* function (tools/pcpt-bench/this_cpu_probe.c) does one
this_cpu operation.  For each, in the base and the patched object: the
instructions of the function's own symbol range ([value, value + size) from
the symbol table, so out-of-line code after it does not count), not
counting NOPs (ftrace patch slots and alignment), and whether it reads
TPIDR, touches the preempt count (reads SP_EL0, where arm64 keeps the
current task), calls anything or builds a stack frame.

With --live, the same for the probes as the running kernels execute them
(after alternatives: the window's MOVZ, LSE atomics), from the module's
debugfs dump ("name hex" per probe), cut to the symbol sizes of the
objects.  A patched probe with a store-only LSE atomic (STADD and the
like, which some cores execute far, at the interconnect, rather than in
the L1 as LDADD) is an error: the window keeps the near form.
"""
import argparse
import json
import re
import subprocess
import sys
import tempfile

OBJDUMP = 'aarch64-linux-gnu-objdump'
NM = 'aarch64-linux-gnu-nm'


def functions(obj):
    """name -> (start, size) of every pcpw_probe_* function."""
    out = subprocess.run([NM, '-S', '--defined-only', obj], capture_output=True,
                         text=True, check=True).stdout
    funcs = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in 'tT' and parts[3].startswith('pcpw_probe_'):
            funcs[parts[3]] = (int(parts[0], 16), int(parts[1], 16))
    return funcs


def analyse(obj):
    funcs = functions(obj)
    dis = subprocess.run([OBJDUMP, '-d', '--no-show-raw-insn', obj], capture_output=True,
                         text=True, check=True).stdout
    insns = []  # (address, text) in .text
    section = None
    for line in dis.splitlines():
        m = re.match(r'Disassembly of section (\S+):', line)
        if m:
            section = m.group(1)
            continue
        m = re.match(r'\s*([0-9a-f]+):\s+(.*)$', line)
        if m and section == '.text':
            insns.append((int(m.group(1), 16), m.group(2).strip()))
    res = {}
    for name, (start, size) in funcs.items():
        body = [t for a, t in insns if start <= a < start + size and not t.startswith('nop')]
        res[name[len('pcpw_probe_'):]] = describe(body)
    return res


def describe(body):
    return {
        'insns': len(body),
        'tpidr': any(re.search(r'\bmrs\s.*tpidr_el[12]', t) for t in body),
        'preempt_count': any(re.search(r'\bmrs\s.*sp_el0', t) for t in body),
        'call': any(re.match(r'bl\s', t) for t in body),
        'frame': any(re.match(r'stp\s+x29,\s*x30', t) for t in body),
        'st_atomic': any(re.match(r'st(add|clr|eor|set|smax|smin|umax|umin)[al]?[bh]?\s', t)
                         for t in body),
        'code': body,
    }


def analyse_live(obj, dump):
    """The probes as a running kernel executes them: the module's dump of
    each probe's bytes, cut to the function's size in OBJ."""
    funcs = functions(obj)
    res = {}
    with open(dump) as f:
        for line in f:
            w = line.split()
            if len(w) != 2 or 'pcpw_probe_' + w[0] not in funcs:
                continue
            size = funcs['pcpw_probe_' + w[0]][1]
            try:
                code = bytes.fromhex(w[1])
            except ValueError:
                sys.exit(f'insn-count: {dump}: {w[0]}: not hex (a console line cut by the kernel?)')
            if len(code) < size:
                sys.exit(f'insn-count: {dump}: {w[0]}: {len(code)} bytes dumped, {size} needed')
            with tempfile.NamedTemporaryFile(suffix='.bin') as t:
                t.write(code[:size])
                t.flush()
                dis = subprocess.run([OBJDUMP, '-D', '-b', 'binary', '-m', 'aarch64',
                                      '--no-show-raw-insn', t.name],
                                     capture_output=True, text=True, check=True).stdout
            body = []
            for d in dis.splitlines():
                m = re.match(r'\s*([0-9a-f]+):\s+(.*)$', d)
                if m and not m.group(2).strip().startswith('nop'):
                    body.append(m.group(2).strip())
            res[w[0]] = describe(body)
    return res


def table(title, base, patched):
    print(f"{title:18} {'base':>5} {'patched':>7} {'ratio':>6}  patched has")
    rows = []
    for op in sorted(base):
        b, p = base[op], patched[op]
        flags = [k for k in ('tpidr', 'preempt_count', 'call', 'frame', 'st_atomic') if p[k]]
        print(f"{op:18} {b['insns']:5} {p['insns']:7} {p['insns'] / b['insns']:6.2f}  "
              f"{', '.join(flags) or 'none of: tpidr, preempt count, call, frame, ST* atomic'}")
        rows.append({'op': op, 'base': b, 'patched': p})
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--json', required=True)
    ap.add_argument('--live', nargs=2, metavar=('BASE_DUMP', 'PATCHED_DUMP'))
    ap.add_argument('base')
    ap.add_argument('patched')
    a = ap.parse_args()
    if a.live:
        base, patched = analyse_live(a.base, a.live[0]), analyse_live(a.patched, a.live[1])
        title = 'running kernel'
    else:
        base, patched = analyse(a.base), analyse(a.patched)
        title = 'this_cpu probe'
    if not base or set(base) != set(patched):
        sys.exit(f'insn-count: probe functions missing or different in {a.base} / {a.patched}')
    rows = table(title, base, patched)
    with open(a.json, 'w') as f:
        json.dump(rows, f, indent=1)
    far = [r['op'] for r in rows if r['patched']['st_atomic']]
    if a.live and far:
        sys.exit(f"insn-count: patched {', '.join(far)} use a store-only LSE atomic (ST*): "
                 'the window op must keep the near LD* form')


if __name__ == '__main__':
    main()
