#!/bin/sh
# bench/probe/et.sh — rule early_trigger (kernels/common.cuh's LOGOS_ET:
# every block lets the next launch begin as it starts) against the same
# plan without it (its `rule early_trigger` line taken out): each
# SHAPE:NUMERICS decode step's logits over 24 greedy steps each way (they
# must be the same bytes), then its step time at 512, twice each way in
# turn (ABAB: separate processes, each its own kernels). Prints each
# run's median; logs in $OUT (or /tmp). (run226h ran it as an environment
# variable that compiled every kernel so, before the rule.)
#
#   [LOGOS_BIN=build/bin] sh bench/probe/et.sh SHAPE:NUMERICS ...
set -u
bin=${LOGOS_BIN:-build/bin}
out=${OUT:-/tmp}
for sn in "$@"; do
    s=${sn%%:*} n=${sn#*:}
    $bin/logos-author decode_step examples/$s.yaml | $bin/logos-fuse --lane cuda --numerics $n -q >"$out/$s.$n.et1.plan" || exit 1
    grep -q '^rule early_trigger$' "$out/$s.$n.et1.plan" || { echo "== $s $n: the plan does not take early_trigger"; continue; }
    sed '/^rule early_trigger$/d' "$out/$s.$n.et1.plan" >"$out/$s.$n.et0.plan"
    for et in 0 1; do
        $bin/logos-run -q --device cuda --synthetic 1 -p "1 2 3" -n 24 --logits "$out/$s.$n.et$et.f32" \
            "$out/$s.$n.et$et.plan" >/dev/null 2>&1
    done
    if [ -s "$out/$s.$n.et0.f32" ] && cmp -s "$out/$s.$n.et0.f32" "$out/$s.$n.et1.f32"; then
        same="logits the same bytes"
    else
        same="LOGITS DIFFER (or a run failed)"
    fi
    line="== $s $n: $same;"
    for r in 1 2; do
        for et in 0 1; do
            $bin/logos-bench --synthetic 1 --pos 512 -n 200 --launch-reps 1 "$out/$s.$n.et$et.plan" \
                >"$out/$s.$n.et$et.$r.log" 2>&1
            line="$line et$et $(awk '$1 == 512 { print $3; exit }' "$out/$s.$n.et$et.$r.log")"
        done
    done
    echo "$line ms"
done
