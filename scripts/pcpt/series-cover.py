#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Fill in the cover letter git format-patch --cover-letter wrote: the
# subject and text from scripts/pcpt/series-cover.txt (first line: the
# subject), with @FIGURES@ replaced by the bench's figures from the
# results committed under results/ (make bench-report's tables).
#
# Usage: series-cover.py REPO COVER-LETTER

import glob
import os
import subprocess
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit('usage: series-cover.py REPO COVER-LETTER')
    repo, cover = sys.argv[1:]
    with open(os.path.join(repo, 'scripts/pcpt/series-cover.txt')) as f:
        subject, _, text = f.read().partition('\n')
    if '@FIGURES@' in text:
        res = sorted(glob.glob(os.path.join(repo, 'results/*.json')))
        if res:
            figs = subprocess.run([sys.executable,
                                   os.path.join(repo, 'scripts/pcpt/bench-md.py')] + res,
                                  check=True, capture_output=True, text=True).stdout
            figs = '\n'.join(l for l in figs.splitlines() if not l.startswith('<!--'))
        else:
            figs = '(no results/*.json in the repository: run make bench)'
        text = text.replace('@FIGURES@', figs.strip())
    with open(cover) as f:
        letter = f.read()
    if '*** SUBJECT HERE ***' not in letter or '*** BLURB HERE ***' not in letter:
        sys.exit(f'series-cover.py: {cover}: not a git format-patch cover letter')
    letter = letter.replace('*** SUBJECT HERE ***', subject.strip())
    letter = letter.replace('*** BLURB HERE ***', text.strip('\n'))
    with open(cover, 'w') as f:
        f.write(letter)


if __name__ == '__main__':
    main()
