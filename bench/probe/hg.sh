#!/bin/sh
# bench/probe/hg.sh — a decode step's attention with fewer query heads a
# block (HG) than the lane's: SHAPE's q8 step, each attend launch's HG set
# to each of HGS (its grid's x, shared memory and count buffer with it; the
# plan edited as text, logos-run checks it), each against the lane's plan
# in one logos-bench --compare run at 512 and 8192; TL=1 adds a timeline of
# the edited plan summed by bench/attend.awk. First, 24 greedy steps'
# logits each way (python3's numpy compares them: the edit moves only the
# attention's rounding).
#
#   [HGS='2'] [TL=1] [LOGOS_BIN=build/bin] sh bench/probe/hg.sh SHAPE
#
# Fewer heads a block leave a thread registers for more key rows a round
# (attend.cu's R: the 8B's 3 at HG 4, 6 at HG 2), so a chunk of 16 rows is
# one round, all loaded before the wait; the key and value rows are read
# by NH / NKV / HG blocks each.
set -u
bin=${LOGOS_BIN:-build/bin}
out=${OUT:-/tmp}
[ $# -eq 1 ] || { echo "usage: sh bench/probe/hg.sh SHAPE" >&2; exit 2; }
s=$1
$bin/logos-author decode_step examples/$s.yaml | $bin/logos-fuse --lane cuda --numerics q8 -q >"$out/$s.plan" || exit 1
grep -m1 '^launch attend' "$out/$s.plan" | grep -o ' HG=[0-9]* ' | sed "s/^/== $s: the lane's/"
for hg in ${HGS:-2}; do
    awk -v hg="$hg" '
        function c(name,   i) { for (i = 1; i <= NF; i++) if ($i ~ "^" name "=") return substr($i, length(name) + 2) + 0 }
        FNR == NR { if ($1 == "launch" && $2 == "attend") { for (i = 1; i <= NF; i++) if ($i ~ /^cnt=/) cnt[substr($i, 5)] = c("ROWS") * c("NH") / hg }; next }
        $1 == "buffer" && ($2 in cnt) { $NF = cnt[$2] }
        $1 == "launch" && $2 == "attend" {
            nh = c("NH"); nkv = c("NKV"); hd = c("HD"); vd = c("VD")
            lr = hd % 32 == 0 && vd % 32 == 0 && hg <= 4
            for (i = 1; i <= NF; i++) {
                if ($i ~ /^HG=/) $i = "HG=" hg
                if ($i == "grid") $(i + 1) = nh / hg
                if ($i == "smem") $(i + 1) = 4 * hg * (vd + 2) * 4 + (lr ? hg * hd * 4 : 0)
            }
        }
        { print }' "$out/$s.plan" "$out/$s.plan" >"$out/$s.hg$hg.plan"
    echo "== $s: HG $hg against the lane's"
    for f in "$s.plan" "$s.hg$hg.plan"; do   # 24 greedy steps' logits each way
        $bin/logos-run -q --device cuda --synthetic 1 -p "1 2 3" -n 24 --logits "$out/$f.f32" "$out/$f" >/dev/null 2>&1
    done
    python3 -c 'import sys, numpy as n; a, b = (n.fromfile(f, n.float32) for f in sys.argv[1:]); print("  logits: %d values, largest difference %.3g of the largest logit" % (a.size, abs(a - b).max() / abs(a).max()) if a.size == b.size and a.size else "  logits: a run failed")' \
        "$out/$s.plan.f32" "$out/$s.hg$hg.plan.f32"
    tl=
    [ -n "${TL:-}" ] && tl="--timeline $out/$s.hg$hg.tl.csv --timeline-blocks $out/$s.hg$hg.blocks.csv"
    # shellcheck disable=SC2086
    $bin/logos-bench --synthetic 1 --pos 512 --pos 8192 $tl --compare "$out/$s.hg$hg.plan" "$out/$s.plan" >"$out/$s.hg$hg.log" 2>&1
    grep -E '^ +(512|8192) |times the time|error|logos' "$out/$s.hg$hg.log" | head -10
    [ -n "${TL:-}" ] && [ -s "$out/$s.hg$hg.blocks.csv" ] && awk -F, -f bench/attend.awk "$out/$s.hg$hg.blocks.csv"
done
