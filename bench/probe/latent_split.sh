#!/bin/sh
# bench/probe/latent_split.sh — DeepSeek-V2-Lite's decode step (q8) with its
# latent attention's cache cut into SPLIT chunks (a plan edit: SPLIT and
# the grid's y), at positions 512 and 4096, on the GPU machine: the step's
# line and the latent launch's line of logos-bench's table for each.
#
#   sh bench/probe/latent_split.sh [SPLIT...]   LOGOS_BIN: the tools (default build/bin)
bin=${LOGOS_BIN:-build/bin}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
"$bin/logos-author" decode_step examples/deepseek-v2-lite.yaml | "$bin/logos-fuse" --numerics q8 >"$tmp/l.plan" || exit 1
split=$(sed -n 's/^launch latent .* SPLIT=\([0-9]*\) .*/\1/p' "$tmp/l.plan" | head -1)
for s in ${*:-4 8 16}; do
    sed "/^launch latent /s/SPLIT=$split CHUNK=\([0-9]*\) grid \([0-9]*\) $split 1/SPLIT=$s CHUNK=\1 grid \2 $s 1/" \
        "$tmp/l.plan" >"$tmp/l.$s.plan"
    echo "== SPLIT $s ($(grep -c "^launch latent .* SPLIT=$s " "$tmp/l.$s.plan") launches)"
    "$bin/logos-bench" --synthetic 1 --pos 512 --pos 4096 --launch-reps 5 "$tmp/l.$s.plan" 2>&1 |
        grep -E '^ +(512|4096) |latent|^launches at'
done
