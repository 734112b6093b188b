#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Judge one guest run from its console log, or sum up several runs.
#
#   results.py judge --tree TREE --label LABEL --boot-rc RC LOG
#       prints one line per test, writes LOG.json, exits 1 on any failure
#   results.py total JSON...
#       prints the failed tests again and the final "N passed, N failed"
#
# KTAP (built-in KUnit suites, printed while the kernel boots) and the
# kselftest TAP (printed by run_kselftest.sh between the PCPT-KSELFTEST
# markers) are both parsed by the kernel's own parser,
# tools/testing/kunit/kunit_parser.py.  Any Oops, BUG, WARNING, KASAN,
# KFENCE, UBSAN or lockdep report anywhere on the console fails the run,
# and so does a skip that scripts/pcpt/expected-skips does not expect on
# that boot.

import argparse
import io
import json
import os
import re
import subprocess
import sys

# Console reports that fail a run whatever the tests said.
SPLATS = [
    r'Kernel panic - not syncing',
    r'Internal error: Oops',
    r'\bOops\b',
    r'Unable to handle kernel',
    r'kernel BUG at',
    r'\bBUG: ',
    r'WARNING: .* at ',
    r'WARNING: (possible|suspicious|inconsistent|bad unlock|nested lock|held lock)',
    r'BUG: KASAN',
    r'BUG: KFENCE',
    r'UBSAN:',
    r'INFO: (possible|lockdep|task .* blocked)',
    r'rcu: INFO: .* detected stalls',
    r'watchdog: BUG: soft lockup',
    r'Call trace:',
    # Reports without " at " or a stack: lockdep's "lock held when
    # returning to user space!", SLUB's "BUG kmalloc-64 (...): ...".
    r'^WARNING: ',
    r'\bBUG [\w.-]+ \(',
    # The W^X check's failure: its WARN_ONCE() may have been used up.
    r'Checked W\+X mappings.*FAILED',
]
SPLAT_RE = re.compile('|'.join(SPLATS))
# Lines that match a pattern above but report nothing wrong.
BENIGN_RE = re.compile(r'KTAP|^\s*#|ok \d+ |BUG: KASAN: .*kunit|'
                       r'KASAN: (?:use-after-free|slab-out-of-bounds).* in kasan_')
TS_RE = re.compile(r'^\[\s*\d+\.\d+\]\s?')
# A test that provokes a fault on purpose (ktext_lkdtm.sh) writes these
# around it: between them, the lines of exactly one Oops are expected;
# any other report there still fails the run.
EXPECT_BEGIN_RE = re.compile(r'PCPT-EXPECT-OOPS-BEGIN (\S.*)$')
EXPECT_END_RE = re.compile(r'PCPT-EXPECT-OOPS-END (\S.*)$')
OOPS_PART_RE = re.compile(r'Internal error: Oops|Unable to handle kernel|Call trace:')
# A test that provokes a WARN_ONCE() on purpose (the W^X check's, from
# KUnit) prints these around it, with a pattern for the WARNING line (the
# function that warns, or its caller where it is inlined): between them,
# at most one WARNING matching it
# (once: WARN_ONCE), its call trace and the W^X check's FAILED lines are
# expected; any other report there still fails the run.
EXPECT_WARN_BEGIN_RE = re.compile(r'PCPT-EXPECT-WARN-BEGIN (\S+)')
EXPECT_WARN_END_RE = re.compile(r'PCPT-EXPECT-WARN-END (\S+)')
# A test that injects allocation failures (pcpt_faults.sh) writes these
# around it: between them, the stack the kernel prints after reporting a
# failed allocation is expected (one "Call trace:" right after each
# report); every other report, with its own header line, still fails.
INJECT_BEGIN_RE = re.compile(r'PCPT-INJECT-BEGIN (\S.*)$')
INJECT_END_RE = re.compile(r'PCPT-INJECT-END (\S.*)$')
CALL_TRACE_RE = re.compile(r'Call trace:\s*$')
# percpu prints a stack only for a failed non-atomic allocation.
ALLOC_REPORT_RE = re.compile(r'page allocation failure: order|vmalloc error: size|'
                             r'percpu: allocation failed, size=\d+ align=\d+ atomic=0')


def load_parser(tree):
    sys.path.insert(0, os.path.join(tree, 'tools', 'testing', 'kunit'))
    import kunit_parser
    import kunit_printer
    return kunit_parser, kunit_printer


