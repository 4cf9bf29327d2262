#!/bin/sh
# bench/probe/s45h.sh — session forty-five's eighth call (bench/NOTES.md
# run251): whether the weights' layout holds mmi's ring: build-ab/M
# (bench/probe/nomath.patch: no tile ends, no math, each stage only
# waited for) against build-ab/C (bench/probe/contig.patch: the same, each
# stage's weight quants read as 32 KB in a row instead of 256 bytes of
# each of 128 rows), and main, the 8B's q8 decode batch of 64 (f16 caches,
# position 512), twice. Carry build/carry, build-ab/M, build-ab/C.
set -u
. "$(dirname "$0")/call.sh"
open8
twice 64 build/bin:main build-ab/M/bin:M build-ab/C/bin:C
keep
