#!/bin/sh
# bench/wgh.sh — bench/wgh.cu's variants (Q8_0 weights dequantized to f16
# tiles, wgmma f16) compiled and timed in one call on the GPU machine, one
# line each: the variant, M x N x K, ms, TFLOP/s and the worst relative
# error of 4000 sums against the host's (bench/NOTES.md, run156, run158;
# t*: fed by TMA, the wgt kernel; c*: wgt's order fed by cp.async, wgc).
#
#   sh bench/wgh.sh [VARIANT...]      VARIANT: a name below (default all)
#
# WGH_BIN: a folder of binaries built already (by this script with nvcc
# here: WGH_BUILD=1 builds them and runs nothing). Shapes: the 8B's gated
# pair at 512 and 2048 rows, its down, q/k/v and o at 512; the 1B's gated
# pair and down at 512.
# Exit status: 0 every variant ran and its sums were right (NOCONV's and
# FMA's are not checked), 1 one failed, 3 no nvcc and no WGH_BIN.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
out=${WGH_BIN:-$(mktemp -d)}
arch="-gencode arch=compute_90a,code=sm_90a"
# name: flags
variants="h256:-DBN=256
h128:-DBN=128
h256s3:-DBN=256 -DSTAGES=3
h256fma:-DBN=256 -DFMA
h256nc:-DBN=256 -DNOCONV
t256:-DTMA -DBN=256 -DSTAGES=4
t128:-DTMA -DBN=128 -DSTAGES=6
t256nc:-DTMA -DBN=256 -DSTAGES=4 -DNOCONV
t128nc:-DTMA -DBN=128 -DSTAGES=6 -DNOCONV
c256:-DCPW -DBN=256 -DSTAGES=4
c128:-DCPW -DBN=128 -DSTAGES=6"
want=${*:-$(echo "$variants" | cut -d: -f1)}
status=0
mkdir -p "$out"
for name in $want; do
    flags=$(echo "$variants" | sed -n "s/^$name://p")
    [ -n "$flags" ] || { echo "wgh: no variant $name" >&2; status=1; continue; }
    if [ ! -x "$out/$name" ]; then
        command -v nvcc >/dev/null 2>&1 || PATH=$PATH:/usr/local/cuda/bin
        command -v nvcc >/dev/null 2>&1 || { echo "wgh: no nvcc and no $out/$name" >&2; exit 3; }
        # shellcheck disable=SC2086
        nvcc -O3 $arch $flags -o "$out/$name" "$top/bench/wgh.cu" || { status=1; continue; }
    fi
    [ -n "${WGH_BUILD:-}" ] && continue
    for mnk in "512 28672 4096" "2048 28672 4096" "512 4096 14336" "512 6144 4096" "512 4096 4096" \
        "512 16384 2048" "512 2048 8192"; do
        printf '%-8s ' "$name"
        # shellcheck disable=SC2086
        timeout 30 "$out/$name" $mnk
        rc=$?
        case "$name:$rc" in
        *fma:1 | *nc:1) ;;
        *:0) ;;
        *) status=1; echo ;;
        esac
    done
done
exit "$status"