def section(lines, begin, end):
    """Lines strictly between the first BEGIN and the next END marker."""
    out, inside, closed = [], False, False
    for line in lines:
        if not inside and line.startswith(begin):
            inside = True
            continue
        if inside and line.startswith(end):
            closed = True
            break
        if inside:
            out.append(line)
    return out, inside, closed


def leaves(test, prefix, depth):
    """(name, status) of each test DEPTH levels below TEST."""
    if depth == 0 or not test.subtests:
        yield prefix, test.status
        return
    for sub in test.subtests:
        name = sub.name.replace('selftests: ', '').replace(': ', '/')
        yield from leaves(sub, f'{prefix}/{name}', depth - 1)


def judge(args):
    kp, printer = load_parser(args.tree)
    detail = open(args.log + '.parsed.txt', 'w')
    printer.stdout._output = detail
    printer.stdout._use_color = False

    with open(args.log, errors='replace') as f:
        lines = [l.rstrip('\r\n').replace('\r', '') for l in f]
    results = []

    def add(name, status, why=''):
        results.append({'name': f'{args.label}: {name}', 'status': status, 'why': why})

    reached = any(l.startswith('PCPT-REPORT-BEGIN') or l.startswith('PCPT-BENCH-BEGIN')
                  for l in lines)
    add('boot: guest reached its runner', 'pass' if reached else 'fail',
        '' if reached else 'no PCPT-REPORT-BEGIN on the console')
    done = any(l.startswith('PCPT-DONE') for l in lines)
    ok = done and args.boot_rc == 0
    add('boot: runner finished and guest powered off', 'pass' if ok else 'fail',
        '' if ok else f'boot.sh status {args.boot_rc}, PCPT-DONE {"seen" if done else "missing"}')

    # KUnit: the kernel prints KTAP before userspace starts.
    boot_part = []
    for l in lines:
        if l.startswith('PCPT-REPORT-BEGIN'):
            break
        boot_part.append(l)
    if args.expect_kunit:
        root = kp.parse_run_tests(boot_part)
        if root.status in (kp.TestStatus.FAILURE_TO_PARSE_TESTS, kp.TestStatus.NO_TESTS) \
           or not root.subtests:
            add('kunit: KTAP output', 'fail', 'no KUnit results on the console')
        for name, st in leaves(root, 'kunit', 2):
            add(name, status_word(kp, st))

    # kselftests.
    if args.expect_kselftest:
        body, began, closed = section(lines, 'PCPT-KSELFTEST-BEGIN', 'PCPT-KSELFTEST-END')
        if not began or not closed:
            add('kselftest: runner completed', 'fail',
                'PCPT-KSELFTEST markers missing: the runner did not start or did not finish')
        root = kp.parse_run_tests(body)
        if not root.subtests:
            add('kselftest: TAP output', 'fail', 'no kselftest results')
        for name, st in leaves(root, 'kselftest', 1):
            add(name, status_word(kp, st))

    splats = []
    expect, oopses = None, 0
    inject, alloc_report = None, -100
    warn_word, warns, warn_line = None, 0, -100
    for i, l in enumerate(lines):
        text = TS_RE.sub('', l)
        m = INJECT_BEGIN_RE.search(text)
        if m:
            inject = m.group(1)
            continue
        m = INJECT_END_RE.search(text)
        if m:
            inject = None
            continue
        if inject is not None and ALLOC_REPORT_RE.search(text):
            alloc_report = i
        # The report's CPU, Tainted and Hardware name lines come between.
        if inject is not None and CALL_TRACE_RE.search(text) and i - alloc_report <= 6:
            alloc_report = -100
            continue
        m = EXPECT_WARN_BEGIN_RE.search(text)
        if m:
            if warn_word is not None:
                add(f'console: expected warning: "{warn_word}" not closed', 'fail',
                    f'log line {i + 1}')
            warn_word, warns = m.group(1), 0
            continue
        m = EXPECT_WARN_END_RE.search(text)
        if m:
            if warn_word != m.group(1) or warns > 1:
                add(f'console: expected at most one warning in "{m.group(1)}", saw {warns}',
                    'fail', f'log line {i + 1}')
            warn_word = None
            continue
        if warn_word is not None and re.search(r'WARNING: .* at ', text) and \
                re.search(warn_word, text):
            warns += 1
            warn_line = i
            continue
        if warn_word is not None and re.search(r'Checked W\+X mappings.*FAILED', text):
            continue
        # The report's CPU, Tainted, Hardware name and register lines come
        # between the WARNING and its call trace.
        if warn_word is not None and CALL_TRACE_RE.search(text) and i - warn_line <= 40:
            warn_line = -100
            continue
        m = EXPECT_BEGIN_RE.search(text)
        if m:
            if expect is not None:
                add(f'console: expected Oops: "{expect}" not closed', 'fail', f'log line {i + 1}')
            expect, oopses = m.group(1), 0
            continue
        m = EXPECT_END_RE.search(text)
        if m:
            if expect != m.group(1) or oopses != 1:
                add(f'console: expected one Oops in "{m.group(1)}", saw {oopses}', 'fail',
                    f'log line {i + 1}')
            expect = None
            continue
        # The runner's output and the kernel's share the console: a kernel
        # line can be glued to the end of a test's "# ..." line, which
        # BENIGN_RE passes, so the expected Oops is counted first.
        if expect is not None and 'Internal error: Oops' in text:
            oopses += 1
            continue
        if SPLAT_RE.search(text) and not BENIGN_RE.search(text):
            if expect is not None and OOPS_PART_RE.search(text):
                continue
            splats.append((i, text.strip()))
    if expect is not None:
        add(f'console: expected Oops: "{expect}" not closed', 'fail', 'end of log')
    if inject is not None:
        add(f'console: injected failures: "{inject}" not closed', 'fail', 'end of log')
    if warn_word is not None:
        add(f'console: expected warning: "{warn_word}" not closed', 'fail', 'end of log')
    if splats:
        seen = set()
        for i, text in splats:
            key = re.sub(r'[0-9a-fx]{6,}|\d+', '#', text)[:80]
            if key in seen:
                continue
            seen.add(key)
            add(f'console: {text[:100]}', 'fail', f'log line {i + 1}')
    else:
        add('console: no Oops/BUG/WARNING/KASAN/lockdep report', 'pass')

    if args.vmlinux:
        judge_image(args.vmlinux, add)
    judge_skips(args.label, lines, results)
    detail.close()
    for r in results:
        word = {'pass': 'PASS', 'fail': 'FAIL', 'skip': 'SKIP'}[r['status']]
        print(f"{word:4} {r['name']}" + (f"  ({r['why']})" if r['why'] else ''))
    failed = [r for r in results if r['status'] == 'fail']
    if failed:
        print(f'--- end of console log {args.log} ---')
        for l in lines[-40:]:
            print('    ' + l)
        print(f'--- full log: {args.log}; parser detail: {args.log}.parsed.txt ---')
    with open(args.log + '.json', 'w') as f:
        json.dump({'label': args.label, 'log': args.log, 'results': results}, f, indent=1)
    return 1 if failed else 0


