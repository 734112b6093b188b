#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Find every this_cpu window operation in a vmlinux and check its atomics.

Usage: window-sites.py [--json OUT] [--mutate-one COPY] VMLINUX

Every window operation starts with an ALTERNATIVE_CB() whose callback is
this_cpu_window_patch() (arch/arm64/include/asm/this_cpu_window_ops.h),
so the image's .altinstructions table lists them all, inlined or not.
For each one, the instructions that follow it in the image and the LSE
replacements (the ARM64_HAS_LSE_ATOMICS alternatives) that patch them are
decoded from the file's bytes: the count of sites, and of each LSE atomic
they use, is exact for that build.

A store-only LSE atomic (STADD, STCLR, STEOR, STSET, ST{S,U}{MAX,MIN}:
the LD* forms with the zero register as destination and no acquire) in a
window operation is an error: some cores (Neoverse V2, in public
measurements on the arm kernel list about 50 ns against 8 ns) execute it
far, at the interconnect, where the LD* form with a result runs in the
L1.  The window keeps the LD* form; this checks that no operation, and
no assembler alias, turned it into the store-only one.

Exits 1 on a store-only atomic, 4 for an image without the window (no
this_cpu_window_patch symbol), 2 when a read-modify-write site's LSE form
cannot be found (the decoding no longer matches the image).

