#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Always fails.  Run only when the guest command line has pcpt.broken=1
# ('make check BROKEN=1'), to prove the harness turns a failing test into
# a failed test command.
DIR=$(dirname "$0")
. "$DIR/lib.sh"

fail "deliberately broken test (pcpt.broken=1)"
finish
