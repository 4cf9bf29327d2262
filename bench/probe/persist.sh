#!/bin/sh
# bench/probe/persist.sh — bench/persist.cu's variants built and run in one
# call on the GPU machine (nvcc there, or binaries built here and carried
# in PERSIST_BIN): each variant's check against the host's sums, then its
# 8B and 1B products timed, one line each (bench/NOTES.md, run138 on).
#
#   sh bench/probe/persist.sh [VARIANT...]     VARIANT: a name below (default all)
#   PERSIST_PROF=1: the PROF build of each too, its table a phase kind
#
# Exit status: 0 every variant built, checked right and ran; 1 one did
# not; 3 no nvcc and no PERSIST_BIN.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${PERSIST_BIN:-$(mktemp -d)}
arch="-gencode arch=compute_90a,code=sm_90a"
# name: flags
variants="barrier:
ll:-DLL=1
pf:-DPF=6
llpf:-DLL=1 -DPF=6
stream:-DSTREAM=1
noload:-DNOLOAD=1"
want=${*:-$(echo "$variants" | cut -d: -f1)}
status=0
build() {   # NAME FLAGS
    [ -x "$out/$1" ] && return 0
    command -v nvcc >/dev/null 2>&1 || PATH=$PATH:/usr/local/cuda/bin
    command -v nvcc >/dev/null 2>&1 || { echo "persist: no nvcc and no $out/$1" >&2; exit 3; }
    # shellcheck disable=SC2086
    nvcc -O3 $arch $2 -o "$out/$1" "$top/bench/persist.cu"
}
for name in $want; do
    flags=$(echo "$variants" | sed -n "s/^$name://p")
    echo "$variants" | grep -q "^$name:" || { echo "persist: no variant $name" >&2; status=1; continue; }
    build "$name" "$flags" || { status=1; continue; }
    echo "== $name"
    case $name in stream|noload) ;; *) timeout 20 "$out/$name" check || status=1 ;; esac
    for shape in 8b 1b; do
        if line=$(timeout 30 "$out/$name" $shape 2>&1); then
            echo "$line" | tail -1
        else
            echo "$line" | tail -2
            status=1
        fi
    done
    if [ "${PERSIST_PROF:-}" = 1 ]; then
        build "$name-prof" "$flags -DPROF=1" || { status=1; continue; }
        for shape in 8b 1b; do
            timeout 30 "$out/$name-prof" $shape >"$out/prof.$shape" 2>&1 || status=1
            grep -v weights "$out/prof.$shape"
        done
    fi
done
exit "$status"
