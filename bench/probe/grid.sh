#!/bin/sh
# bench/probe/grid.sh — a product launch's grid against the lane's own: a
# SHAPE's q8 decode step at position 512 with the gemv launches whose line
# holds MATCH given each GRID of GRIDS (the plan edited as text: the
# constant and the launch's grid; logos-run checks it), each against the
# lane's plan in one logos-bench --compare run.
#
#   [GRIDS='264 288'] [TL=1] [LOGOS_BIN=build/bin] sh bench/probe/grid.sh SHAPE 'MATCH'
#
# TL=1: each run also takes logos-bench's --timeline and --timeline-blocks
# (every kernel marked, both plans) and prints bench/blocks.awk's summary.
#
# e.g. sh bench/probe/grid.sh gemma-2-2b 'N0=9216 N1=9216'. Prints the
# lane's GRID, then each plan's step time (the lane's first) and their
# ratio; the logs, with the per-launch tables, go to $OUT (or /tmp).
set -u
bin=${LOGOS_BIN:-build/bin}
out=${OUT:-/tmp}
[ $# -eq 2 ] || { echo "usage: sh bench/probe/grid.sh SHAPE 'MATCH'" >&2; exit 2; }
s=$1 m=$2
$bin/logos-author decode_step examples/$s.yaml | $bin/logos-fuse --lane cuda --numerics q8 -q >"$out/$s.plan" || exit 1
grep "^launch gemv .*$m" "$out/$s.plan" | head -1 | grep -o ' GRID=[0-9]*' | sed "s/^/== $s: the lane's/"
for g in ${GRIDS:-264 288}; do
    sed "/^launch gemv .*$m/{s/ GRID=[0-9]* / GRID=$g /; s/ grid [0-9]* 1 1 / grid $g 1 1 /}" "$out/$s.plan" >"$out/$s.grid$g.plan"
    echo "== $s: GRID $g against the lane's"
    tl=
    [ -n "${TL:-}" ] && tl="--timeline $out/$s.grid$g.tl.csv --timeline-blocks $out/$s.grid$g.blocks.csv"
    # shellcheck disable=SC2086
    $bin/logos-bench --synthetic 1 --pos 512 $tl --compare "$out/$s.grid$g.plan" "$out/$s.plan" >"$out/$s.grid$g.log" 2>&1
    grep -E '^ +512 |times the time|error|logos' "$out/$s.grid$g.log" | head -8
    [ -n "${TL:-}" ] && [ -s "$out/$s.grid$g.blocks.csv" ] &&
        awk -F, -f bench/blocks.awk "$out/$s.grid$g.blocks.csv" | cut -c1-90
done
