#!/bin/sh
# bench/wgmma.sh — bench/wgmma.cu's variants compiled and timed in one call
# on the GPU machine (nvcc there, or binaries built here and carried in
# WG_BIN), one line each: the variant, M x N x K, ms, TOP/s and the worst
# relative error of 4000 sums against the host's (bench/NOTES.md, run106 on).
#
#   sh bench/wgmma.sh [VARIANT...]      VARIANT: a name below (default all)
#
# Exit status: 0 every variant ran and its sums were right (MODE 2's are not
# checked), 1 one failed, 3 no nvcc and no WG_BIN.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
out=${WG_BIN:-$(mktemp -d)}
arch="-gencode arch=compute_90a,code=sm_90a"
# name: flags
variants="mmas6:-DTMA -DMMAS -DBN=64 -DMODE=1 -DSTAGES=6
mmasb:-DTMA -DMMAS -DB1D -DBN=64 -DMODE=1 -DSTAGES=6
mmas4:-DTMA -DMMAS -DBN=64 -DMODE=1 -DSTAGES=4
wg64:-DTMA -DBN=64 -DMODE=1 -DSTAGES=6
raw128:-DTMA -DBN=128 -DMODE=2 -DSTAGES=5 -DPAIR=1"
want=${*:-$(echo "$variants" | cut -d: -f1)}
status=0
for name in $want; do
    flags=$(echo "$variants" | sed -n "s/^$name://p")
    [ -n "$flags" ] || { echo "wgmma: no variant $name" >&2; status=1; continue; }
    if [ ! -x "$out/$name" ]; then
        command -v nvcc >/dev/null 2>&1 || PATH=$PATH:/usr/local/cuda/bin
        command -v nvcc >/dev/null 2>&1 || { echo "wgmma: no nvcc and no $out/$name" >&2; exit 3; }
        # shellcheck disable=SC2086
        nvcc -O3 $arch $flags -o "$out/$name" "$top/bench/wgmma.cu" || { status=1; continue; }
    fi
    for mn in "512 28672" "2048 28672" "512 4096"; do
        printf '%-7s ' "$name"
        timeout 20 "$out/$name" $mn || { status=1; echo; }
    done
done
exit "$status"
