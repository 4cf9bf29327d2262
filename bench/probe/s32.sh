#!/bin/sh
# bench/probe/s32.sh — session thirty-two's device calls (bench/NOTES.md
# run205). Carry build/bin, build/test/gpu_kernels and build-ab (stripped
# binaries: build-ab/B main with bench/probe/i8f.patch, build-ab/S branch
# sandwich; each written here by bench/probe/patched.sh or by hand).
#
#   LATE=SECONDS sh bench/probe/s32.sh
#
# runs, in order of need, none begun past LATE (500) seconds: the
# sandwich branch's gemv cases; Gemma-2-2B's q8 step, main and S;
# gpu_kernels of main (A) and S; S's lane on gemma2; gpu_kernels of B
# (its precise lines diffed against A's); issue 9's table, A and B;
# Gemma-2-2B under q8x2 and precise, A and S; main's lane and oracle; the
# other shapes' q8 step; LR's table (lr0h.sh). Logs under $OUT.
set -u
out=${OUT:-/tmp}
step() {   # BIN SHAPE NUMERICS POSITIONS...
    b=$1 s=$2 n=$3
    shift 3
    $b/logos-author decode_step examples/$s.yaml | $b/logos-fuse --lane cuda --numerics $n -q |
      $b/logos-bench --synthetic 1 "$@" 2>&1 | grep -v synthesizing
}
t0=$(date +%s)
late() { [ $(($(date +%s) - t0)) -gt ${LATE:-500} ] && { echo "== (past ${LATE:-500} s: $1 not begun)"; return 0; }; return 1; }
kernels() {   # SIDE
    case $1 in A) bin=build/bin ;; *) bin=build-ab/$1/bin ;; esac
    LOGOS_BIN=$bin KERNELS_JOBS=8 sh tests/gpu/run kernels >"$out/kernels.$1" 2>&1
    echo "== gpu_kernels $1: $(grep -E '^gpu_kernels: ' "$out/kernels.$1" | tail -1)"
    grep -E 'FAIL|PRE' "$out/kernels.$1" | head -8
}
gemma() {   # NUMERICS
    for side in A S; do
        if [ $side = A ]; then b=build/bin; else b=build-ab/S/bin; fi
        echo "== gemma-2-2b $1 $side"
        step $b gemma-2-2b $1 --pos 512 --pos 8192 >"$out/gemma.$1.$side"
        grep -E '^ +[0-9]+ +[0-9]+ |^launches alone|rownorm' "$out/gemma.$1.$side" | head -8
    done
}
nvidia-smi -L
echo "== S: the gemv cases"
KERNELS_MATCH=gemv build-ab/S/test/gpu_kernels >"$out/kernels.S.gemv" 2>&1
grep -E 'PRE|FAIL|^gpu_kernels: ' "$out/kernels.S.gemv"
gemma q8
for side in A S; do late "gpu_kernels $side" || kernels $side; done
late "lane S" || { echo "== S: lane gemma2"; LOGOS_BIN=build-ab/S/bin sh tests/gpu/lane gemma2 >"$out/lane.S" 2>&1; tail -12 "$out/lane.S"; }
late "gpu_kernels B" || kernels B
late "precise diff" || { grep -i precise "$out/kernels.A" >"$out/precise.A"; grep -i precise "$out/kernels.B" >"$out/precise.B"
    echo "== precise lines that differ (A, B): $(diff "$out/precise.A" "$out/precise.B" | grep -c '^<')"; }
late "table9 A" || { echo "== main: table9"; sh bench/probe/table9.sh; }
late "table9 B" || { echo "== i8f: table9"; B=build-ab/B/bin sh bench/probe/table9.sh; }
for n in q8x2 precise; do late "gemma $n" || gemma $n; done
late "lane oracle" || { echo "== main: lane and oracle"; LANE_JOBS=6 sh tests/gpu/run lane oracle >"$out/lane" 2>&1; tail -12 "$out/lane"; }
for s in mistral-7b qwen3-0.6b qwen2.5-0.5b gpt-oss-20b deepseek-v2-lite qwen3-next-80b-a3b lfm2-1.2b; do
    late "$s" && break
    echo "== $s q8"
    step build/bin $s q8 --pos 512 >"$out/shape.$s"
    grep -E '^device|^ +[0-9]+ +[0-9]+ ' "$out/shape.$s"
done
late lr0h || { echo "== main: lr0h"; sh bench/probe/lr0h.sh; }
