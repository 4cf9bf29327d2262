#!/usr/bin/env python3
"""bench.py — encode throughput of logos-tok against Hugging Face
`tokenizers`, side by side in one run, both held to one core (taskset -c 0,
RAYON_NUM_THREADS=1): the same tokenizer.json (families.py), the same texts
(corpus.py, N of them, -z records). tokenizers is timed in-process over
encode_batch (its load not counted); logos-tok as a whole process (its load
counted), and its load alone (an empty input) is printed too. A figure, not
a test: nothing here fails on speed.

  bench.py BIN DIR N [FAMILY...]"""
import os
import subprocess
import sys
import time

os.environ["RAYON_NUM_THREADS"] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"
os.sched_setaffinity(0, {0})

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus      # noqa: E402
import families    # noqa: E402


def best(f, runs=3):
    t = []
    for _ in range(runs):
        t0 = time.perf_counter()
        r = f()
        t.append(time.perf_counter() - t0)
    return min(t), r


def main(argv):
    bin_dir, out, n = argv[0], argv[1], int(argv[2])
    fams = argv[3:] or families.FAMILIES
    texts, train = corpus.tests(n), corpus.training()
    data = b"".join(t.encode() + b"\0" for t in texts)
    mb = len(data) / 1e6
    exe = [os.path.join(bin_dir, "logos-tok"), "encode", "-z"]
    print("%d texts, %.2f MB, one core; best of 3" % (len(texts), mb))
    print("%-11s %10s %12s %12s %12s %8s" % ("family", "tokens", "tokenizers", "logos-tok", "(its load)", "ratio"))
    for fam in fams:
        d = os.path.join(out, fam)
        os.makedirs(d, exist_ok=True)
        tok = families.build(fam, train)
        tok.save(os.path.join(d, "tokenizer.json"))
        tok.encode_special_tokens = True
        th, enc = best(lambda: tok.encode_batch(texts))
        tl, p = best(lambda: subprocess.run(["taskset", "-c", "0"] + exe + [d], input=data, capture_output=True))
        t0, _ = best(lambda: subprocess.run(["taskset", "-c", "0"] + exe + [d], input=b"", capture_output=True))
        ntok = sum(len(e.ids) for e in enc)
        same = p.stdout.decode().split("\n")[:-1] == [" ".join(map(str, e.ids)) for e in enc]
        print("%-11s %10d %9.2f MB/s %9.2f MB/s %10.3f s %7.2fx%s" % (fam, ntok, mb / th, mb / tl, t0, th / tl,
                                                                   "" if same else "  (ids differ!)"))
        sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
