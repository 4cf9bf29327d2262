#!/bin/sh
# bench/probe/s34.sh — session thirty-four's H200 call (bench/NOTES.md
# run209): main (SWZ and the sandwich) on the H200. Carry build/bin,
# build/test/gpu_kernels and build-ab/B (stripped). The moe part, only
# when PARTS names it, ran run209h: build-ab/M was main b155286 with
# bench/probe/moeswz.patch (since landed; the patch is in git at b155286),
# from `sh bench/probe/patched.sh bench/probe/moeswz.patch M`.
#
#   [PARTS='kernels bench9 ab bench10 lane' (moe, laneB, busy, sweep, timeline, timelineB, timelinepf: only by name)]
#   [AB_STEPS='SHAPE:NUMERICS ...'] [AB_POS='512 8192'] [AB_DIR=build-ab/B] [AB_MATCH=TEXT] LATE=SECONDS sh bench/probe/s34.sh
#
# runs, in the order PARTS names them, none begun past LATE (480) seconds: gpu_kernels; issue 9's bench
# (the six dense shapes, each numerics, 512 and 8192, per-launch tables);
# a patch against main (build-ab/B from bench/probe/patched.sh, with its
# logos-run: its gpu_kernels, and the 8B and 1B precise and q8 steps side
# by side, or AB_STEPS's); issue 10's (the four
# mixtures' shapes, q8); the lane and the oracle; moeswz against main
# (build-ab/M's moe cases, two mixtures' precise steps side by
# side); laneB: the lane and the oracle through build-ab/B's tools; sweep:
# tests/gpu/run's sweep (issue 11's chunks and batches, SWEEP_JOBS 8); busy:
# bench/probe/busy.sh on BUSY_SHAPES (four dense shapes; BUSIES, POSES); timeline: tests/gpu/run's
# timeline on TL_SHAPES (default the 1B, the 8B and Gemma-2-2B);
# timelineB: the same through build-ab/B's tools; timelinepf: the same under --preload-kb 200 (the 1B and Gemma-2-2B). The
# logs (tests/gpu/run's gpu-logs) go into $OUT/logs.tgz after each part,
# so a call cut short keeps what it took.
set -u
. "$(dirname "$0")/call.sh"
part() {   # NAME ENV... CHECKS...: tests/gpu/run with its logs in $work/NAME
    name=$1
    shift
    late "$name" && return
    echo "== $name"
    mkdir -p "$work/$name"
    env OUT="$work/$name" LOGOS_BIN=build/bin "$@" >"$work/$name.out" 2>&1
    sed -n '/^== summary/,$p' "$work/$name.out"
    keep
}
step() {   # BIN SHAPE NUMERICS LOG POS...: SHAPE's decode step by BIN's tools (its own kernels) into $work/LOG
    sb=$1 ss=$2 sn=$3 sl=$4
    shift 4
    $sb/logos-author decode_step examples/$ss.yaml | $sb/logos-fuse --lane cuda --numerics $sn -q |
      $sb/logos-bench --synthetic 1 "$@" >"$work/$sl" 2>&1
}
nvidia-smi -L
bench9() { part bench9 SHAPES="llama-3-8b llama-3.2-1b mistral-7b qwen2.5-0.5b qwen3-0.6b gemma-2-2b" \
    BENCH_NUMERICS="q8 q8x2 precise" sh tests/gpu/run bench; }
ab() {   # the patched build AB_DIR (build-ab/B); AB_MATCH: only its gpu_kernels cases that hold it
    late ab && return
    d=${AB_DIR:-build-ab/B}
    echo "== ${d##*/}: gpu_kernels"
    env ${AB_MATCH:+KERNELS_MATCH=$AB_MATCH} "$d/test/gpu_kernels" >"$work/kernels.${d##*/}" 2>&1
    grep -E 'FAIL|^gpu_kernels: ' "$work/kernels.${d##*/}" | head -8
    for sn in ${AB_STEPS:-llama-3-8b:precise llama-3-8b:q8 llama-3.2-1b:precise llama-3.2-1b:q8}; do
        s=${sn%%:*} n=${sn#*:}
        for b in build/bin "$d/bin"; do
            echo "== $s $n $b"
            step $b $s $n ab.$s.$n.${b%%/*} $(for q in ${AB_POS:-512 8192}; do echo --pos $q; done)
            grep -E '^device|^ +[0-9]+ +[0-9]+ ' "$work/ab.$s.$n.${b%%/*}"
        done
    done
    keep
}
busy() {
    late busy && return
    mkdir -p "$work/busy"
    OUT="$work/busy" LOGOS_BIN=build/bin sh bench/probe/busy.sh ${BUSY_SHAPES:-qwen2.5-0.5b qwen3-0.6b llama-3.2-1b llama-3-8b}
    keep
}
laneB() { part laneB LOGOS_BIN=build-ab/B/bin LANE_JOBS=6 sh tests/gpu/run lane oracle; }
bench10() { part bench10 SHAPES="gpt-oss-20b deepseek-v2-lite qwen3-next-80b-a3b lfm2-1.2b" \
    BENCH_NUMERICS=q8 sh tests/gpu/run bench; }
lane() { part lane LANE_JOBS=6 sh tests/gpu/run lane oracle; }
sweep() { part sweep SWEEP_JOBS=8 sh tests/gpu/run sweep; }
timeline() {
    part timeline TL_SHAPES="${TL_SHAPES:-llama-3.2-1b llama-3-8b gemma-2-2b}" sh tests/gpu/run timeline
    [ -e "$work/timeline.out" ] && sed -n '/^== timeline/,/^== summary/p' "$work/timeline.out" | head -90
}
timelineB() {   # the same through build-ab/B's tools (their own kernels)
    part timelineB LOGOS_BIN=build-ab/B/bin TL_SHAPES="${TL_SHAPES:-llama-3.2-1b llama-3-8b gemma-2-2b}" sh tests/gpu/run timeline
    [ -e "$work/timelineB.out" ] && sed -n '/^== timeline/,/^== summary/p' "$work/timelineB.out" | grep -A2 'attention launches'
}
timelinepf() {   # the same with rule preload (session 37's open question)
    part timelinepf TL_FUSE="--preload-kb 200" TL_SHAPES="${TL_SHAPES:-llama-3.2-1b gemma-2-2b}" sh tests/gpu/run timeline
    [ -e "$work/timelinepf.out" ] && sed -n '/^== timeline/,/^== summary/p' "$work/timelinepf.out" | head -60
}
kernels() { part kernels KERNELS_JOBS=8 sh tests/gpu/run kernels; }
moe() {
    late moe && return
    echo "== M: moe cases"
    KERNELS_MATCH=moe build-ab/M/test/gpu_kernels >"$work/kernels.M" 2>&1
    grep -E 'FAIL|^gpu_kernels: ' "$work/kernels.M" | head -8
    for s in gpt-oss-20b deepseek-v2-lite; do   # each build with its own kernels
        for b in build/bin build-ab/M/bin; do
            echo "== $s precise $b"
            step $b $s precise moe.$s.${b%%/*} --pos 512
            grep -E '^device|^ +[0-9]+ +[0-9]+ | moe ' "$work/moe.$s.${b%%/*}" | head -6
        done
    done
    keep
}
for x in ${PARTS:-kernels bench9 ab bench10 lane}; do $x; done   # moe: run209h, landed
