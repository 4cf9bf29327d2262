#!/bin/sh
# bench/probe/s45f.sh — session forty-five's sixth call (bench/NOTES.md
# run249): mmi with four warpgroups (build-ab/W: main with
# bench/probe/wg4.patch, each warpgroup 64 weight rows by half of x's NR
# rows, 512 threads a block) against main: W's mmi cases, then the 8B's
# q8 decode batches (f16 caches, position 512) of 64, 32, 24 and 16 on
# main, W and mmv (--mmi-rows 65 on main), steps and launches. Carry
# build/carry and build-ab/W.
set -u
. "$(dirname "$0")/call.sh"
carry_in || exit 3
nvidia-smi -L
echo "== W: gpu_kernels mmi"
KERNELS_MATCH=mmi timeout 150 build-ab/W/test/gpu_kernels >"$work/kernels.W" 2>&1
grep -v ' ok ' "$work/kernels.W" | head -20
tail -1 "$work/kernels.W"
sed 's/^dim: \(.*\)/dim: \1\ncache: f16/; s/^ctx: .*/ctx: 1024/' examples/llama-3-8b.yaml >"$work/s.yaml"
form() {   # BIN BATCH NAME FUSE-ARGS...: the step and its launches by kind
    d=$1 b=$2 n=$3; shift 3
    $d/logos-author decode_batch --batch "$b" "$work/s.yaml" | $d/logos-fuse --numerics q8 --mmi-rows 3 "$@" >"$work/$n.plan"
    timeout 45 $d/logos-bench --form decode_batch --synthetic 1 --pos 512 -n 10 --launch-reps 1 --csv "$work/$n.plan" >"$work/$n.csv" 2>"$work/$n.err"
    echo "== $n (batch $b $*): bench status $?"
    awk -F, '$1 == "step" { print "step ms", $9 } $1 == "launch" { k = $7; sub(/ q8.*/, "", k); t[k] += $9; n[k]++ }
        END { for (k in t) printf "%-40s n=%d avg %.1f us\n", k, n[k], 1000 * t[k] / n[k] }' "$work/$n.csv" | sort | grep -v "rownorm\|embed\|argmax\|attend"
    head -3 "$work/$n.err"
}
for b in 64 32 24 16; do
    form build/bin $b main$b
    form build-ab/W/bin $b W$b
    form build/bin $b mmv$b --mmi-rows 65
done
form build/bin 64 main64b
form build-ab/W/bin 64 W64b
keep
