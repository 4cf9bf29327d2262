#!/bin/sh
# bench/probe/s47.sh — session forty-seven's first call (bench/NOTES.md
# run256/run257): whether x's stages hold mmi's ring (build-ab/M,
# bench/probe/nomath.patch: no math, no tile ends, against build-ab/MX,
# bench/probe/noxm.patch: the same with x never loaded, each stage waiting
# for the weights alone), the 8B's q8 decode batch of 64 (f16 caches,
# position 512) under each; then bench/probe/s46.sh (mmvfeed.patch's
# checks and timings). Everything travels packed in build-ab/s47.tar.xz
# (build/carry, build-ab/feed, build-ab/M, build-ab/MX: the device tool's
# 64 MiB holds the packed tools, not four unpacked sets):
#   tar cJf build-ab/s47.tar.xz build/carry build-ab/feed build-ab/M build-ab/MX
set -u
tar xJf build-ab/s47.tar.xz || exit 3
mkdir -p "${OUT:-/tmp}/mx"
(
    OUT=${OUT:-/tmp}/mx
    . "$(dirname "$0")/call.sh"
    open8
    bform build-ab/M/bin 64 M64
    bform build-ab/MX/bin 64 MX64
    keep
)
LATE=${LATE:-240} END=${END:-440} sh "$(dirname "$0")/s46.sh"
