#!/bin/sh
# bench/probe/s52.sh — two mmv changes against main, checked and timed
# (bench/NOTES.md run273): bench/probe/rnsmem.patch (build-ab/rs: norm_split's
# row scales in shared memory) and bench/probe/feed.patch (build-ab/fd: a
# warp's weight-row addresses computed at each stage it issues instead of
# held in 17 registers across the tile: ptxas's local memory in the default
# decode batches 32 -> 15 instantiations). Carry build-ab/s52.tar.xz:
#   sh bench/probe/patched.sh bench/probe/rnsmem.patch rs
#   sh bench/probe/patched.sh bench/probe/feed.patch fd
#   tar cJf build-ab/s52.tar.xz build/carry build-ab/rs build-ab/fd
set -u
. "$(dirname "$0")/call.sh"
open_tar build-ab/s52.tar.xz
for d in rs fd; do
    echo "== gpu_kernels ($d): mmv cases"
    kcheck "build-ab/$d/test/gpu_kernels" mmv "kmv$d"
    tail -1 "$work/kmv$d"
done
spec16 llama-3-8b l8
spec16 llama-3.2-1b l1
spec16 gemma-2-2b g2
for d in fd rs; do
    echo "== q8 decode batches, f16 caches, position 512: ms main, ms $d"
    pairs "$PWD/build-ab/$d" l8:16 l8:24 l8:32 l8:64 l1:16 l1:32 g2:32 g2:64 l8:16
done
late "lane" || {
    echo "== lane llama qwen2 gemma2 and the batch sweep (feed.patch's tools)"
    LANE_REF=numerics LOGOS_BIN=$PWD/build-ab/fd/bin timeout 150 sh tests/gpu/lane llama qwen2 gemma2 >"$work/lane" 2>&1
    LANE_REF=numerics LOGOS_BIN=$PWD/build-ab/fd/bin LANE_BATCHES="3 16 64" timeout 150 sh tests/gpu/lane llama qwen3 gemma2 >>"$work/lane" 2>&1
    grep -E "FAIL|passed" "$work/lane" | tail -8
}
keep
