#!/bin/sh
# bench/probe/splits.sh — a probe (bench/NOTES.md run166): the 8B's and the
# 1B's q8 prefill chunks of 512 with mmh's products of one activation (q/k/v)
# and gated pair split over clusters of 2 by hand (SK=2, the grid's z), each
# timed against the plan logos-fuse makes, with --compare in one run.
#   sh bench/probe/splits.sh          (LOGOS_BIN: the tools, default build/bin)
set -u
bin=${LOGOS_BIN:-build/bin}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for s in llama-3-8b llama-3.2-1b; do
    "$bin/logos-author" prefill "examples/$s.yaml" | "$bin/logos-fuse" --numerics q8 --rows 512 >"$tmp/a.plan" || exit 1
    sed '/^launch mmh .*GATE=1 /s/SK=1 grid \([0-9]*\) \([0-9]*\) 1 /SK=2 grid \1 \2 2 /' "$tmp/a.plan" >"$tmp/gated.plan"
    sed '/^launch mmh .*PARTS=3 /s/SK=1 grid \([0-9]*\) \([0-9]*\) 1 /SK=2 grid \1 \2 2 /' "$tmp/a.plan" >"$tmp/qkv.plan"
    sed '/^launch mmh .*PARTS=3 /s/SK=1 grid \([0-9]*\) \([0-9]*\) 1 /SK=2 grid \1 \2 2 /' "$tmp/gated.plan" >"$tmp/both.plan"
    for v in gated qkv both; do
        echo "== $s: $v split over clusters of 2 against logos-fuse's plan"
        "$bin/logos-bench" --synthetic 1 --form prefill --chunk 512 --pos 1 -n 30 --launch-reps 3 \
            --compare "$tmp/a.plan" "$tmp/$v.plan" 2>&1 | grep -E '^ +1 |takes'
    done
done
