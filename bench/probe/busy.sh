#!/bin/sh
# bench/probe/busy.sh — a decode step's attention over fewer, longer chunks:
# each SHAPE's q8 step at position 512 with its attention launches' BUSY
# (the chunks a head block's rows are cut into at the most; grid y) set to
# each of BUSIES, the plan edited as text (logos-run checks it), each
# against the lane's own (BUSY 64) in one logos-bench --compare run.
#
#   [BUSIES='32 16 8'] [LOGOS_BIN=build/bin] sh bench/probe/busy.sh SHAPE...
#
# Prints each shape's step times; the logs go to $OUT (or /tmp).
set -u
bin=${LOGOS_BIN:-build/bin}
out=${OUT:-/tmp}
[ $# -ge 1 ] || { echo "usage: sh bench/probe/busy.sh SHAPE..." >&2; exit 2; }
for s in "$@"; do
    $bin/logos-author decode_step examples/$s.yaml | $bin/logos-fuse --lane cuda --numerics q8 -q >"$out/$s.busy64.plan" || exit 1
    for b in ${BUSIES:-32 16 8}; do
        sed "/^launch attend /{s/ BUSY=64 / BUSY=$b /; s/ grid \([0-9]*\) 64 1 / grid \1 $b 1 /}" \
            "$out/$s.busy64.plan" >"$out/$s.busy$b.plan"
        echo "== $s BUSY 64 against $b"
        $bin/logos-bench --synthetic 1 --pos 512 --launch-reps 1 --compare "$out/$s.busy$b.plan" \
            "$out/$s.busy64.plan" >"$out/$s.busy$b.log" 2>&1
        grep -E '^ +512 |times the time' "$out/$s.busy$b.log" | head -6
    done
done
