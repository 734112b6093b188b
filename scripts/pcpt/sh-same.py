#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Check that reformatted shell scripts still parse to the same commands.
#
#   sh-same.py REV FILE...
#
# Compares each FILE with its version at git revision REV after bash's
# own normalisation (declare -f of a function holding the script), which
# drops comments, joins continuation lines and normalises blanks.  One
# difference is accepted: a double-quoted message given to pass, fail,
# skip or echo split into several arguments at the top level of that
# command ("a b" -> "a" "b"), which those join again with one space (not
# inside $(...), ${...}, another command, a redirection, a here-document
# or a quoted string spanning lines; not for an echo whose first argument
# does not start with a quote and a character other than '-' or '$';
# not in a script that uses IFS, which "$*" joins with, nor for a
# message command the script defines itself).  IFS set in a sourced file
# is not seen.  The first line (#!) must not change, and a #!/bin/sh script
# must still parse with dash (bash accepts bash-only syntax).  Every
# other difference is printed for review by hand and exits 1.

import difflib
import os
import re
import subprocess
import sys

MSG_RE = re.compile(r'(pass|fail|skip|echo)\s')
KEYWORDS_RE = re.compile(r'(if|then|else|elif|do|while|until|!)\s')
HEREDOC_RE = re.compile(r'<<(-?)\s*(["\']?)([A-Za-z_][A-Za-z0-9_]*)\2')
IFS_RE = re.compile(r'\bIFS\b(?!=\S*\s+read\b)')
DEF_RE = re.compile(r'^\s*(?:function\s+)?(pass|fail|skip|echo)\s*\(\)', re.M)


def norm(text):
    src = '__f() {\n' + text + '\n}\ndeclare -f __f\n'
    r = subprocess.run(['bash', '-c', src], capture_output=True, text=True)
    if r.returncode or r.stderr:
        sys.exit('sh-same: bash cannot parse it: ' + r.stderr)
    return r.stdout.splitlines()


def join_splits(s, redefined=()):
    """S (a whole normalised script) with message arguments joined where split.

    REDEFINED: message commands the script defines itself, whose splits
    are not joined (their definition decides how arguments are joined).
    """
    out, stack, i = [], [], 0
    at_cmd, in_msg, heredocs = True, False, []
    while i < len(s):
        c = s[i]
        ctx = stack[-1] if stack else None
        if c == '\\' and ctx != 'sq':
            out.append(s[i:i + 2])
            i += 2
            at_cmd = False
            continue
        if ctx in (None, 'cmd') and c == '\n' and heredocs:
            # Here-document bodies are copied as they are.
            out.append(c)
            i += 1
            for strip, word in heredocs:
                while i < len(s):
                    j = s.find('\n', i)
                    j = len(s) if j < 0 else j + 1
                    line = s[i:j]
                    out.append(line)
                    i = j
                    if (line.lstrip('\t') if strip else line).rstrip('\n') == word:
                        break
            heredocs = []
            if ctx is None:
                at_cmd, in_msg = True, False
            continue
        if ctx in (None, 'cmd') and s.startswith('<<', i) and not s.startswith('<<<', i):
            m = HEREDOC_RE.match(s, i)
            if m:
                heredocs.append((m.group(1) == '-', m.group(3)))
                out.append(m.group(0))
                i = m.end()
                if ctx is None:
                    at_cmd = in_msg = False
                continue
        if ctx is None:
            if c == '\n':
                out.append(c)
                i += 1
                at_cmd, in_msg = True, False
                continue
            if s.startswith('$(', i) or s.startswith('${', i):
                stack.append('cmd' if s[i + 1] == '(' else 'brace')
                out.append(s[i:i + 2])
                i += 2
                at_cmd = False
                continue
            if c in ';&|(){}<>':
                at_cmd, in_msg = c not in '<>', False
                out.append(c)
                i += 1
                continue
            if c in ' \t':
                j = i
                while j < len(s) and s[j] in ' \t':
                    j += 1
                prev = out[-1] if out else ''
                if in_msg and prev.endswith('"') and not prev.endswith('\\"') and \
                        s[j:j + 1] == '"':
                    out[-1] = prev[:-1]
                    out.append(' ')
                    stack.append('dq')
                    i = j + 1
                    continue
                out.append(s[i:j])
                i = j
                continue
            if at_cmd:
                m = KEYWORDS_RE.match(s, i)
                if m:
                    out.append(m.group(0))
                    i = m.end()
                    continue
                m = MSG_RE.match(s, i)
                # echo takes options from a first argument that starts
                # with '-', which a variable may hold too.
                in_msg = bool(m) and m.group(1) not in redefined and not (
                    m.group(1) == 'echo' and
                    not re.match(r'"[^-$"]', s[m.end():].lstrip(' \t')))
                at_cmd = False
            if c == '"':
                stack.append('dq')
            elif c == "'":
                stack.append('sq')
        elif ctx == 'sq':
            if c == "'":
                stack.pop()
        elif ctx == 'dq':
            if c == '"':
                stack.pop()
            elif s.startswith('$(', i) or s.startswith('${', i):
                stack.append('cmd' if s[i + 1] == '(' else 'brace')
                out.append(s[i:i + 2])
                i += 2
                continue
        elif ctx == 'cmd':
            if c == '(':
                stack.append('cmd')
            elif c == ')':
                stack.pop()
            elif c == '"':
                stack.append('dq')
            elif c == "'":
                stack.append('sq')
        elif ctx == 'brace':
            if c == '}':
                stack.pop()
            elif c == '"':
                stack.append('dq')
        out.append(c)
        i += 1
    return ''.join(out)


