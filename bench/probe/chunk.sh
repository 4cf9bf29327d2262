#!/bin/sh
# chunk.sh — a decode step's attention in shorter chunks (run202): the plan's
# attend CHUNK 16 -> 12 and 8 (SPLIT grown so the chunks still cover the
# context), by logos-bench --compare at 512 and 1024, q8, the example specs.
B=${B:-build/bin}
for s in llama-3-8b llama-3.2-1b gemma-2-2b; do
  $B/logos-author decode_step examples/$s.yaml | $B/logos-fuse --lane cuda --numerics q8 -q > /tmp/$s.plan
  for c in 12 8; do
    awk -v c=$c '/^launch attend/ { for (i = 1; i <= NF; i++) { if ($i ~ /^CHUNK=/) $i = "CHUNK=" c;
        if ($i ~ /^SPLIT=/) { split($i, a, "="); s = a[2] } }
      for (i = 1; i <= NF; i++) if ($i ~ /^NCTX=/) { split($i, b, "="); n = b[2] }
      for (i = 1; i <= NF; i++) if ($i ~ /^SPLIT=/) $i = "SPLIT=" int((n + c - 1) / c) } { print }' \
      /tmp/$s.plan > /tmp/$s.c$c.plan
    echo "== $s CHUNK 16 against $c"
    $B/logos-bench --synthetic 1 --pos 512 --pos 1024 --compare /tmp/$s.c$c.plan /tmp/$s.plan 2>&1 |
      grep -v synthesizing | grep -E '^ +[0-9]+ +[0-9]+ |ratio|^-|^/'
  done
done
