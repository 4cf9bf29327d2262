#!/bin/sh
# demo.sh — `make demo`: author the tiny Llama, write its synthetic weights,
# and run a prompt through logos-author | logos-fuse | logos-run.
set -eu
cd "$(dirname "$0")/.."
bin=build/bin
spec=examples/tiny/llama.yaml
w=build/demo-weights
echo "== $spec: can every layer be written?"
$bin/logos-check "$spec"
echo "== the decode step it authors, checked:"
$bin/logos-author decode_step "$spec" | $bin/logos-check
echo "== synthetic weights (seed 6: random, so the tokens mean nothing) into $w:"
$bin/logos-author generate "$spec" | $bin/logos-run --synthetic 6 --write-weights "$w"
ls "$w" | head -5
echo "   ... $(ls "$w" | wc -l) files"
echo "== logos-author generate $spec | logos-fuse --lane cuda | logos-run --weights $w -p \"1 2 3\" -n 8"
$bin/logos-author generate "$spec" | $bin/logos-fuse --lane cuda | $bin/logos-run --weights "$w" -p "1 2 3" -n 8
