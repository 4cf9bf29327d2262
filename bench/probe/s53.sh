#!/bin/sh
# bench/probe/s53.sh — session 50's landing of run273's two patches,
# checked and timed against main (bench/NOTES.md run274): build-ab/fin is
# main with mmv's FRESH form at NT 1-3 only (nospill.patch's code there,
# main's at NT 4, the SASS of each checked equal here) and kimb.patch
# from 33 rows; build/carry is main's tools. Carry build-ab/s53.tar.xz:
#   git diff >/tmp/fin.patch; sh bench/probe/patched.sh /tmp/fin.patch fin
#   (main's own: a patch of bench/NOTES.md alone) sh bench/probe/patched.sh /tmp/noop.patch m0
#   rm -rf build/carry; mkdir -p build/carry; cp -r build-ab/m0/bin build/carry/
#   cp build-ab/m0/test/gpu_kernels build/carry/
#   tar cJf build-ab/s53.tar.xz build/carry build-ab/fin
set -u
. "$(dirname "$0")/call.sh"
open_tar build-ab/s53.tar.xz
echo "== gpu_kernels (fin): every case"
kcheck build-ab/fin/test/gpu_kernels "" kfin
tail -1 "$work/kfin"
spec16 llama-3-8b l8
spec16 llama-3.2-1b l1
spec16 gemma-2-2b g2
spec16 qwen3-0.6b q3
echo "== q8 decode batches, f16 caches, position 512: ms main, ms fin"
pairs "$PWD/build-ab/fin" l8:16 l8:24 l8:32 l1:16 l1:24 q3:16 q3:24 g2:24 g2:40 g2:48 g2:64 l8:8 l8:16
lanes "$PWD/build-ab/fin"
keep
