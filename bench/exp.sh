#!/bin/sh
# bench/exp.sh — one device call's experiments (session of 2026-12-02):
# where the decode attention's time goes: variant v1 (no merge of the
# chunks: wrong values, timing only) and v2 (one row a warp a round: a
# third of the main loop's code) against the attention as it is.
set -u
out=${OUT:-/tmp/exp}; mkdir -p "$out"
d=$(mktemp -d)
for s in llama-3.2-1b llama-3-8b; do
    build/bin/logos-author decode_step examples/$s.yaml | build/bin/logos-fuse --numerics q8x2 >$d/$s.plan
done
for v in bin v1 v2; do
    b=build/$v
    timeout 100 ncu --clock-control none -k attend --launch-skip 2 --launch-count 2 --section SpeedOfLight \
        $b/logos-run -q --device cuda --synthetic 1 -p 1 -n 2 $d/llama-3.2-1b.plan >$out/ncu-$v.txt 2>&1
    grep -E "Elapsed Cycles|SM Active Cycles|Duration" $out/ncu-$v.txt | tr -s ' ' | tr '\n' ' ' | sed "s/^/  [$v ncu 1B attend] /"; echo
    for s in llama-3.2-1b llama-3-8b; do
        $b/logos-bench --synthetic 1 --pos 512 --launch-reps 1 $d/$s.plan 2>&1 | sed -n 4p | sed "s|^|  [$v $s] |"
    done
done | tee $out/variants.txt
rm -rf "$d"
