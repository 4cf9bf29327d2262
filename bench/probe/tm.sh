#!/bin/sh
# bench/probe/tm.sh — two builds' q8 prefill chunks side by side on one
# machine: the 8B's and the 1B's chunks of 512 (twice) and 2048 under the
# tools in DIR_A, then DIR_B; a line each, the launch tables under $OUT.
#
#   sh bench/probe/tm.sh DIR_A DIR_B
out=${OUT:-/tmp}
chunk() {   # dir shape rows tag
    "$1/logos-author" prefill "examples/$2.yaml" | "$1/logos-fuse" --numerics q8 --rows "$3" >/tmp/p.plan
    timeout 60 "$1/logos-bench" --synthetic 1 --form prefill --chunk "$3" --pos 1 -n 20 --launch-reps 1 \
        /tmp/p.plan >"$out/c.$2.$3.$4" 2>&1
    printf '%s %s %s: ' "$4" "$2" "$3"; grep -E '^ +1 ' "$out/c.$2.$3.$4" | head -1
}
for r in 1 2; do
    for s in llama-3-8b llama-3.2-1b; do chunk "$1" $s 512 A; chunk "$2" $s 512 B; done
done
for s in llama-3-8b llama-3.2-1b; do chunk "$1" $s 2048 A; chunk "$2" $s 2048 B; done
cd "$out" && tar czf tables.tgz c.* && rm -f c.*
