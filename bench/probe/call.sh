# bench/probe/call.sh — what a device call's probe script shares, sourced
# (`. "$(dirname "$0")/call.sh"`): its logs' folder ($work, packed into
# $OUT/logs.tgz by keep, so that a call cut short keeps what it took),
# late NAME (true, saying so, once LATE seconds have passed since the
# script began: no part begins past it; LATE's default is the script's
# own, 480 unless it sets one), carry_in (main's stripped tools and
# gpu_kernels, carried as build/carry, put where tests/gpu/run looks),
# spec8 (the 8B's spec with f16 caches and a ctx of 1024, $work/s.yaml)
# and bform BIN BATCH NAME [FUSE-ARGS...] (that spec's q8 decode batch
# fused by BIN's tools, timed at position 512: its step and its launches'
# mean µs by kind, the kinds matching FORM_SKIP left out).
out=${OUT:-/tmp}
work=$(mktemp -d)
t0=$(date +%s)
late() { [ $(($(date +%s) - t0)) -gt ${LATE:-480} ] && { echo "== (past ${LATE:-480} s: $1 not begun)"; return 0; }; return 1; }
keep() { tar czf "$out/logs.tgz" -C "$work" . ; }
carry_in() { cp -r build/carry/bin build/ && mkdir -p build/test && cp build/carry/gpu_kernels build/test/; }
spec8() { sed 's/^dim: \(.*\)/dim: \1\ncache: f16/; s/^ctx: .*/ctx: 1024/' examples/llama-3-8b.yaml >"$work/s.yaml"; }
bform() {
    d=$1 b=$2 n=$3
    shift 3
    $d/logos-author decode_batch --batch "$b" "$work/s.yaml" | $d/logos-fuse --numerics q8 "$@" >"$work/$n.plan"
    timeout 45 $d/logos-bench --form decode_batch --synthetic 1 --pos 512 -n 10 --launch-reps 1 --csv "$work/$n.plan" \
        >"$work/$n.csv" 2>"$work/$n.err"
    echo "== $n (batch $b $*): bench status $?"
    awk -F, '$1 == "step" { print "step ms", $9 } $1 == "launch" { k = $7; sub(/ q8.*/, "", k); t[k] += $9; n[k]++ }
        END { for (k in t) printf "%-40s n=%d avg %.1f us\n", k, n[k], 1000 * t[k] / n[k] }' "$work/$n.csv" | sort |
        grep -Ev "${FORM_SKIP:-^$}"
    head -3 "$work/$n.err"
}
