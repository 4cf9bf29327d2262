# bench/probe/call.sh — what a device call's probe script shares, sourced
# (`. "$(dirname "$0")/call.sh"`): its logs' folder ($work, packed into
# $OUT/logs.tgz by keep, so that a call cut short keeps what it took),
# late NAME (true, saying so, once LATE seconds have passed since the
# script began: no part begins past it; LATE's default is the script's
# own, 480 unless it sets one), carry_in (main's stripped tools and
# gpu_kernels, carried as build/carry, put where tests/gpu/run looks),
# kcheck BIN MATCH NAME (BIN, a gpu_kernels, on its cases matching MATCH,
# every case where MATCH is empty: the lines not ok and its count), spec16 SHAPE [NAME] (examples/SHAPE's
# spec with f16 caches and a ctx of 1024, $work/NAME.yaml, NAME SHAPE
# unless given), spec8 (the 8B's, $work/s.yaml), step NAME BIN SPEC BATCH
# [FUSE-ARGS...] (SPEC's q8 decode batch fused by BIN's tools and timed at
# position 512: $work/NAME.plan, .csv and .err; logos-bench's status),
# step_ms NAME (that run's step in ms, nothing if it failed), ms NAME BIN
# SPEC BATCH [FUSE-ARGS...] (step, then its step_ms), bform BIN
# BATCH NAME [FUSE-ARGS...] (step on spec8's spec: its step and its
# launches' mean µs by kind, the kinds matching FORM_SKIP left out) and
# twice "BATCHES" BIN:LABEL... (bform for each batch and BIN, the whole
# round twice: LABEL BATCH.ROUND), open8 (carry_in, the card's name,
# spec8, FORM_SKIP the launches around the products) and versus SHAPE
# BATCH ALT... (spec16's SHAPE under each ALT, a string of logos-fuse
# options, by main's tools: each step's ms and its mmi launches),
# open_tar TARBALL (the carried tools unpacked, carry_in, the card's
# name), pairs DIR SHAPE:ROWS... (each batch timed by main's tools and
# DIR's) and lanes DIR (the lane through DIR's tools, below).
out=${OUT:-/tmp}
work=$(mktemp -d)
t0=$(date +%s)
late() { [ $(($(date +%s) - t0)) -gt ${LATE:-480} ] && { echo "== (past ${LATE:-480} s: $1 not begun)"; return 0; }; return 1; }
keep() { tar czf "$out/logs.tgz" -C "$work" . ; }
carry_in() { cp -r build/carry/bin build/ && mkdir -p build/test && cp build/carry/gpu_kernels build/test/; }
kcheck() {
    env ${2:+KERNELS_MATCH=$2} timeout 150 "$1" >"$work/$3" 2>&1
    grep -v ' ok ' "$work/$3" | head -20
}
spec16() {
    sed 's/^dim: \(.*\)/dim: \1\ncache: f16/; s/^ctx: .*/ctx: 1024/' "examples/$1.yaml" >"$work/${2:-$1}.yaml"
}
spec8() { spec16 llama-3-8b s; }
step() {
    n=$1 d=$2 sp=$3 b=$4
    shift 4
    $d/logos-author decode_batch --batch "$b" "$sp" | $d/logos-fuse --numerics q8 "$@" >"$work/$n.plan"
    timeout 45 $d/logos-bench --form decode_batch --synthetic 1 --pos 512 -n 10 --launch-reps 1 --csv "$work/$n.plan" \
        >"$work/$n.csv" 2>"$work/$n.err"
}
step_ms() { awk -F, '$1 == "step" { printf "%s", $9 }' "$work/$1.csv"; }
ms() { step "$@"; step_ms "$1"; }
bform() {
    d=$1 b=$2 n=$3
    shift 3
    step "$n" "$d" "$work/s.yaml" "$b" "$@"
    echo "== $n (batch $b $*): bench status $?"
    awk -F, '$1 == "step" { print "step ms", $9 } $1 == "launch" { k = $7; sub(/ q8.*/, "", k); t[k] += $9; n[k]++ }
        END { for (k in t) printf "%-40s n=%d avg %.1f us\n", k, n[k], 1000 * t[k] / n[k] }' "$work/$n.csv" | sort |
        grep -Ev "${FORM_SKIP:-^$}"
    head -3 "$work/$n.err"
}
twice() {
    bs=$1
    shift
    for r in 1 2; do
        for b in $bs; do
            for dl in "$@"; do
                bform "${dl%%:*}" "$b" "${dl#*:}$b.$r"
            done
        done
    done
}
open8() {
    carry_in || exit 3
    nvidia-smi -L
    spec8
    FORM_SKIP="rownorm|embed|argmax|attend"
}
versus() {
    vs=$1 vb=$2
    shift 2
    for a in "$@"; do
        step p build/bin "$work/$vs.yaml" "$vb" $a
        printf ' %s (%s mmi)' "$(step_ms p)" "$(grep -c '^launch mmi' "$work/p.plan")"
    done
}
# open_tar TARBALL: the call's carried tools unpacked, main's put in place
# (carry_in), the card named.
open_tar() {
    tar xJf "$1" || exit 3
    carry_in || exit 3
    nvidia-smi -L
}
# pairs DIR SHAPE:ROWS...: each shape's q8 decode batch of ROWS
# ($work/SHAPE.yaml, from spec16) timed by main's tools and by DIR's:
# "SHAPE ROWS: ms ms", none begun past LATE.
pairs() {
    pd=$1
    shift
    for sb in "$@"; do
        s=${sb%:*} b=${sb#*:}
        late "$sb" && break
        echo "$s $b: $(ms "m$s$b" build/bin "$work/$s.yaml" "$b") $(ms "p$s$b" "$pd/bin" "$work/$s.yaml" "$b")"
    done
}
# lanes DIR: the lane through DIR's tools (LANE_REF=numerics): llama qwen2
# gemma2, then batches 3 16 64 of llama qwen3 gemma2, unless past LATE
lanes() {
    late "lane" && return
    echo "== lane (${1##*/}'s tools): llama qwen2 gemma2, and batches 3 16 64 of llama qwen3 gemma2"
    LANE_REF=numerics LOGOS_BIN=$1/bin timeout 150 sh tests/gpu/lane llama qwen2 gemma2 >"$work/lane" 2>&1
    LANE_REF=numerics LOGOS_BIN=$1/bin LANE_BATCHES="3 16 64" timeout 150 sh tests/gpu/lane llama qwen3 gemma2 >>"$work/lane" 2>&1
    grep -E "FAIL|passed" "$work/lane" | tail -8
}
