#!/bin/sh
# bench/probe/s32.sh — session thirty-two's one device call: s31.sh's work
# (main's and i8f.patch's decode figures, both builds' gpu_kernels, main's
# lane and oracle) after issue 9's and 10's other shapes, q8 at 512, with
# main's build (each shape's whole report, its per-launch table too, under
# $OUT). Carry build/bin, build/test/gpu_kernels and build-ab/B.
set -u
echo "== main: the other shapes, q8, 512"
for s in mistral-7b gemma-2-2b qwen3-0.6b qwen2.5-0.5b gpt-oss-20b deepseek-v2-lite qwen3-next-80b-a3b lfm2-1.2b; do
    echo "== $s q8"
    build/bin/logos-author decode_step examples/$s.yaml | build/bin/logos-fuse --lane cuda --numerics q8 -q |
      build/bin/logos-bench --synthetic 1 --pos 512 >"${OUT:-/tmp}/shape.$s" 2>&1
    grep -E '^device|^ +[0-9]+ +[0-9]+ ' "${OUT:-/tmp}/shape.$s"
done
sh bench/probe/s31.sh
