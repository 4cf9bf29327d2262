#!/bin/sh
# big.sh — logos-import streams: a Llama-shaped bf16 checkpoint of GB
# gigabytes (default 8.2; a sparse file of zeros that tests/import/gen.py
# writes without holding it) is imported as q8 under /usr/bin/time -v, and
# the peak resident memory is printed (it must stay under 1 GB). Not part of
# make check: it writes about half of GB to disk and takes a minute or more.
#   usage: tests/import/big.sh [GB] [SCRATCH]   (SCRATCH default /tmp/logos-big)
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
gb=${1:-8.2}
dir=${2:-/tmp/logos-big}
rm -rf "$dir"
mkdir -p "$dir"
python3 "$top/tests/import/gen.py" big "$dir/ck" "$gb"
du -h --apparent-size "$dir/ck/model.safetensors"
/usr/bin/time -v "$top/build/bin/logos-import" -o "$dir/out" "$dir/ck" 2>"$dir/time.log" || {
    cat "$dir/time.log"; exit 1; }
grep -E 'logos-import: wrote|Elapsed|Maximum resident' "$dir/time.log"
kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$dir/time.log")
echo "peak RSS: $((kb / 1024)) MB"
rm -rf "$dir"
[ "$kb" -lt 1048576 ]
