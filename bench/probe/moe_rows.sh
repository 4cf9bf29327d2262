#!/bin/sh
# bench/probe/moe_rows.sh — two builds' mixtures over a chunk's rows side by
# side (build A, then build B, each fusing its own plans): each shape's
# prefill chunk of T rows at position 1, q8, synthetic weights; the chunk
# line and the experts' launches alone from each run.
#
#   sh bench/probe/moe_rows.sh DIR_A DIR_B SHAPE...   DIR_*: a build's bin folder
#   MOE_T (default 512), MOE_NUMERICS (default q8)
[ $# -ge 3 ] || { echo "usage: sh bench/probe/moe_rows.sh DIR_A DIR_B SHAPE..." >&2; exit 2; }
a=$1 b=$2
shift 2
t=${MOE_T:-512}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for s in "$@"; do
    for side in A B; do
        if [ $side = A ]; then bin=$a; else bin=$b; fi
        "$bin/logos-author" prefill "examples/$s.yaml" |
            "$bin/logos-fuse" --numerics "${MOE_NUMERICS:-q8}" --rows "$t" >"$tmp/p.plan" || { status=1; continue; }
        if "$bin/logos-bench" --synthetic 1 -n 10 --launch-reps 3 --form prefill --chunk "$t" --pos 1 \
            "$tmp/p.plan" >"$tmp/out" 2>&1; then
            printf '%s %s: ' "$s" "$side"
            grep -E '^ +[0-9]+ +[0-9]' "$tmp/out" | head -1
            grep -E ' moe ' "$tmp/out" | head -2
        else
            echo "$s $side failed"; tail -3 "$tmp/out"; status=1
        fi
    done
done
exit "$status"
