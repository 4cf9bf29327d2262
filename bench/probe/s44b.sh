#!/bin/sh
# bench/probe/s44b.sh — session forty-four's last call (bench/NOTES.md
# run243): mmi with its tile ends' loads in flight together (the fix-up's
# parts as float4s, the epilogue's loads FU units at a time): three of its
# gpu_kernels cases, then the 8B's decode batch of 64 (q8, f16 caches,
# position 512) on mmi alone, its step and its launches. Carry build/carry.
set -u
. "$(dirname "$0")/call.sh"
carry_in || exit 3
nvidia-smi -L
KERNELS_MATCH="mmi K 14336|mmi gated silu, quantizing|mmi the o" timeout 40 build/test/gpu_kernels | sed 's/  quantization.*//'
sed 's/^dim: \(.*\)/dim: \1\ncache: f16/; s/^ctx: .*/ctx: 1024/' examples/llama-3-8b.yaml >"$work/s.yaml"
build/bin/logos-author decode_batch --batch 64 "$work/s.yaml" | build/bin/logos-fuse --numerics q8 --mmi-rows 3 >"$work/b.plan"
timeout 45 build/bin/logos-bench --form decode_batch --synthetic 1 --pos 512 -n 10 --launch-reps 1 --csv "$work/b.plan" >"$work/b.csv" 2>"$work/b.err"
echo "bench status $?"
awk -F, '$1 == "step" { print "step ms", $9 } $1 == "launch" { k = $7; sub(/ q8.*/, "", k); t[k] += $9; n[k]++ }
    END { for (k in t) printf "%-40s n=%d avg %.1f us\n", k, n[k], 1000 * t[k] / n[k] }' "$work/b.csv"
head -3 "$work/b.err"
keep
