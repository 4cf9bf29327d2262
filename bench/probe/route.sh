#!/bin/sh
# bench/probe/route.sh — the route launch alone at several experts and kept
# counts (a step of an embedding row's softmax routing), on the GPU
# machine: one line each, E K and the launch's line of logos-bench's table
# (bench/NOTES.md run119, run120).
#
#   sh bench/probe/route.sh        LOGOS_BIN: the tools (default build/bin)
bin=${LOGOS_BIN:-build/bin}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
for ek in "32 4" "64 6" "128 8" "256 8" "512 1" "512 4" "512 10" "1024 10"; do
    set -- $ek
    printf 'logos 1 decode_step route\nin tok : i32\nin pos : i32\nweight e : f32[64,%s]\nout y : f32[%s]\ny = route(e[tok], k=%s, score=softmax, norm=1)\nend\n' "$1" "$1" "$2" |
        "$bin/logos-fuse" --numerics q8 >"$tmp/route.$1.$2.plan" || exit 1
    printf 'E %-5s K %-3s ' "$1" "$2"
    "$bin/logos-bench" --synthetic 1 "$tmp/route.$1.$2.plan" 2>&1 | grep -E '^ +[0-9]+ +route' | head -1
    echo
done
# with ROUTE_NCU=1, the widest's own time and instructions (ncu)
[ "${ROUTE_NCU:-0}" = 1 ] || exit 0
command -v ncu >/dev/null 2>&1 || PATH=$PATH:/usr/local/cuda/bin
if command -v ncu >/dev/null 2>&1; then
    ncu -k route -c 1 --metrics gpu__time_duration.sum,sm__inst_executed.sum,smsp__average_warp_latency_per_inst_issued.ratio,smsp__pcsamp_warps_issue_stalled_long_scoreboard,launch__registers_per_thread \
        "$bin/logos-bench" --synthetic 1 -n 2 --launch-reps 1 "$tmp/route.512.10.plan" 2>&1 | grep -E "route|duration|inst_executed|latency|registers|stalled" | head -12
fi
