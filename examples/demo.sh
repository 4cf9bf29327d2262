#!/bin/sh
# demo.sh — `make demo`: author the tiny Llama, write its synthetic weights,
# and run a prompt through logos-author | logos-fuse | logos-run; then the
# same from text: logos-tok encode, the run, logos-tok decode (the tiny
# tokenizer of examples/tiny, 256 pieces, written by its tokenizer.py).
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
prompt="The capital of France is"
echo "== from text: echo \"$prompt\" | logos-tok encode examples/tiny"
echo "$prompt" | $bin/logos-tok encode examples/tiny >build/demo-prompt.ids
cat build/demo-prompt.ids
echo "== ... | logos-run --weights $w -P build/demo-prompt.ids -n 16 | logos-tok decode examples/tiny"
$bin/logos-author generate "$spec" | $bin/logos-fuse -q --lane cuda |
    $bin/logos-run -q --weights "$w" -P build/demo-prompt.ids -n 16 | $bin/logos-tok decode examples/tiny
echo
