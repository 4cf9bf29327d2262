#!/bin/sh
# bench/probe/s45b.sh — session forty-five's second call (bench/NOTES.md
# run245): how much of mmi's step its tile ends cost (build-ab/N: main with
# bench/probe/noend.patch, the tile ends left out, wrong sums, timing
# only) at the 8B's batch of 64; main's mmi against mmv at batches 40, 48
# and 56 (where the default should turn to mmi); then every family's tiny
# spec in a batch of 64 through mmi (--mmi-rows 33) under q8 against the
# reference (tests/gpu/run sweep). Carry build/carry and build-ab/N.
set -u
LATE=${LATE:-420}
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
        END { for (k in t) printf "%-40s n=%d avg %.1f us\n", k, n[k], 1000 * t[k] / n[k] }' "$work/$n.csv" | sort | grep -v "rownorm\|embed\|argmax"
    head -3 "$work/$n.err"
}
form build/bin 64 mmi64 --mmi-rows 3
form build-ab/N/bin 64 noend64 --mmi-rows 3
form build/bin 64 mmi64b --mmi-rows 3
for b in 56 48 40; do
    form build/bin $b mmi$b --mmi-rows 3
    form build/bin $b mmv$b
done
keep
mv "$out/logs.tgz" "$out/logs.steps.tgz"
late sweep && exit 0
echo "== sweep, batches of 64 through mmi, q8"
LANE_FUSE_ARGS="--mmi-rows 33" SWEEP_CHUNKS=1 SWEEP_BATCHES=64 SWEEP_NUMERICS=q8 SWEEP_JOBS=8 \
    timeout $((${LATE} + 150 - ($(date +%s) - t0))) sh tests/gpu/run sweep >"$work/sweep.out" 2>&1
echo "status $?"
grep -v " ok " "$work/sweep.out" | tail -30
keep
