#!/bin/sh
# bench/probe/tiles.sh — a batch's attention in tiles of 16 keys a warp
# (attend.cu's TC 2: four blocks a multiprocessor with heads of 128)
# against tiles of 32 (TC 1: three), side by side on one machine: the 8B's
# decode batches (q8, f16 caches, position 512), each batch B's plan as
# logos-fuse writes it, then the same plan with every TC 2 attention back
# to TC 1 (its shared memory 73744 bytes); a line each, the launch tables
# under $OUT (bench/NOTES.md run184).
#
#   sh bench/probe/tiles.sh [B...]      (default 16 64 128 256)
bin=${LOGOS_BIN:-build/bin}
out=${OUT:-/tmp}
sed "s/^ctx: .*/ctx: 1024/; s/^dim: \(.*\)/dim: \1\ncache: f16/" examples/llama-3-8b.yaml >/tmp/tiles8b.yaml
[ $# -gt 0 ] || set -- 16 64 128 256
for b in "$@"; do
    "$bin/logos-author" decode_batch --batch "$b" /tmp/tiles8b.yaml | "$bin/logos-fuse" --numerics q8 >/tmp/tiles.2.plan
    sed -E '/^launch attend .* TC=2 /{s/ TC=2 / TC=1 /; s/ smem 38928 / smem 73744 /}' /tmp/tiles.2.plan >/tmp/tiles.1.plan
    "$bin/logos-check" /tmp/tiles.1.plan >/dev/null || exit 1
    for v in 2 1; do
        timeout 120 "$bin/logos-bench" --synthetic 1 --form decode_batch --batch "$b" --pos 512 -n 20 --launch-reps 3 \
            --csv /tmp/tiles.$v.plan >"$out/tiles.$b.$v.csv" 2>"$out/tiles.$b.$v.err"
        printf 'batch %3s TC %s (%s): ' "$b" "$v" "$(grep -c "^launch attend .* TC=$v " /tmp/tiles.$v.plan) launches"
        awk -F, '$1 == "step" { printf "%.3f ms  %.0f tok/s  ", $9, $16 / $9 * 1000 }
                 $1 == "launch" && $7 ~ /^attend/ { t += $9; n++ }
                 END { if (n) printf "attention %.3f ms (%d launches alone)", t, n; print "" }' "$out/tiles.$b.$v.csv"
        grep -v 'synthesizing' "$out/tiles.$b.$v.err" | tail -2
    done
done
cd "$out" && tar czf tiles.tgz tiles.* && rm -f tiles.*.csv tiles.*.err
