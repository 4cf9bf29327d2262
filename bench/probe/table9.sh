#!/bin/sh
# table9.sh — issue 9's decode figures: the 8B and 1B example specs, each
# numerics, at 512 and 8192 (logos-bench with synthetic weights).
B=${B:-build/bin}
for s in llama-3-8b llama-3.2-1b; do
  for n in q8 q8x2 precise; do
    echo "== $s $n"
    $B/logos-author decode_step examples/$s.yaml | $B/logos-fuse --lane cuda --numerics $n -q |
      $B/logos-bench --synthetic 1 --pos 512 --pos 8192 2>&1 | grep -v synthesizing |
      grep -E '^device|^ +[0-9]+ +[0-9]+ '
  done
done
