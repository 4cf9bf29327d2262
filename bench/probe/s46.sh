#!/bin/sh
# bench/probe/s46.sh — session forty-six's second call (bench/NOTES.md
# run256, never run: no device came): mmv with one weight address a group
# (bench/probe/mmvfeed.patch, built by `sh bench/probe/patched.sh
# bench/probe/mmvfeed.patch feed` into build-ab/feed) checked (its
# gpu_kernels' cases matching KERNELS_MATCH, default mmv) and timed against
# main (build/carry) on q8 decode batches of 16 to 64 (f16 caches, position
# 512, default plans); Gemma-2-2B's batch of 64 with every product on mmi
# (--mmi-rows 32) against the default;
# tiny/gemma2's q8 step error step by step (gemma2err.sh); then tests/gpu/run
# stacked's one case run255 did not reach (DeepSeek-V2-Lite, 64 rows). Carry
# build/carry and build-ab/feed.
set -u
LATE=${LATE:-380}
. "$(dirname "$0")/call.sh"
carry_in || exit 3
nvidia-smi -L
echo "== gpu_kernels, the cases matching ${KERNELS_MATCH:=mmv}"
kcheck build-ab/feed/test/gpu_kernels "$KERNELS_MATCH" kernels
echo "== shape batch: ms main, ms mmvfeed.patch"
for sb in ${PAIRS:-llama-3-8b:16 llama-3-8b:24 gemma-2-2b:64 llama-3.2-1b:32}; do
    s=${sb%:*} b=${sb#*:}
    spec16 "$s"
    echo "$s $b: $(ms "b-$s-$b" build/bin "$work/$s.yaml" $b) $(ms "n-$s-$b" build-ab/feed/bin "$work/$s.yaml" $b)"
done
spec16 gemma-2-2b
g=$work/gemma-2-2b.yaml
[ -s "$work/n-gemma-2-2b-64.csv" ] || echo "gemma-2-2b 64 default: $(ms n-gemma-2-2b-64 build-ab/feed/bin "$g" 64)"
echo "gemma-2-2b 64 every product on mmi: $(ms g64mmi build-ab/feed/bin "$g" 64 --mmi-rows 32)"
echo "== launches by kind, gemma-2-2b 64: default (mmvfeed.patch), then every product on mmi"
for n in n-gemma-2-2b-64 g64mmi; do
    awk -F, '$1 == "launch" { k = $7; sub(/ q8.*/, "", k); sub(/ N1=.*/, "", k); t[k] += $9; c[k]++ }
        END { for (k in t) printf "  %-44s n=%d avg %.1f us\n", k, c[k], 1000 * t[k] / c[k] }' "$work/$n.csv" | sort | grep "mm[iv]"
done
keep
echo "== tiny/gemma2 q8 decode_step: the error step by step (bench/probe/gemma2err.sh)"
late gemma2err || timeout 60 sh bench/probe/gemma2err.sh 2>&1
late stacked && exit 0
echo "== stacked deepseek-v2-lite 64"
STACKED_SHAPES=deepseek-v2-lite STACKED_BATCHES=64 timeout $((${END:-400} - ($(date +%s) - t0))) sh tests/gpu/run stacked 2>&1 | tail -3
keep
