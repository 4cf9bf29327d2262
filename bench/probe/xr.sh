#!/bin/sh
# bench/probe/xr.sh — the 8B's decode batches (q8, f16 caches, position
# 512) with their products on mmv and with x resident (mmh TM 64) side by
# side on one machine: for each batch B, `logos-fuse --xr-rows 65` (mmv)
# then `--xr-rows 1` (x resident where the rule allows), a line each; the
# launch tables under $OUT (bench/NOTES.md run181).
#
#   sh bench/probe/xr.sh [B...]      (default 16 32 48 64)
bin=${LOGOS_BIN:-build/bin}
out=${OUT:-/tmp}
sed "s/^ctx: .*/ctx: 1024/; s/^dim: \(.*\)/dim: \1\ncache: f16/" examples/llama-3-8b.yaml >/tmp/xr8b.yaml
[ $# -gt 0 ] || set -- 16 32 48 64
for b in "$@"; do
    for x in 65 1; do
        "$bin/logos-author" decode_batch --batch "$b" /tmp/xr8b.yaml | "$bin/logos-fuse" --numerics q8 --xr-rows $x >/tmp/xr.plan
        timeout 120 "$bin/logos-bench" --synthetic 1 --form decode_batch --batch "$b" --pos 512 -n 20 --launch-reps 3 \
            --csv /tmp/xr.plan >"$out/xr.$b.$x.csv" 2>"$out/xr.$b.$x.err"
        printf 'batch %3s xr-rows %2s: ' "$b" "$x"
        awk -F, '$1 == "step" { printf "%.3f ms  %.0f tok/s\n", $9, $16 / $9 * 1000 }' "$out/xr.$b.$x.csv"
        tail -2 "$out/xr.$b.$x.err"
    done
done
cd "$out" && tar czf xr.tgz xr.* && rm -f xr.*.csv xr.*.err
