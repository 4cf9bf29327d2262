#!/bin/sh
# bench/probe/s48.sh — the next session's first call (bench/NOTES.md
# run265): rule norm_pair (bench/probe/normpair.patch: Gemma 2's norm and
# residual after the attention, then the pre-FFN norm of the sum, as one
# rownorm launch, MODE 3), built into build-ab/np, checked and timed
# against main. Its gpu_kernels' rownorm cases (the pair's among them),
# the lane's gemma2 family and the sweep's gemma2 runs with its tools
# (LOGOS_BIN), then Gemma-2-2B's q8 decode batches of 2, 16, 24 and 64
# rows (f16 caches, position 512), main against the patch. Carry
# build-ab/s48.tar.xz:
#   sh bench/probe/patched.sh bench/probe/normpair.patch.xz np
#   tar cJf build-ab/s48.tar.xz build/carry build-ab/np
set -u
tar xJf build-ab/s48.tar.xz || exit 3
. "$(dirname "$0")/call.sh"
carry_in || exit 3
nvidia-smi -L
np=$PWD/build-ab/np
echo "== gpu_kernels (normpair.patch), the rownorm cases"
kcheck "$np/test/gpu_kernels" rownorm kn
tail -1 "$work/kn"
echo "== lane gemma2 (normpair.patch's tools)"
LOGOS_BIN=$np/bin timeout 200 sh tests/gpu/lane gemma2 >"$work/lane" 2>&1
grep -E "FAIL|passed" "$work/lane" | tail -8
late sweep || {
    echo "== sweep gemma2 (normpair.patch's tools)"
    LOGOS_BIN=$np/bin LANE_CHUNKS="1 7 64 512" LANE_BATCHES="1 3 16 64" timeout 150 sh tests/gpu/lane gemma2 >"$work/sweep" 2>&1
    grep -E "FAIL|passed" "$work/sweep" | tail -8
}
spec16 gemma-2-2b
echo "== gemma-2-2b q8 batch: ms main, ms normpair.patch (rownorm launches main / patch)"
for b in 2 16 24 64; do
    late "batch $b" && break
    echo "$b: $(ms "b$b" build/bin "$work/gemma-2-2b.yaml" $b) $(ms "n$b" "$np/bin" "$work/gemma-2-2b.yaml" $b)" \
        "($(grep -c '^launch rownorm' "$work/b$b.plan") / $(grep -c '^launch rownorm' "$work/n$b.plan"))"
done
echo "gemma-2-2b 2 rows as GEMVs (--mmv-rows 3): $(ms g2 "$np/bin" "$work/gemma-2-2b.yaml" 2 --mmv-rows 3)"
keep
