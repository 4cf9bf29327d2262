#!/bin/sh
# cache16.sh — the 8B and 1B decode steps under q8 with f32 and f16 caches (run199)
export PATH=$PWD/build/bin:$PATH
for s in llama-3-8b llama-3.2-1b; do
  for c in f32 f16; do
    if [ $c = f16 ]; then sed 's/^ctx: \(.*\)$/ctx: \1\ncache: f16/' examples/$s.yaml > /tmp/$s-$c.yaml; else cp examples/$s.yaml /tmp/$s-$c.yaml; fi
    echo "== $s cache $c"
    logos-author decode_step /tmp/$s-$c.yaml | logos-fuse --lane cuda --numerics q8 -q | logos-bench --synthetic 1 --pos 512 --pos 8192 2>&1 | head -40
  done
done
