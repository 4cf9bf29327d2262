#!/bin/sh
# bench/probe/s52.sh — mmv without local memory, checked and timed against
# main (bench/NOTES.md run273): bench/probe/nospill.patch (build-ab/ns: a
# warp's weight-row addresses computed at each stage it issues instead of
# held in 19 registers across the tile, from two rows' where every part is
# whole tiles; a slab's weight scales loaded at the slab; at NT 4 under
# XS 2 the products of three parts or uneven slices of K with two slabs
# unrolled, not four: ptxas's local memory in the default decode
# batches' 785 instantiations 32 -> 0, a stage's loop ~20-35% fewer
# instructions; the patch also takes tests/golden/spills.known out and has
# plan.bats' compile test of those batches ask for no local memory at
# all, so that applied to main it is the whole change). Then
# bench/probe/kimb.patch (build-ab/ki: mmi_small no longer keeps a product
# on mmv where mmv's slices of K are uneven by a quarter or more,
# Gemma-2-2B's q/k/v at K 2304, 18 steps on 8 warps) at 32-64 rows.
# Carry build-ab/s52.tar.xz:
#   sh bench/probe/patched.sh bench/probe/nospill.patch ns
#   sh bench/probe/patched.sh bench/probe/kimb.patch ki
#   tar cJf build-ab/s52.tar.xz build/carry build-ab/ns build-ab/ki
set -u
. "$(dirname "$0")/call.sh"
open_tar build-ab/s52.tar.xz
echo "== gpu_kernels (ns): mmv cases"
kcheck build-ab/ns/test/gpu_kernels mmv kmvns
tail -1 "$work/kmvns"
spec16 llama-3-8b l8
spec16 llama-3.2-1b l1
spec16 gemma-2-2b g2
echo "== q8 decode batches, f16 caches, position 512: ms main, ms ns"
pairs "$PWD/build-ab/ns" l8:16 l8:24 l8:32 l8:64 l1:16 l1:32 g2:32 g2:64 l8:16
echo "== q8 decode batches, f16 caches, position 512: ms main, ms ki"
pairs "$PWD/build-ab/ki" g2:32 g2:48 g2:64 g2:32
lanes "$PWD/build-ab/ns"
keep
