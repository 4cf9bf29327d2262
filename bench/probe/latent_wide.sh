#!/bin/sh
# bench/probe/latent_wide.sh — where a chunk's latent attention is "wide"
# (logos-fuse --latent-rows): DeepSeek-V2-Lite's prefill chunk of T rows,
# its plan fused for T rows twice, the latent attention expanded
# (--latent-rows 1: latent_expand.cu then attend.cu) and absorbed
# (--latent-rows 65536: latent.cu), timed side by side in one logos-bench
# run (--compare) at each position, synthetic Q8_0 weights; then each
# plan's latent launches alone from the same run's per-launch table.
#
#   sh bench/probe/latent_wide.sh [T...]     (default 4 8 16 32 64 128 512)
#   WIDE_POS positions (default "1 1024"), WIDE_NUMERICS (default q8),
#   WIDE_SPEC (default examples/deepseek-v2-lite.yaml), LOGOS_BIN (build/bin)
# Exit status: 0 every run timed, 1 one failed.
set -u
bin=${LOGOS_BIN:-build/bin}
spec=${WIDE_SPEC:-examples/deepseek-v2-lite.yaml}
num=${WIDE_NUMERICS:-q8}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pos=
for p in ${WIDE_POS:-1 1024}; do pos="$pos --pos $p"; done
status=0
for t in ${*:-4 8 16 32 64 128 512}; do
    "$bin/logos-author" prefill "$spec" >"$tmp/p.logos" &&
        "$bin/logos-fuse" --numerics "$num" --rows "$t" --latent-rows 1 <"$tmp/p.logos" >"$tmp/exp.plan" &&
        "$bin/logos-fuse" --numerics "$num" --rows "$t" --latent-rows 65536 <"$tmp/p.logos" >"$tmp/abs.plan" ||
        { status=1; continue; }
    # shellcheck disable=SC2086
    if "$bin/logos-bench" --synthetic 1 -n 20 --launch-reps 3 --form prefill --chunk "$t" $pos \
        "$tmp/exp.plan" --compare "$tmp/abs.plan" >"$tmp/out" 2>&1; then
        echo "== T=$t (exp.plan: expanded, abs.plan: absorbed)"
        grep -E '^ +[0-9]+ +[0-9]|times the time|^[a-z]+\.plan:' "$tmp/out"
        grep -E 'latent|attend|flash' "$tmp/out" | head -12
    else
        echo "== T=$t failed"
        tail -5 "$tmp/out"
        status=1
    fi
done
exit "$status"
