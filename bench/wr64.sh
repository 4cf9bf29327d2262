#!/bin/sh
# bench/wr64.sh — bench/wr64.cu's variants (64 rows, the activations
# resident in shared memory, stream-K, wgmma f16 with the weights
# dequantized into registers) compiled and timed in one call on the GPU
# machine, a line each: variant, N x K, us a launch (L2 emptied first),
# GB/s of weights, TFLOP/s and the worst relative error of 4000 sums
# against the host's (bench/NOTES.md run180).
#
#   sh bench/wr64.sh [VARIANT...]     VARIANT: below (default all)
#
# kKSaA: stream-K, K slices of KS values, ATOM A (0 the stages alone, sums
# not written; 1 a float at a time into y; 2 two at a time into y
# transposed). cSKkKS: clusters of SK blocks a tile, each its K / SK = KS
# values (only the shapes whose K is SK x KS).
# WR_BIN: a folder of binaries built already (WR_BUILD=1 builds them with
# nvcc here and runs nothing). Shapes: the 8B's gated pair, down, q/k/v, o
# and LM head. Exit status: 0 every variant ran and its sums were right
# (ATOM 0's are not checked), 1 one failed, 3 no nvcc and no WR_BIN.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
out=${WR_BIN:-$(mktemp -d)}
want=${*:-"k1024a0 k1024a1 k1024a2 k512a0 k512a1 k512a2 c4k1024 c8k512 c14k1024"}
status=0
mkdir -p "$out"
for name in $want; do
    case $name in
    c*) sk=${name#c}; sk=${sk%k*}; ks=${name#*k}; atom=1; flags="-DCL=1 -DSK=$sk -DKS=$ks" ;;
    *) ks=${name#k}; ks=${ks%a*}; atom=${name#*a}; sk=0; flags="-DKS=$ks -DATOM=$atom" ;;
    esac
    if [ ! -x "$out/$name" ]; then
        command -v nvcc >/dev/null 2>&1 || PATH=$PATH:/usr/local/cuda/bin
        command -v nvcc >/dev/null 2>&1 || { echo "wr64: no nvcc and no $out/$name" >&2; exit 3; }
        # shellcheck disable=SC2086
        nvcc -O3 -gencode arch=compute_90a,code=sm_90a $flags -o "$out/$name" \
            "$top/bench/wr64.cu" -lcuda || { status=1; continue; }
    fi
    [ -n "${WR_BUILD:-}" ] && continue
    for nk in "28672 4096" "4096 14336" "6144 4096" "4096 4096" "128256 4096"; do
        [ "$sk" -gt 0 ] && [ "${nk#* }" -ne $((sk * ks)) ] && continue
        printf '%-8s ' "$name"
        # shellcheck disable=SC2086
        timeout 60 "$out/$name" $nk
        rc=$?
        case "$atom:$rc" in
        0:1 | *:0) ;;
        *) status=1; echo ;;
        esac
    done
done
exit "$status"
