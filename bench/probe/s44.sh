#!/bin/sh
# bench/probe/s44.sh — session forty-four's call (bench/NOTES.md run242):
# bench/wi8.cu's probe (int8 wgmma for 64 rows, carried as build/wi, with
# wr64's f16 order beside it), then mmi.cu (the same order in the lane,
# --mmi-rows): its gpu_kernels cases; the 8B's decode batches of 16, 32
# and 64 (q8, f16 caches, position 512) on mmv and on mmi; then the lane
# on three real shapes cut to 2 layers, batches of 4, 16 and 64 under q8
# with --mmi-rows 3, against the reference. Carry build/carry and build/wi.
#
#   LATE=SECONDS [S44_BATCHES="16 32 64"] sh bench/probe/s44.sh
set -u
LATE=${LATE:-400}
. "$(dirname "$0")/call.sh"
carry_in || exit 3
nvidia-smi -L
if ! late kernels; then
    echo "== gpu_kernels mmi"
    KERNELS_MATCH=mmi timeout 150 build/test/gpu_kernels >"$work/kernels.out" 2>&1
    grep -v ' ok ' "$work/kernels.out" | head -20
    tail -1 "$work/kernels.out"
    keep
fi
i=0
for a in "" "--mmi-rows 3"; do
    late "bench $a" && break
    i=$((i + 1))
    echo "== benchforms llama-3-8b q8 f16 caches, batches ${S44_BATCHES:-16 32 64} ($a)"
    BENCH_FUSE_ARGS=$a BENCH_CACHE=f16 BENCH_NUMERICS=q8 BENCH_CHUNKS= BENCH_BATCHES="${S44_BATCHES:-16 32 64}" BENCH_REPS=20 \
        BENCH_LAUNCH_REPS=2 OUT="$work/bf$i" timeout 150 sh tests/gpu/benchforms llama-3-8b >"$work/bf$i.out" 2>&1
    tail -5 "$work/bf$i.out"
    keep
done
if ! late wi8; then
    echo "== wi8"
    WI_BIN=build/wi sh bench/wi8.sh k1024s4a0 k1024s4a1 x3a1 x4a1 >"$work/wi8.out" 2>&1
    echo "status $?" >>"$work/wi8.out"
    WR_BIN=build/wi/wr sh bench/wr64.sh k1024a1 >>"$work/wi8.out" 2>&1
    cat "$work/wi8.out"
    keep
fi
if ! late lane; then
    echo "== lane, 2 layers, q8, --mmi-rows 3"
    specs=
    for s in llama-3.2-1b qwen3-0.6b gemma-2-2b; do
        sed 's/^layers: .*/layers: 2/' "examples/$s.yaml" >"$work/$s-l2.yaml"
        specs="$specs $work/$s-l2.yaml"
    done
    LANE_FUSE_ARGS="--mmi-rows 3" LANE_SPECS="$specs" LANE_BATCHES="4 16 64" LANE_STEPS=8 LANE_NUMERICS=q8 \
        LANE_REF=numerics LANE_ALONE= LOGOS_BIN=build/bin sh tests/gpu/lane >"$work/lane.out" 2>&1
    echo "status $?" >>"$work/lane.out"
    tail -14 "$work/lane.out"
    keep
fi