--mutate-one COPY rewrites the destination of the first window LDADD it
finds to the zero register (making it STADD) and writes the image so
changed to COPY: the run, and any later one on COPY, shows the check
failing.
"""
import argparse
import collections
import json
import re
import struct
import subprocess
import sys

READELF = 'aarch64-linux-gnu-readelf'
NM = 'aarch64-linux-gnu-nm'
ARM64_CB_BIT = 1 << 15
# Exit status for an image without the window (1: a store-only atomic
# found; anything else: the image could not be read as expected).
NO_WINDOW = 4
# Instructions an operation (in line or its copy out of line) may span at
# most: the longest, cmpxchg_double, is well under this.
REACH = 32

LSE_OPS = ['add', 'clr', 'eor', 'set', 'smax', 'smin', 'umax', 'umin']
SIZES = ['b', 'h', '', '']


def lse_name(w):
    """Mnemonic of an LSE atomic memory operation or CAS, else None."""
    if (w & 0x3f200c00) == 0x38200000:
        size, a, r = w >> 30, (w >> 23) & 1, (w >> 22) & 1
        o3, opc, rt = (w >> 15) & 1, (w >> 12) & 7, w & 31
        if o3 and opc == 0:
            base = 'swp'
        elif o3:
            return None
        elif rt == 31 and not a:
            base = 'st' + LSE_OPS[opc]
            return base + ('l' if r else '') + SIZES[size]
        else:
            base = 'ld' + LSE_OPS[opc]
        return base + ('a' if a else '') + ('l' if r else '') + SIZES[size]
    if (w & 0x3fa07c00) == 0x08a07c00:
        size = w >> 30
        return 'cas' + ('a' if (w >> 22) & 1 else '') + ('l' if (w >> 15) & 1 else '') + \
            SIZES[size]
    if (w & 0xbfa07c00) == 0x08207c00:
        return 'casp'
    return None


def sections(path):
    out = subprocess.run([READELF, '-S', '-W', path], capture_output=True, text=True,
                         check=True).stdout
    secs = {}
    for line in out.splitlines():
        m = re.match(r'\s*\[\s*\d+\]\s+(\S+)\s+(\S+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)',
                     line)
        if m and m.group(2) != 'NOBITS':
            secs[m.group(1)] = (int(m.group(3), 16), int(m.group(4), 16), int(m.group(5), 16))
    return secs


def symbol(path, name):
    out = subprocess.run([NM, path], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == name:
            return int(parts[0], 16)
    print(f'window-sites: no symbol {name} in {path}: not a kernel with the this_cpu window',
          file=sys.stderr)
    sys.exit(NO_WINDOW)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--json')
    ap.add_argument('--mutate-one', metavar='COPY')
    ap.add_argument('vmlinux')
    args = ap.parse_args()

    data = bytearray(open(args.vmlinux, 'rb').read())
    secs = sections(args.vmlinux)
    if '.altinstructions' not in secs:
        sys.exit(f'window-sites: no .altinstructions in {args.vmlinux}')

    def word(addr):
        """The instruction at virtual address ADDR, from the section holding it."""
        for vma, off, size in secs.values():
            if vma and vma <= addr < vma + size:
                return struct.unpack_from('<I', data, off + addr - vma)[0]
        raise KeyError(hex(addr))

    def put(addr, w):
        for vma, off, size in secs.values():
            if vma and vma <= addr < vma + size:
                struct.pack_into('<I', data, off + addr - vma, w)
                return

    cb = symbol(args.vmlinux, 'this_cpu_window_patch')
    vma, off, size = secs['.altinstructions']
    entries = []
    for i in range(size // 12):
        e = vma + 12 * i
        o, a, cap, olen, alen = struct.unpack_from('<iiHBB', data, off + 12 * i)
        entries.append((e + o, e + 4 + a, cap, olen, alen))
    sites = sorted(orig for orig, alt, cap, _, _ in entries
                   if cap & ARM64_CB_BIT and alt == cb)
    if not sites:
        sys.exit('window-sites: no window operation in the image')
    # Non-callback alternatives by the address they patch.
    by_orig = collections.defaultdict(list)
    for orig, alt, cap, olen, alen in entries:
        if not cap & ARM64_CB_BIT:
            by_orig[orig].append((alt, alen))

    def branch_target(addr, w):
        """Target of an unconditional B at ADDR, else None."""
        if (w & 0xfc000000) != 0x14000000:
            return None
        imm = w & 0x3ffffff
        if imm & 0x2000000:
            imm -= 0x4000000
        return addr + 4 * imm

    def extent(s):
        """[start, end) of the operation at site S, and of its copy out of line.

        The site's "b 8f" jumps to the copy that masks interrupts; that
        copy ends with "b 9b", back to the first instruction after the
        operation in line.
        """
        ool = branch_target(s, word(s))
        if ool is None:
            sys.exit(f'window-sites: site {s:#x} does not start with "b 8f"')
        for a in range(ool, ool + 4 * REACH, 4):
            back = branch_target(a, word(a))
            if back is not None and s < back <= s + 4 * REACH:
                return (s + 4, back), (ool, a)
        sys.exit(f'window-sites: no "b 9b" after the copy of site {s:#x} at {ool:#x}')

    mutated = None
    kinds = collections.Counter()
    far, lost = [], []
    lengths = collections.Counter()
    for s in sites:
        found = set()
        inline, ool = extent(s)
        lengths[(inline[1] - inline[0]) // 4] += 1
        for lo, hi in (inline, ool):
            for a in range(lo, hi, 4):
                words = [(a, word(a))]
                for alt, alen in by_orig.get(a, []):
                    words += [(alt + k, word(alt + k)) for k in range(0, alen, 4)]
                for addr, w in words:
                    name = lse_name(w)
                    if name is None:
                        continue
                    if args.mutate_one and mutated is None and name.startswith('ldadd'):
                        w = (w & ~31) | 31
                        put(addr, w)
                        mutated = addr
                        name = lse_name(w)
                    found.add(name)
                    if name.startswith('st'):
                        far.append(f'{name} at {addr:#x} (site {s:#x})')
        for name in found:
            kinds[name] += 1
        if not found:
            # A read or a write is one instruction in line; anything
            # longer is a read-modify-write whose LSE form was not found,
            # which would let a store-only atomic there go unseen.
            if inline[1] - inline[0] > 4:
                lost.append(f'site {s:#x}: {(inline[1] - inline[0]) // 4} instructions '
                            'in line, no LSE atomic found for them')
            kinds['(no atomic: read, write)'] += 1

    if args.mutate_one:
        if mutated is None:
            sys.exit('window-sites: no window LDADD to mutate')
        with open(args.mutate_one, 'wb') as f:
            f.write(data)
    res = {'vmlinux': args.vmlinux, 'sites': len(sites),
           'atomics_per_site': dict(sorted(kinds.items())),
           'inline_instructions': {str(k): v for k, v in sorted(lengths.items())},
           'store_only': far}
    if args.mutate_one:
        res['mutated'] = hex(mutated) if mutated is not None else None
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(res, f, indent=1)
    print(f'window-sites: {len(sites)} this_cpu window operations in {args.vmlinux}')
    for name, c in sorted(kinds.items()):
        print(f'window-sites:   {c:6} {name}')
    print('window-sites: instructions in line after the first (sites): ' +
          ', '.join(f'{k} ({v})' for k, v in sorted(lengths.items())))
    rc = 0
    if far:
        print(f'window-sites: error: {len(far)} store-only LSE atomic(s) in window operations '
              f'(keep the LD* form: some cores execute ST* far): {"; ".join(far[:5])}',
              file=sys.stderr)
        rc = 1
    # An image built without LSE atomics (ARM64_USE_LSE_ATOMICS=n) has
    # none in any alternative; one that has them must have them at every
    # read-modify-write window site.
    lse_built = any(lse_name(word(alt + k)) for alts in by_orig.values()
                    for alt, alen in alts for k in range(0, alen, 4))
    if lost and lse_built:
        print(f'window-sites: error: {len(lost)} read-modify-write operation(s) whose LSE form '
              f'was not found (the decoding is out of step with the image): {"; ".join(lost[:5])}',
              file=sys.stderr)
        rc = rc or 2
    elif lost:
        print('window-sites: no LSE form at any read-modify-write site: an image without LSE '
              'atomics, nothing to check')
    if rc:
        return rc
    print('window-sites: no store-only LSE atomic (ST*) in any window operation')
    return 0


if __name__ == '__main__':
    sys.exit(main())