EXPECTED_SKIPS = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'expected-skips')


def judge_image(vmlinux, add):
    """The booted image's this_cpu window operations keep the near atomics.

    window-sites.py decodes every window operation of the image from its
    .altinstructions table; none may use a store-only LSE atomic.  An
    image whose configuration (the .config beside it) has no window has
    nothing to check; one that should have it and shows none fails.
    """
    name = 'image: no store-only LSE atomic (ST*) in its this_cpu window operations'
    if not os.path.isfile(vmlinux):
        add(name, 'fail', f'no {vmlinux} to check')
        return
    config = os.path.join(os.path.dirname(vmlinux), '.config')
    window = None
    if os.path.isfile(config):
        with open(config) as f:
            window = 'CONFIG_THIS_CPU_WINDOW=y\n' in f.read()
    r = subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                     'window-sites.py'), vmlinux],
                       capture_output=True, text=True)
    if r.returncode == 4 and window is False:
        return
    m = re.search(r'window-sites: (\d+) this_cpu window operations', r.stdout)
    if m:
        name = name.replace('its this_cpu', f'its {m.group(1)} this_cpu')
    add(name, 'pass' if r.returncode == 0 else 'fail',
        '' if r.returncode == 0 else (r.stderr.strip() or r.stdout.strip())[-300:])


