# bench/probe/call.sh — what a device call's probe script shares, sourced
# (`. "$(dirname "$0")/call.sh"`): its logs' folder ($work, packed into
# $OUT/logs.tgz by keep, so that a call cut short keeps what it took),
# late NAME (true, saying so, once LATE seconds have passed since the
# script began: no part begins past it; LATE's default is the script's
# own, 480 unless it sets one) and carry_in (main's stripped tools and
# gpu_kernels, carried as build/carry, put where tests/gpu/run looks).
out=${OUT:-/tmp}
work=$(mktemp -d)
t0=$(date +%s)
late() { [ $(($(date +%s) - t0)) -gt ${LATE:-480} ] && { echo "== (past ${LATE:-480} s: $1 not begun)"; return 0; }; return 1; }
keep() { tar czf "$out/logs.tgz" -C "$work" . ; }
carry_in() { cp -r build/carry/bin build/ && mkdir -p build/test && cp build/carry/gpu_kernels build/test/; }
