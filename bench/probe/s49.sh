#!/bin/sh
# bench/probe/s49.sh — a call for a later session (bench/NOTES.md run266):
# mmi_small's bound (a product stays on mmv with fewer than 4 stages of
# 256 values a multiprocessor) at 4, 2 and 1 a multiprocessor
# (bench/probe/mmismall.patch: LOGOS_MMI_QSTAGES, quarter stages a
# multiprocessor, read by logos-fuse; 16, 8, 4), the q8 decode batches of
# 64 and 48 rows (f16 caches, position 512) of the 8B, the 1B, Qwen3-0.6B,
# Gemma-2-2B and Mistral-7B: each step's ms and its mmi launches, a plan
# the same as the one before it not timed again. Carry
# build-ab/s49.tar.xz:
#   sh bench/probe/patched.sh bench/probe/mmismall.patch ms
#   tar cJf build-ab/s49.tar.xz build/carry build-ab/ms
set -u
tar xJf build-ab/s49.tar.xz || exit 3
. "$(dirname "$0")/call.sh"
carry_in || exit 3
nvidia-smi -L
for b in ${S49_BATCHES:-64 48}; do
    for s in llama-3-8b llama-3.2-1b qwen3-0.6b gemma-2-2b mistral-7b; do
        late "$s $b" && break 2
        spec16 "$s"
        line="$s $b:"
        prev=
        for q in 16 8 4; do
            export LOGOS_MMI_QSTAGES=$q
            n=q$q-$s-$b
            build-ab/ms/bin/logos-author decode_batch --batch "$b" "$work/$s.yaml" |
                build-ab/ms/bin/logos-fuse --numerics q8 >"$work/$n.plan"
            if [ -n "$prev" ] && cmp -s "$work/$n.plan" "$work/$prev.plan"; then
                line="$line  q$q as before"
                continue
            fi
            step "$n" build-ab/ms/bin "$work/$s.yaml" "$b"
            line="$line  q$q $(step_ms "$n") ($(grep -c '^launch mmi' "$work/$n.plan") mmi)"
            prev=$n
        done
        unset LOGOS_MMI_QSTAGES
        echo "$line"
    done
done
keep
