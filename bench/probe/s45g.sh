#!/bin/sh
# bench/probe/s45g.sh — session forty-five's seventh call (bench/NOTES.md
# run250): what bounds mmi's stage loop: main (four warpgroups) against
# build-ab/N (bench/probe/noend2.patch: no tile ends) and build-ab/M
# (bench/probe/nomath.patch: no tile ends and no wgmma or scaling, each
# stage's data waited for and its slot given back: the ring's own pace),
# the 8B's q8 decode batches of 64 and 32 (f16 caches, position 512),
# steps and launches, twice. Carry build/carry, build-ab/N, build-ab/M.
set -u
. "$(dirname "$0")/call.sh"
open8
twice "64 32" build/bin:main build-ab/N/bin:N build-ab/M/bin:M
keep
