#!/bin/sh
# bench/probe/planab.sh — two builds' lanes on the same kernels: each
# SHAPE's q8 decode step fused by build/bin's logos-fuse (A) and by
# build-ab/B's (B, a patched lane), both run by build/bin's logos-run and
# logos-bench (so only the plans differ): 24 greedy steps' logits each way
# (python3's numpy compares them), then one logos-bench --compare of B's
# plan against A's at 512 and 8192; TL=1 adds B's and A's timelines summed
# by bench/attend.awk. Logs in $OUT (or /tmp).
#
#   [B=build-ab/B/bin] [TL=1] sh bench/probe/planab.sh SHAPE ...
set -u
out=${OUT:-/tmp}
B=${B:-build-ab/B/bin}
for s in "$@"; do
    build/bin/logos-author decode_step examples/$s.yaml | build/bin/logos-fuse --lane cuda --numerics q8 -q >"$out/$s.A.plan" || exit 1
    build/bin/logos-author decode_step examples/$s.yaml | $B/logos-fuse --lane cuda --numerics q8 -q >"$out/$s.B.plan" || exit 1
    echo "== $s: B against A ($(diff "$out/$s.A.plan" "$out/$s.B.plan" | grep -c '^>') lines differ)"
    for x in A B; do
        build/bin/logos-run -q --device cuda --synthetic 1 -p "1 2 3" -n 24 --logits "$out/$s.$x.f32" "$out/$s.$x.plan" >/dev/null 2>&1
    done
    python3 -c 'import sys, numpy as n; a, b = (n.fromfile(f, n.float32) for f in sys.argv[1:]); print("  logits: %d values, largest difference %.3g of the largest logit" % (a.size, abs(a - b).max() / abs(a).max()) if a.size == b.size and a.size else "  logits: a run failed")' \
        "$out/$s.A.f32" "$out/$s.B.f32"
    tl=
    [ -n "${TL:-}" ] && tl="--timeline $out/$s.tl.csv --timeline-blocks $out/$s.blocks.csv"
    # shellcheck disable=SC2086
    build/bin/logos-bench --synthetic 1 --pos 512 --pos 8192 $tl --compare "$out/$s.B.plan" "$out/$s.A.plan" >"$out/$s.ab.log" 2>&1
    grep -E '^ +(512|8192) |times the time|error|logos' "$out/$s.ab.log" | head -10
    [ -n "${TL:-}" ] && [ -s "$out/$s.blocks.csv" ] && awk -F, -f bench/attend.awk "$out/$s.blocks.csv"
done
