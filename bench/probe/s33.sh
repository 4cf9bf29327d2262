#!/bin/sh
# bench/probe/s33.sh — session thirty-three's H200 call (bench/NOTES.md
# run206): main after the sandwich merge. Carry build/bin and
# build/test/gpu_kernels (stripped).
#
#   LATE=SECONDS sh bench/probe/s33.sh
#
# runs, none begun past LATE (480) seconds: gpu_kernels; issue 9's bench
# (the six dense shapes, each numerics, 512 and 8192, per-launch tables);
# issue 10's (the four mixtures' shapes, q8); the lane and the oracle. The
# logs (tests/gpu/run's gpu-logs) go into $OUT/logs.tgz after each part,
# so a call cut short keeps what it took.
set -u
out=${OUT:-/tmp}
work=$(mktemp -d)
t0=$(date +%s)
late() { [ $(($(date +%s) - t0)) -gt ${LATE:-480} ] && { echo "== (past ${LATE:-480} s: $1 not begun)"; return 0; }; return 1; }
keep() { tar czf "$out/logs.tgz" -C "$work" . ; }
part() {   # NAME ENV... CHECKS...: tests/gpu/run with its logs in $work/NAME
    name=$1
    shift
    late "$name" && return
    echo "== $name"
    mkdir -p "$work/$name"
    env OUT="$work/$name" LOGOS_BIN=build/bin "$@" >"$work/$name.out" 2>&1
    sed -n '/^== summary/,$p' "$work/$name.out"
    keep
}
nvidia-smi -L
part kernels KERNELS_JOBS=8 sh tests/gpu/run kernels
part bench9 SHAPES="llama-3-8b llama-3.2-1b mistral-7b qwen2.5-0.5b qwen3-0.6b gemma-2-2b" \
    BENCH_NUMERICS="q8 q8x2 precise" sh tests/gpu/run bench
part bench10 SHAPES="gpt-oss-20b deepseek-v2-lite qwen3-next-80b-a3b lfm2-1.2b" \
    BENCH_NUMERICS=q8 sh tests/gpu/run bench
part lane LANE_JOBS=6 sh tests/gpu/run lane oracle
