#!/bin/sh
# bench/probe/s43.sh — session forty-three's second call (bench/NOTES.md
# run241): the units a warp of the products with a residual epilogue (o
# and down), 1 (main), 4 and 2, through build-ab/W (main with
# bench/probe/wr.patch: LOGOS_PROBE_WR read by logos-fuse; unset, W's plans
# are main's); W's dense lanes at 4; then the real Mistral shape against
# the reference (issue 7's owed check) through main's tools. Carry
# build/carry and build-ab/W.
#
#   LATE=SECONDS sh bench/probe/s43.sh
set -u
LATE=${LATE:-400}
. "$(dirname "$0")/call.sh"
carry_in || exit 3
nvidia-smi -L
W=build-ab/W/bin
for s in llama-3-8b llama-3.2-1b qwen3-0.6b gemma-2-2b; do
    i=0
    for wr in 1 4 2 1 4; do
        late "$s WR=$wr" && break
        i=$((i + 1))   # each run its own log: a WR's second run keeps its first
        log="$work/wr.$s.$wr.$i"
        echo "== $s q8 WR=$wr"
        $W/logos-author decode_step examples/$s.yaml | LOGOS_PROBE_WR=$wr $W/logos-fuse --lane cuda --numerics q8 -q |
            $W/logos-bench --synthetic 1 --pos 512 -n 50 --launch-reps 1 >"$log" 2>&1
        grep -E '^ +[0-9]+ +[0-9]+ ' "$log"
        grep -E '^ +[0-9]+  gemv' "$log" | head -5
    done
done
keep
if ! late laneW; then
    echo "== laneW (WR=4)"
    mkdir -p "$work/laneW"
    LOGOS_PROBE_WR=4 LOGOS_BIN=$W LANE_JOBS=6 OUT="$work/laneW" sh tests/gpu/run lane >"$work/laneW.out" 2>&1
    sed -n '/^== summary/,$p' "$work/laneW.out"
    grep FAIL "$work/laneW.out" | head
    keep
fi
if ! late mistral; then
    echo "== mistral-7b real shape (main)"
    mkdir -p "$work/mistral"
    SHAPE_CHECKS=mistral-7b SHAPE_NUMERICS="precise q8" SHAPE_STEPS=16 LANE_ALONE= LOGOS_BIN=build/bin \
        OUT="$work/mistral" sh tests/gpu/run shapes >"$work/mistral.out" 2>&1
    grep -E 'mistral|summary|passed' "$work/mistral.out" | head -12
    keep
fi
