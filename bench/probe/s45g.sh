#!/bin/sh
# bench/probe/s45g.sh — session forty-five's seventh call (bench/NOTES.md
# run250): what bounds mmi's stage loop: main (four warpgroups) against
# build-ab/N (bench/probe/noend2.patch: no tile ends) and build-ab/M
# (bench/probe/nomath.patch: no tile ends and no wgmma or scaling, each
# stage's data waited for and its slot given back: the ring's own pace),
# the 8B's q8 decode batches of 64 and 32 (f16 caches, position 512),
# steps and launches, twice. Carry build/carry, build-ab/N, build-ab/M.
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
    for b in 64 32; do
        form build/bin $b main$b.$r
        form build-ab/N/bin $b N$b.$r
        form build-ab/M/bin $b M$b.$r
    done
done
keep