def main():
    if len(sys.argv) < 3:
        sys.exit('usage: sh-same.py REV FILE...')
    rev, bad = sys.argv[1], 0
    for f in sys.argv[2:]:
        d = os.path.dirname(os.path.abspath(f))
        old = subprocess.run(['git', 'show', f'{rev}:./{os.path.basename(f)}'], cwd=d,
                             capture_output=True, text=True, check=True).stdout
        new = open(f).read()
        problems = []
        first_old, first_new = old.split('\n', 1)[0], new.split('\n', 1)[0]
        if first_old != first_new and '#!' in (first_old[:2], first_new[:2]):
            problems.append(f'the #! line changed: {first_new}')
        if new.startswith('#!/bin/sh'):
            r = subprocess.run(['dash', '-n', f], capture_output=True, text=True)
            if r.returncode:
                problems.append('dash cannot parse it: ' + r.stderr.strip())
        if old.count("$'") != new.count("$'"):
            problems.append("$'...' quoting added or removed (bash's parse hides it, dash "
                            "does not know it)")
        a, b = norm(old), norm(new)
        if a == b and not problems:
            print('same  ', f)
            continue
        redefined = set(DEF_RE.findall(new)) | set(DEF_RE.findall(old))
        ja = join_splits('\n'.join(a), redefined)
        jb = join_splits('\n'.join(b), redefined)
        if ja != jb:
            problems.append('commands differ')
        elif a != b and IFS_RE.search('\n'.join(b)):
            problems.append('IFS is used: "$*" joins the split messages with its first '
                            'character')
        for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
            if op == 'equal':
                continue
            # A hunk joined on its own, out of context, is only a hint
            # when the whole script does not join the same.
            hunk_same = join_splits('\n'.join(a[i1:i2]), redefined) == \
                join_splits('\n'.join(b[j1:j2]), redefined)
            if hunk_same:
                for y in b[j1:j2]:
                    if y not in a[i1:i2]:
                        print('  split:' if ja == jb else
                              '  split out of context (the script differs elsewhere):',
                              y.strip())
                continue
            print(f'  {op}: review by hand')
            for x in a[i1:i2]:
                print(f'  -{x}')
            for y in b[j1:j2]:
                print(f'  +{y}')
        for p in problems:
            print('  ' + p)
        bad += bool(problems)
        print('DIFFER' if problems else 'ok    ', f)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
