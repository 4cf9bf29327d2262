#!/bin/sh
# lr0h.sh — the decode step's attention with LR taken at run time (run201):
# the 8B and 1B under q8, f32 and f16 caches, at 512, 2048 and 8192, with
# build/bin's tools.
for s in llama-3-8b llama-3.2-1b; do
  for c in f32 f16; do
    if [ $c = f16 ]; then sed 's/^ctx: \(.*\)$/ctx: \1\ncache: f16/' examples/$s.yaml > /tmp/$s-$c.yaml
    else cp examples/$s.yaml /tmp/$s-$c.yaml; fi
    echo "== $s cache $c"
    build/bin/logos-author decode_step /tmp/$s-$c.yaml | build/bin/logos-fuse --lane cuda --numerics q8 -q |
      build/bin/logos-bench --synthetic 1 --pos 512 --pos 2048 --pos 8192 2>&1 | grep -v synthesizing |
      grep -E '^device|^ +[0-9]+ +[0-9]+ |attend|^launches alone'
  done
done
