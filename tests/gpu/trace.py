#!/usr/bin/env python3
"""trace.py — two LOGOS_TRACE folders (logos-run(1), lib/trace.c) held
against each other statement by statement: the CUDA lane's (GOT) against
the CPU reference's (REF, whose `order` file says the statements' order).
Each value the lane wrote is compared over the rows both hold (the lane's
buffer is as long as the plan's bound on rows) by relative error
||a - b|| / ||b||; each run's states after it the same way.

    trace.py GOT REF [BOUND]    one line a value past BOUND (default 1e-4),
                                the first ten, then a count; exit 1 if any
"""
import os
import sys

import numpy as np


def load(path, dtype):
    return np.fromfile(path, dtype=dtype)


def relerr(a, b):
    n = min(a.size, b.size)
    a = a[:n].astype(np.float64)
    b = b[:n].astype(np.float64)
    if not np.isfinite(a).all():
        return float("inf"), n
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30)), n


def main():
    got, ref = sys.argv[1], sys.argv[2]
    bound = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-4
    seen, bad, shown = 0, 0, 0
    order = [line.split() for line in open(os.path.join(ref, "order"))]
    states = sorted({(r, p) for r, p, _, _ in order})
    for run, prog in states:   # the states after each run, in the order file's place
        for f in sorted(os.listdir(ref)):
            parts = f.split(".", 2)
            if len(parts) == 3 and (parts[0], parts[1]) == (run, prog) and not any(
                    o[2] == parts[2] for o in order if (o[0], o[1]) == (run, prog)):
                order.append([run, prog, parts[2], "f32"])
    order.sort(key=lambda o: int(o[0]))   # stable: statements, then states, run by run
    for run, prog, name, ty in order:
        f = f"{run}.{prog}.{name}"
        g = os.path.join(got, f)
        if not os.path.exists(g):
            continue
        dt = np.int32 if ty == "i32" else np.float32
        a, b = load(g, dt), load(os.path.join(ref, f), dt)
        if ty == "i32":
            n = min(a.size, b.size)
            err, n = (0.0 if (a[:n] == b[:n]).all() else float("inf")), n
        else:
            err, n = relerr(a, b)
        seen += 1
        if err > bound:
            bad += 1
            if shown < 10:
                print(f"run {run} program {prog} {name:12s} {n:8d} values  rel err {err:.2e}")
                shown += 1
    print(f"trace: {seen} values compared, {bad} past {bound:g}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
