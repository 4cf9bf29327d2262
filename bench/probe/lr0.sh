#!/bin/sh
# lr0.sh — A/B of a decode step's attention scoring a row a lane (LR, MODE 0)
# against main's warps a row: the 8B and 1B under q8, f32 and f16 caches, at
# 512, 2048 and 8192 (run200). Binaries: build-ab/A (main) and build-ab/B (LR).
for s in llama-3-8b llama-3.2-1b; do
  for c in f32 f16; do
    if [ $c = f16 ]; then sed 's/^ctx: \(.*\)$/ctx: \1\ncache: f16/' examples/$s.yaml > /tmp/$s-$c.yaml
    else cp examples/$s.yaml /tmp/$s-$c.yaml; fi
    for b in build-ab/A build-ab/B; do
      echo "== $s cache $c $b"
      build-ab/B/logos-author decode_step /tmp/$s-$c.yaml | $b/logos-fuse --lane cuda --numerics q8 -q |
        $b/logos-bench --synthetic 1 --pos 512 --pos 2048 --pos 8192 2>&1 | grep -v synthesizing |
        grep -E '^ +[0-9]+ +[0-9]+ |attend|^launches alone'
    done
  done
done
