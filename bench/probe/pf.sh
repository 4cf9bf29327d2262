#!/bin/sh
# bench/probe/pf.sh — rule preload (gemv.cu's PF, --preload-kb KB) against
# the same plan without it (the default): each SHAPE:NUMERICS's decode step
# at the positions POS, both plans in one logos-bench --compare run. Prints
# each pair's step lines and ratio; the logs, with the per-launch tables,
# go to $OUT (or /tmp).
#
#   [KB=200] [POS='512'] [LOGOS_BIN=build/bin] sh bench/probe/pf.sh SHAPE:NUMERICS ...
set -u
bin=${LOGOS_BIN:-build/bin}
out=${OUT:-/tmp}
for sn in "$@"; do
    s=${sn%%:*} n=${sn#*:} f=$(echo "${sn%%:*}" | tr / -)
    $bin/logos-author decode_step examples/$s.yaml >"$out/$f.logos" || exit 1
    $bin/logos-fuse --lane cuda --numerics $n --preload-kb ${KB:-200} -q "$out/$f.logos" >"$out/$f.$n.pf.plan" || exit 1
    $bin/logos-fuse --lane cuda --numerics $n -q "$out/$f.logos" >"$out/$f.$n.nopf.plan" || exit 1
    grep -q ' PF=[1-9]' "$out/$f.$n.pf.plan" || { echo "== $s $n: no product takes preload"; continue; }
    echo "== $s $n: preload (first) against none (second; the ratio: none's time over preload's)"
    $bin/logos-bench --synthetic 1 $(for p in ${POS:-512}; do echo --pos $p; done) \
        --compare "$out/$f.$n.nopf.plan" "$out/$f.$n.pf.plan" >"$out/$f.$n.pf.log" 2>&1
    grep -E '^ +[0-9]+ +[0-9]+ |times the time|rror|logos' "$out/$f.$n.pf.log" | head -12
done
