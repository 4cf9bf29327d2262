#!/bin/sh
# bench/probe/s51.sh — bench/probe/rnsmem.patch (norm_split's row scales
# in shared memory, slot 32 of each row's sums, instead of registers held
# across an unrolled loop: fewer spills where RN meets XS 2; build-ab/rs)
# checked and timed against main (bench/NOTES.md run271). Carry
# build-ab/s51.tar.xz:
#   sh bench/probe/patched.sh bench/probe/rnsmem.patch rs
#   tar cJf build-ab/s51.tar.xz build/carry build-ab/rs
set -u
. "$(dirname "$0")/call.sh"
open_tar build-ab/s51.tar.xz
rs=$PWD/build-ab/rs
echo "== gpu_kernels (rnsmem.patch): mmv cases"
kcheck "$rs/test/gpu_kernels" mmv kmv
tail -1 "$work/kmv"
spec16 llama-3-8b l8
spec16 llama-3.2-1b l1
echo "== q8 decode batches, f16 caches, position 512: ms main, ms rnsmem.patch"
pairs "$rs" l8:16 l8:24 l8:32 l1:16 l1:24 l8:16
late "lane" || {
    echo "== lane llama qwen2 and the batch sweep (rnsmem.patch's tools)"
    LANE_REF=numerics LOGOS_BIN=$rs/bin timeout 150 sh tests/gpu/lane llama qwen2 >"$work/lane" 2>&1
    LANE_REF=numerics LOGOS_BIN=$rs/bin LANE_BATCHES="3 16 64" timeout 150 sh tests/gpu/lane llama qwen3 >>"$work/lane" 2>&1
    grep -E "FAIL|passed" "$work/lane" | tail -8
}
keep
