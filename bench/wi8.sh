#!/bin/sh
# bench/wi8.sh — bench/wi8.cu's variants (64 rows, int8 wgmma with the
# per-32 scales applied to each slab's sums, x resident, stream-K)
# compiled and timed in one call on the GPU machine, a line each: variant,
# N x K, us a launch (L2 emptied first), GB/s of weights, TOP/s and the
# worst relative error of 4000 sums against the host's (bench/NOTES.md
# session forty-four).
#
#   sh bench/wi8.sh [VARIANT...]     VARIANT: kKSsSaA or xSaA (default below)
#
# KS: the K slice a block keeps of x; S: the ring's stages; A: ATOM (0 the
# stages alone, sums not written; 1 a float at a time into y). xSaA: x
# streamed with each stage instead (XS 1, the stages tile-major). WI_BIN: a
# folder of binaries built already (WI_BUILD=1 builds them with nvcc here
# and runs nothing). Shapes: the 8B's gated pair, down, q/k/v, o and LM
# head. Exit status: 0 every variant ran and its sums were right (ATOM
# 0's are not checked), 1 one failed, 3 no nvcc and no WI_BIN.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
out=${WI_BIN:-$(mktemp -d)}
want=${*:-"k1024s4a0 k1024s4a1 k512s5a1 k1024s3a1 x4a0 x4a1 x3a1"}
status=0
mkdir -p "$out"
for name in $want; do
    case $name in
    x*) ks=1024; st=${name#x}; st=${st%a*}; xs=1 ;;
    *) ks=${name#k}; ks=${ks%%s*}; st=${name#*s}; st=${st%a*}; xs=0 ;;
    esac
    atom=${name#*a}
    if [ ! -x "$out/$name" ]; then
        command -v nvcc >/dev/null 2>&1 || PATH=$PATH:/usr/local/cuda/bin
        command -v nvcc >/dev/null 2>&1 || { echo "wi8: no nvcc and no $out/$name" >&2; exit 3; }
        nvcc -O3 -gencode arch=compute_90a,code=sm_90a -DKS="$ks" -DSTAGES="$st" -DATOM="$atom" -DXS="$xs" \
            -o "$out/$name" "$top/bench/wi8.cu" || { status=1; continue; }
    fi
    [ -n "${WI_BUILD:-}" ] && continue
    for nk in "28672 4096" "4096 14336" "6144 4096" "4096 4096" "128256 4096"; do
        printf '%-10s ' "$name"
        timeout 60 "$out/$name" $nk
        rc=$?
        case "$atom:$rc" in
        0:1 | *:0) ;;
        *) status=1; echo ;;
        esac
    done
done
exit "$status"
