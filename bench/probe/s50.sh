#!/bin/sh
# bench/probe/s50.sh — rule norm_split (bench/probe/normsplit.patch: a norm
# between stacked products on mmv run in their epilogues, mmv.cu's SQ and
# RN; build-ab/ns) and rule norm_pair (bench/probe/normpair.patch.xz:
# Gemma 2's two norms after the attention as one rownorm launch;
# build-ab/np), checked and timed against main (build/carry) in one call
# (bench/NOTES.md run267). Carry build-ab/s50.tar.xz:
#   sh bench/probe/patched.sh bench/probe/normsplit.patch ns
#   sh bench/probe/patched.sh bench/probe/normpair.patch.xz np
#   tar cJf build-ab/s50.tar.xz build/carry build-ab/ns build-ab/np
set -u
tar xJf build-ab/s50.tar.xz || exit 3
LATE=${LATE:-420}
. "$(dirname "$0")/call.sh"
carry_in || exit 3
nvidia-smi -L
ns=$PWD/build-ab/ns np=$PWD/build-ab/np
echo "== gpu_kernels (normsplit.patch): mmv cases, norm_split's among them"
kcheck "$ns/test/gpu_kernels" mmv kmv
tail -1 "$work/kmv"
spec16 llama-3-8b l8
spec16 llama-3.2-1b l1
spec16 gemma-2-2b g2
echo "== q8 decode batches, f16 caches, position 512: ms main, ms normsplit.patch (rownorm launches main / patch)"
for sb in l8:1 l8:16 l8:2 l8:32 l1:16 l1:1; do
    s=${sb%:*} b=${sb#*:}
    late "$sb" && break
    echo "$s $b: $(ms "m$s$b" build/bin "$work/$s.yaml" $b) $(ms "n$s$b" "$ns/bin" "$work/$s.yaml" $b)" \
        "($(grep -c '^launch rownorm' "$work/m$s$b.plan") / $(grep -c '^launch rownorm' "$work/n$s$b.plan"))"
done
echo "== gpu_kernels (normpair.patch): rownorm cases"
kcheck "$np/test/gpu_kernels" rownorm kn
tail -1 "$work/kn"
echo "== gemma-2-2b q8 batch: ms main, ms normpair.patch (rownorm launches main / patch)"
for b in 2 16 64; do
    late "gemma $b" && break
    echo "g2 $b: $(ms "mg$b" build/bin "$work/g2.yaml" $b) $(ms "pg$b" "$np/bin" "$work/g2.yaml" $b)" \
        "($(grep -c '^launch rownorm' "$work/mg$b.plan") / $(grep -c '^launch rownorm' "$work/pg$b.plan"))"
done
late "lane" || {
    echo "== lane llama mistral qwen2 qwen3 llama-f16 (normsplit.patch's tools)"
    LOGOS_BIN=$ns/bin timeout 200 sh tests/gpu/lane llama mistral qwen2 qwen3 llama-f16 >"$work/lane" 2>&1
    grep -E "FAIL|passed" "$work/lane" | tail -8
}
late "lane gemma2" || {
    echo "== lane gemma2 (normpair.patch's tools)"
    LOGOS_BIN=$np/bin timeout 120 sh tests/gpu/lane gemma2 >"$work/laneg" 2>&1
    grep -E "FAIL|passed" "$work/laneg" | tail -8
}
late "sweep" || {
    echo "== sweep llama batches 1 3 16 64 (normsplit.patch's tools)"
    LOGOS_BIN=$ns/bin LANE_BATCHES="1 3 16 64" timeout 120 sh tests/gpu/lane llama qwen2 >"$work/sweep" 2>&1
    grep -E "FAIL|passed" "$work/sweep" | tail -8
}
keep
