#!/bin/sh
# bench/probe/wave.sh — a batch's attention in whole waves (lane_cuda.c's
# wave_chunks) against whole rows, side by side on one machine: the 8B's
# decode batches (q8, f16 caches, position 512), each batch B's plan as
# logos-fuse writes it, then the same plan with every batch attention
# (MODE=3) back to a block a row (SPLIT=1 BUSY=0, the grid's y 1); a line
# each, the launch tables under $OUT (bench/NOTES.md run182).
#
#   sh bench/probe/wave.sh [B...]      (default 16 64 128 256)
bin=${LOGOS_BIN:-build/bin}
out=${OUT:-/tmp}
sed "s/^ctx: .*/ctx: 1024/; s/^dim: \(.*\)/dim: \1\ncache: f16/" examples/llama-3-8b.yaml >/tmp/wave8b.yaml
[ $# -gt 0 ] || set -- 16 64 128 256
for b in "$@"; do
    "$bin/logos-author" decode_batch --batch "$b" /tmp/wave8b.yaml | "$bin/logos-fuse" --numerics q8 >/tmp/wave.c.plan
    sed -E '/^launch attend .* MODE=3 /{s/ SPLIT=[0-9]+ CHUNK=[0-9]+ BUSY=[0-9]+ / SPLIT=1 CHUNK=1024 BUSY=0 /; s/ grid ([0-9]+) [0-9]+ / grid \1 1 /}' \
        /tmp/wave.c.plan >/tmp/wave.r.plan
    "$bin/logos-check" /tmp/wave.r.plan >/dev/null || exit 1
    for v in c r; do
        timeout 120 "$bin/logos-bench" --synthetic 1 --form decode_batch --batch "$b" --pos 512 -n 20 --launch-reps 3 \
            --csv /tmp/wave.$v.plan >"$out/wave.$b.$v.csv" 2>"$out/wave.$b.$v.err"
        printf 'batch %3s %s: ' "$b" "$([ $v = c ] && echo 'wave chunks' || echo 'whole rows ')"
        awk -F, '$1 == "step" { printf "%.3f ms  %.0f tok/s  ", $9, $16 / $9 * 1000 }
                 $1 == "launch" && $7 ~ /^attend/ { t += $9; n++ }
                 END { if (n) printf "attention %.3f ms (%d launches alone)", t, n; print "" }' "$out/wave.$b.$v.csv"
        tail -2 "$out/wave.$b.$v.err"
    done
done
cd "$out" && tar czf wave.tgz wave.* && rm -f wave.*.csv wave.*.err
