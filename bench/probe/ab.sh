#!/bin/sh
# bench/probe/ab.sh — two builds of the tools side by side on the GPU
# machine: each shape's q8 decode step at position 512 under build A, then
# under build B, with synthetic weights; the summary lines of each and the
# per-launch tables kept under $OUT (or /tmp) as ab.SHAPE.A and ab.SHAPE.B.
#
#   sh bench/probe/ab.sh DIR_A DIR_B SHAPE...    DIR_*: a build's bin folder
#   AB_NUMERICS (default q8), AB_POS (default 512)
[ $# -ge 3 ] || { echo "usage: sh bench/probe/ab.sh DIR_A DIR_B SHAPE..." >&2; exit 2; }
a=$1 b=$2
shift 2
out=${OUT:-/tmp}
for s in "$@"; do
    t=$(echo "$s" | tr / -)
    for side in A B; do
        if [ $side = A ]; then bin=$a; else bin=$b; fi
        "$bin/logos-author" decode_step "examples/$s.yaml" |
            "$bin/logos-fuse" --numerics "${AB_NUMERICS:-q8}" >"$out/ab.$t.$side.plan" || exit 1
        "$bin/logos-bench" --synthetic 1 --pos "${AB_POS:-512}" --launch-reps 5 "$out/ab.$t.$side.plan" >"$out/ab.$t.$side" 2>&1
        printf '%s %s: ' "$s" "$side"
        grep -E '^ *[0-9]+ +[0-9]' "$out/ab.$t.$side" | head -1
    done
done
