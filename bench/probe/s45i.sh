#!/bin/sh
# bench/probe/s45i.sh — session forty-five's ninth call (bench/NOTES.md
# run252): whether TMA's box rows hold mmi's ring: build-ab/M
# (bench/probe/nomath.patch: no tile ends, no math) against build-ab/B1
# (bulkB1.patch: the same, each stage's weights one bulk copy of its
# quants and one of its scales a part, from contiguous places of the same
# sizes) and build-ab/B2 (bulkB2.patch: x's stage by bulk copies too), the
# 8B's q8 decode batch of 64 (f16 caches, position 512), twice. Carry
# build/carry, build-ab/M, build-ab/B1, build-ab/B2.
set -u
. "$(dirname "$0")/call.sh"
open8
twice 64 build/bin:main build-ab/M/bin:M build-ab/B1/bin:B1. build-ab/B2/bin:B2.
keep
