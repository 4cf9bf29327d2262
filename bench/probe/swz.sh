#!/bin/sh
# bench/probe/swz.sh — the precise products' staged activations laid so a
# warp's lanes read consecutive 16 bytes (gemv SWZ, bench/NOTES.md
# run208): gpu_kernels of the working tree's build, then the 8B's and the
# 1B's precise step with it (build/bin) and without it (build-ab/A/bin,
# HEAD before), side by side on one card. Carry build/bin,
# build/test/gpu_kernels and build-ab/A.
set -u
nvidia-smi -L
LOGOS_BIN=build/bin KERNELS_JOBS=8 sh tests/gpu/run kernels 2>&1 | sed -n '/^== summary/,$p'
for s in llama-3-8b llama-3.2-1b; do
    for n in precise q8; do
        for b in build-ab/A/bin build/bin; do
            echo "== $s $n $b"
            $b/logos-author decode_step examples/$s.yaml | $b/logos-fuse --lane cuda --numerics $n -q |
              $b/logos-bench --synthetic 1 --pos 512 --pos 8192 2>&1 | grep -E '^device|^ +[0-9]+ +[0-9]+ '
        done
    done
done
