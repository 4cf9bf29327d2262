#!/bin/sh
# bench/probe/floor.sh — where a decode step's time goes against the read
# floor of its launches, on the GPU machine: each shape's decode step
# (synthetic weights, logos-bench's per-launch table: every launch alone,
# the L2 emptied before it), and for each launch the best time of a bare
# streaming read of the same bytes (bench/readsize.cu: a grid-stride read,
# best of 20 at grids of 132 to 1056 blocks, timed the same way). Per
# shape, a table by kernel: launches, their time alone, the bare reads'
# time, the excess (alone less bare) and its share of all the excess; then
# the step, the launches alone, the bare reads' sum (and of it, as many
# empty launches' time: what programmatic dependent launch can hide) and
# the step's bytes at the read ceiling (bench/NOTES.md, run157).
#
#   sh bench/probe/floor.sh SHAPE...    SHAPE: an examples/ spec's name
#
# LOGOS_BIN (default build/bin), READSIZE (default build/floor/readsize:
# nvcc -O3 -arch=sm_90 -o build/floor/readsize bench/readsize.cu),
# FLOOR_NUMERICS (default q8), FLOOR_POS (default 512). The tables under
# $OUT (or /tmp) as floor.SHAPE.bench.
# Exit status: 0 every shape timed, 1 one failed, 2 usage, 3 no readsize.
set -u
[ $# -ge 1 ] || { echo "usage: sh bench/probe/floor.sh SHAPE..." >&2; exit 2; }
bin=${LOGOS_BIN:-build/bin}
rs=${READSIZE:-build/floor/readsize}
[ -x "$rs" ] || { echo "floor: no $rs (nvcc -O3 -arch=sm_90 -o $rs bench/readsize.cu)" >&2; exit 3; }
out=${OUT:-/tmp}
pos=${FLOOR_POS:-512}
status=0
for s in "$@"; do
    b=$out/floor.$s.bench
    if ! "$bin/logos-author" decode_step "examples/$s.yaml" |
        "$bin/logos-fuse" --numerics "${FLOOR_NUMERICS:-q8}" >"$out/floor.$s.plan" ||
        ! "$bin/logos-bench" --synthetic 1 --pos "$pos" --launch-reps 5 "$out/floor.$s.plan" >"$b" 2>&1; then
        echo "floor: $s: the plan or its bench failed (see $b)" >&2
        status=1
        continue
    fi
    # the per-launch table's rows (count, kernel, ms, share, bytes, GB/s,
    # ceiling; ms and bytes the count's together): count, kernel, ms, a
    # launch's bytes
    awk '/^launches at position/ { on = 1; next } on && /^launches alone/ { exit }
         on && $1 ~ /^[0-9]+$/ { k = $2; for (i = 3; i <= NF - 5; i++) k = k "_" $i; print $1, k, $(NF-4), int($(NF-2) / $1) }' \
        "$b" >"$b.rows"
    { echo 0; awk '{ print $4 }' "$b.rows"; } | sort -un | xargs "$rs" >"$b.floor" || { status=1; continue; }
    ceil=$(sed -n 's/.*read ceiling \([0-9.]*\) GB\/s.*/\1/p' "$b" | head -1)
    step=$(awk '$1 ~ /^[0-9]+$/ && NF >= 7 && $3 ~ /\./ { print $2, $3; exit }' "$b")
    awk -v ceil="$ceil" -v step="$step" '
        FNR == NR { fl[$1] = $2; next }
        { n = $1; t = $3; f = n * fl[$4]; key = $2
          cnt[key] += n; alone[key] += t; bare[key] += f; ta += t; tf += f; nl += n }
        END {
            split(step, st, " ")
            for (k in cnt) {
                x = alone[k] - bare[k]
                printf "%-40s %6d %10.4f %10.4f %10.4f %6.1f%%\n", k, cnt[k], alone[k], bare[k], x, 100 * x / (ta - tf)
            }
            printf "step %.4f ms (%s bytes); launches alone %.4f; bare reads of their bytes %.4f, of which %d empty launches %.4f; the step'"'"'s bytes at the ceiling (%s GB/s) %.4f\n",
                st[2], st[1], ta, tf, nl, nl * fl[0], ceil, st[1] / ceil / 1e6
        }' "$b.floor" "$b.rows" >"$b.table"
    echo "== $s (${FLOOR_NUMERICS:-q8}, position $pos)"
    printf '%-40s %6s %10s %10s %10s %7s\n' kernel count "alone ms" "bare ms" "excess ms" share
    grep -v '^step' "$b.table" | sort -k5 -rn
    grep '^step' "$b.table"
done
exit "$status"
