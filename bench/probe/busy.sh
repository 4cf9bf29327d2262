#!/bin/sh
# bench/probe/busy.sh — a decode step's attention over other chunk counts:
# each SHAPE's q8 step with its attention launches' BUSY (the chunks a head
# block's rows are cut into at the most; grid y) set to each of BUSIES,
# the plan edited as text (logos-run checks it; the merge's scratch, `.part`,
# grown or shrunk in proportion), each against the lane's own in one
# logos-bench --compare run at each of POSES.
#
#   [BUSIES='32 16 8'] [POSES=512] [LOGOS_BIN=build/bin] sh bench/probe/busy.sh SHAPE...
#
# Prints each shape's step times; the logs go to $OUT (or /tmp).
set -u
bin=${LOGOS_BIN:-build/bin}
out=${OUT:-/tmp}
[ $# -ge 1 ] || { echo "usage: sh bench/probe/busy.sh SHAPE..." >&2; exit 2; }
pos=$(for p in ${POSES:-512}; do printf -- '--pos %s ' "$p"; done)
for s in "$@"; do
    $bin/logos-author decode_step examples/$s.yaml | $bin/logos-fuse --lane cuda --numerics q8 -q >"$out/$s.lane.plan" || exit 1
    own=$(sed -n '/^launch attend /{s/.* BUSY=\([0-9]*\) .*/\1/p;q}' "$out/$s.lane.plan")
    for b in ${BUSIES:-32 16 8}; do
        awk -v from="$own" -v to="$b" '
            $1 == "buffer" && $2 ~ /\.part$/ { $5 = $5 / from * to }
            $1 == "launch" && $2 == "attend" {
                for (i = 3; i <= NF; i++) {
                    if ($i == "BUSY=" from) $i = "BUSY=" to
                    if ($i == "grid" && $(i + 2) == from) $(i + 2) = to
                }
            }
            { print }' "$out/$s.lane.plan" >"$out/$s.busy$b.plan"
        echo "== $s BUSY $own against $b"
        # shellcheck disable=SC2086
        $bin/logos-bench --synthetic 1 $pos --launch-reps 1 --compare "$out/$s.busy$b.plan" \
            "$out/$s.lane.plan" >"$out/$s.busy$b.log" 2>&1
        grep -E '^ +[0-9]+ +[0-9]+ |times the time|error' "$out/$s.busy$b.log" | head -8
    done
done
