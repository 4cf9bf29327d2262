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
carry_in || exit 3
nvidia-smi -L
sed 's/^dim: \(.*\)/dim: \1\ncache: f16/; s/^ctx: .*/ctx: 1024/' examples/llama-3-8b.yaml >"$work/s.yaml"
form() {   # BIN BATCH NAME FUSE-ARGS...: the step and its launches by kind
    d=$1 b=$2 n=$3; shift 3
    $d/logos-author decode_batch --batch "$b" "$work/s.yaml" | $d/logos-fuse --numerics q8 "$@" >"$work/$n.plan"
    timeout 45 $d/logos-bench --form decode_batch --synthetic 1 --pos 512 -n 10 --launch-reps 1 --csv "$work/$n.plan" >"$work/$n.csv" 2>"$work/$n.err"
    echo "== $n (batch $b $*): bench status $?"
    awk -F, '$1 == "step" { print "step ms", $9 } $1 == "launch" { k = $7; sub(/ q8.*/, "", k); t[k] += $9; n[k]++ }
        END { for (k in t) printf "%-40s n=%d avg %.1f us\n", k, n[k], 1000 * t[k] / n[k] }' "$work/$n.csv" | sort | grep -v "rownorm\|embed\|argmax\|attend"
    head -3 "$work/$n.err"
}
for r in 1 2; do
    form build/bin 64 main64.$r
    form build-ab/M/bin 64 M64.$r
    form build-ab/B1/bin 64 B1.$r
    form build-ab/B2/bin 64 B2.$r
done
keep