def skip_reason(name, text):
    """The reason a skipped test gave, from the console (TEXT: lines without
    timestamps): KUnit's "ok N case # SKIP reason", or a selftest's last
    "# SKIP reason" line before the runner's result line for it."""
    kind, _, rest = name.partition('/')
    if kind == 'kunit':
        case = re.escape(rest.rsplit('/', 1)[-1])
        for t in text:
            m = re.match(rf'\s*ok \d+ {case} # SKIP ?(.*)$', t)
            if m:
                return m.group(1).strip()
        return ''
    script = re.escape(rest.rsplit('/', 1)[-1])
    end = next((i for i, t in enumerate(text)
                if re.match(rf'(not )?ok \d+ selftests: \S+: {script}\b', t)), None)
    if end is None:
        return ''
    for t in reversed(text[:end]):
        if re.match(r'(not )?ok \d+ selftests: ', t):
            break
        m = re.match(r'#.*# SKIP:? ?(.*)$', t)
        if m and m.group(1).strip():
            return m.group(1).strip()
        # ktap_test_skip after other results: "ok N reason # SKIP".
        m = re.match(r'#\s*ok \d+ (.*?)\s*# SKIP\s*$', t)
        if m:
            return m.group(1).strip()
    return ''


def judge_skips(label, lines, results):
    """Fail every skip that no rule of expected-skips accepts for this boot.

    A skip is only as good as its gate: a test whose precondition stops
    holding by mistake (a debugfs file renamed, an option no longer
    passed) would otherwise turn into a quiet SKIP on every boot.  A rule
    names the boots, the test and the reason it may give.
    """
    rules = []
    with open(EXPECTED_SKIPS) as f:
        for n, l in enumerate(f, 1):
            if not l.strip() or l.startswith('#'):
                continue
            fields = l.rstrip('\n').split('\t')
            if len(fields) != 4:
                sys.exit(f'{EXPECTED_SKIPS}:{n}: not boot-regex<TAB>test-regex<TAB>'
                         'reason-regex<TAB>why')
            rules.append(tuple(re.compile(x) for x in fields[:3]) + (fields[3],))
    text = [TS_RE.sub('', l) for l in lines]
    cmdline = next((t.split('Kernel command line:', 1)[1].strip()
                    for t in text if 'Kernel command line:' in t), '')
    # printk cuts a record at 1024 bytes, and make's CMDLINE comes last:
    # repeat it (the label's) after the console's line, so the options
    # given last are the ones the rules see last, cut or not.
    config, _, make_cmdline = label.partition(' ')
    boot = f"{config} | {cmdline} {make_cmdline}"
    prefix = f'{label}: '
    for r in results:
        if r['status'] != 'skip':
            continue
        name = r['name'][len(prefix):]
        reason = skip_reason(name, text)
        why = next((w for b, t, c, w in rules
                    if b.search(boot) and t.search(name) and c.search(reason)), None)
        if why is None:
            r['status'] = 'fail'
            r['why'] = (f'skipped ("{reason}"), and no rule in scripts/pcpt/expected-skips '
                        'expects that skip on this boot')
        elif not r['why']:
            r['why'] = why


def status_word(kp, st):
    if st == kp.TestStatus.SUCCESS:
        return 'pass'
    if st == kp.TestStatus.SKIPPED:
        return 'skip'
    return 'fail'


def total(args):
    counts = {'pass': 0, 'fail': 0, 'skip': 0}
    failed = []
    for path in args.json:
        if not os.path.exists(path):
            counts['fail'] += 1
            failed.append(f'{path}: run produced no results (build or boot failed)')
            continue
        with open(path) as f:
            data = json.load(f)
        for r in data['results']:
            counts[r['status']] += 1
            if r['status'] == 'fail':
                failed.append(r['name'] + (f"  ({r['why']})" if r['why'] else ''))
    if failed:
        print('Failed:')
        for name in failed:
            print('  ' + name)
    line = f"{counts['pass']} passed, {counts['fail']} failed"
    if counts['skip']:
        line += f", {counts['skip']} skipped"
    print(line)
    return 1 if counts['fail'] else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    sub = ap.add_subparsers(dest='cmd', required=True)
    j = sub.add_parser('judge')
    j.add_argument('--tree', required=True)
    j.add_argument('--label', required=True)
    j.add_argument('--boot-rc', type=int, required=True)
    j.add_argument('--expect-kunit', action='store_true')
    j.add_argument('--expect-kselftest', action='store_true')
    j.add_argument('--vmlinux', help='the booted image: check its this_cpu window operations')
    j.add_argument('log')
    t = sub.add_parser('total')
    t.add_argument('json', nargs='*')
    args = ap.parse_args()
    sys.exit(judge(args) if args.cmd == 'judge' else total(args))


if __name__ == '__main__':
    main()
