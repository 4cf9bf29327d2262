#!/bin/sh
# bench/probe/s42.sh — session forty-two's call (bench/NOTES.md run239):
# newrow (build-ab/B) against main, latentq (build-ab/L) against main, and
# main's owed checks, most needed first so that a call cut short keeps
# what decides a landing. Carry build/carry (main's stripped tools and
# gpu_kernels), build-ab/B and build-ab/L (bench/probe/patched.sh; L
# without logos-import and logos-run, to stay under 64 MiB).
#
#   LATE=SECONDS sh bench/probe/s42.sh
set -u
. "$(dirname "$0")/call.sh"
carry_in || exit 3
nvidia-smi -L
export AB_STEPS="llama-3-8b:q8 llama-3.2-1b:q8 qwen3-0.6b:q8 qwen2.5-0.5b:q8 gemma-2-2b:q8 llama-3-8b:q8 qwen3-0.6b:q8"
export AB_POS=512 TL_SHAPES=llama-3-8b
PARTS="ab laneB" sh bench/probe/s34.sh
mv "$out/logs.tgz" "$out/logs.newrow.tgz" 2>/dev/null
AB_DIR=build-ab/L AB_MATCH=latent AB_STEPS="deepseek-v2-lite:q8 deepseek-v2-lite:q8" PARTS=ab sh bench/probe/s34.sh
mv "$out/logs.tgz" "$out/logs.latentq.tgz" 2>/dev/null
P="kernels lane timelineB"
nvidia-smi -L | grep -q H200 && P="kernels lane bench9 bench10 timeline"
left=$((${LATE:-480} - ($(date +%s) - t0)))
[ "$left" -gt 0 ] || left=-1   # none begun
PARTS="$P" LATE=$left sh bench/probe/s34.sh
