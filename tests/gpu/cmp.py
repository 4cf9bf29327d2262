#!/usr/bin/env python3
"""cmp.py — two files of raw f32 logits (every step's, as logos-run
--logits writes them) compared step by step: the largest relative error
||a - b|| / ||b|| over the steps, and whether the greedy tokens agree
wherever the reference's top two logits differ by more than the bound.

    cmp.py VOCAB GOT REF BOUND [LENS N]    prints one line; exit 1 past the bound

For a batch (LENS: its sequences' prompt lengths, comma-separated; N: the
tokens each generates), a step writes a row for each sequence, and the
batch runs max(LENS) + N - 1 steps: a sequence of a shorter prompt runs
steps past the one that feeds its N-th token, fed tokens of its own that
teacher forcing (--follow) does not reach. Those rows are left out; the
line says how many were compared.
"""
import sys

import numpy as np


def main():
    vocab, got, ref, bound = int(sys.argv[1]), sys.argv[2], sys.argv[3], float(sys.argv[4])
    a = np.fromfile(got, dtype=np.float32)
    b = np.fromfile(ref, dtype=np.float32)
    if a.size != b.size or a.size % vocab or a.size == 0:
        print(f"sizes differ or are empty: {a.size} and {b.size} values (vocab {vocab})")
        return 1
    a = a.reshape(-1, vocab).astype(np.float64)
    b = b.reshape(-1, vocab).astype(np.float64)
    kept = ""
    if len(sys.argv) > 6:
        lens, n = [int(x) for x in sys.argv[5].split(",")], int(sys.argv[6])
        if len(a) % len(lens):
            print(f"{len(a)} rows are not whole steps of {len(lens)} sequences")
            return 1
        steps = np.arange(len(a)) // len(lens)
        fed = steps <= np.array(lens)[np.arange(len(a)) % len(lens)] + n - 1
        kept = f" ({int(fed.sum())} compared)"
        a, b = a[fed], b[fed]
    if not np.isfinite(a).all():
        print(f"not finite: {np.count_nonzero(~np.isfinite(a))} values")
        return 1
    err = np.linalg.norm(a - b, axis=1) / np.maximum(np.linalg.norm(b, axis=1), 1e-30)
    top2 = np.sort(b, axis=1)[:, -2:]
    clear = (top2[:, 1] - top2[:, 0]) > bound * np.abs(b).max(axis=1)
    same = (a.argmax(axis=1) == b.argmax(axis=1)) | ~clear
    ok = err.max() <= bound and same.all()
    print(f"{len(fed) if kept else len(err)} rows{kept}  max rel err {err.max():.2e}  (bound {bound:.0e})  greedy {int(same.sum())}/{len(same)}"
          f"  {'ok' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
