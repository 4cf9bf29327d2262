#!/usr/bin/env python3
"""run.py — the conformance suite against Hugging Face transformers.

    python3 tests/oracle/run.py --bin build/bin [--families a,b] [--formats f32,q8] [--no-gguf] [--keep DIR]

For each family (families.py) it builds a small random model with
transformers' own classes, saves it as safetensors, imports it with
logos-import (--format f32 and q8), generates 16 tokens with
logos-author | logos-fuse | logos-run on the CPU reference, and compares
every step's logits with transformers' forward (f32, eager attention) over the
prompt and LOGOS's own tokens (teacher-forced, so one divergence does not
cascade). For q8 the reference runs the weights read back from the imported
files (q x f16 scale). A GGUF written by to_gguf.py from the llama model must
give the logits of its safetensors twin imported as q8.

PASS: max |a-b| / max|b| below 1e-4 on every step (1e-5 for the GGUF twin)
and every greedy token equal to transformers' argmax. Exits 1 on any FAIL,
0 with a "skipped" line when torch or transformers is missing, 2 on usage."""

import argparse
import copy
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
os.environ.setdefault("HF_HUB_OFFLINE", "1")   # models are built here, never downloaded
sys.path.insert(0, HERE)

PROMPT_LEN, NGEN, CTX = 6, 16, 64
BOUND, GGUF_BOUND = 1e-4, 1e-5


class Fail(Exception):
    pass


def sh(cmd, **kw):
    """Runs a command; its (rc, stdout, stderr)."""
    p = subprocess.run(cmd, capture_output=True, timeout=300, **kw)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


def last_line(err):
    lines = [l for l in err.strip().splitlines() if l.strip()]
    return lines[-1] if lines else "(no message)"


# ---- the model ----

def build(fam, seed, hf_dir):
    """Builds, initialises and saves family `fam`; returns the f32 reference
    model holding exactly the saved values."""
    import torch
    import transformers
    import families
    make, _, opt = families.FAMILIES[fam]
    cname, mname, kw = make()
    if not hasattr(transformers, cname) or not hasattr(transformers, mname):
        raise Fail(f"transformers {transformers.__version__} has no {cname}/{mname}")
    torch.manual_seed(seed)
    config = getattr(transformers, cname)(**kw)
    model = getattr(transformers, mname)._from_config(config, attn_implementation="eager", dtype=torch.float32)
    offset, plain = opt.get("offset", False), opt.get("plain_norms", ())
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() >= 2:
                p.normal_(0, 0.08)
            elif "norm" in name:
                p.normal_(0 if offset and not any(n in name for n in plain) else 1, 0.1)
            elif name.endswith("sinks"):
                p.normal_(0, 0.5)
            else:
                p.normal_(0, 0.1)
    saved = model
    dtype = opt.get("dtype", "float32")
    if dtype != "float32":
        # the reference holds the checkpoint's values; its buffers (rotary
        # frequencies) stay f32, as from_pretrained(dtype=float32) gives them
        with torch.no_grad():
            for p in model.parameters():
                p.copy_(p.to(getattr(torch, dtype)).float())
        saved = copy.deepcopy(model).to(getattr(torch, dtype))
    try:
        saved.save_pretrained(hf_dir, safe_serialization=True)
    except TypeError:
        saved.save_pretrained(hf_dir)
    if "post_save" in opt:
        opt["post_save"](os.path.join(hf_dir, "config.json"))
    return model.eval()


def reference(model, prompt, toks):
    """transformers' logits at each position that predicts a generated token,
    over the prompt and LOGOS's tokens: [NGEN, vocab] numpy."""
    import torch
    seq = torch.tensor([prompt + toks[:-1]], dtype=torch.long)
    with torch.no_grad():
        out = model(input_ids=seq, use_cache=False).logits[0].float()
    return out[len(prompt) - 1:].numpy()


# ---- LOGOS's files ----

def read_weight(out, name):
    """The values of LOGOS weight `name` in `out` as a flat f32 array, and 'f32' or 'q8'."""
    import numpy as np
    f = os.path.join(out, name + ".f")
    if os.path.exists(f):
        return np.fromfile(f, dtype="<f4"), "f32"
    q = np.fromfile(os.path.join(out, name + ".q"), dtype=np.int8).reshape(-1, 32)
    s = np.fromfile(os.path.join(out, name + ".s"), dtype="<f2").astype(np.float32)
    if s.size != q.shape[0]:
        raise Fail(f"{name}.s has {s.size} scales for {q.shape[0]} blocks")
    return (q.astype(np.float32) * s[:, None]).reshape(-1), "q8"


def manifest(bin_, spec):
    rc, so, se = sh([os.path.join(bin_, "logos-author"), "--manifest", "generate", spec])
    if rc:
        raise Fail("logos-author --manifest: " + last_line(se))
    return {l.split()[0] for l in so.decode().splitlines() if l.strip()}


def check_weights(fam, model, out, names, fmt):
    """Every manifest weight must come from the oracle's map, every mapped
    parameter must be in the manifest, and the files must hold the values: f32
    exactly, q8 within a quantization step. Returns the map."""
    import numpy as np
    import families
    wmap = families.weight_map(fam, model.config)
    mine = {m[0] for m in wmap}
    if names - mine:
        raise Fail("weights with no HF source in the oracle's map: " + " ".join(sorted(names - mine)))
    if mine - names:
        raise Fail("HF parameters the import left out: " + " ".join(sorted(mine - names)))
    params = dict(model.named_parameters(remove_duplicate=False))
    for lname, hname, kind in wmap:
        want = families.to_logos(params[hname].detach(), kind).contiguous().numpy().reshape(-1)
        got, how = read_weight(out, lname)
        if got.size != want.size:
            raise Fail(f"{lname}: {got.size} values, {hname} has {want.size}")
        err = float(np.abs(got - want).max())
        if how == "f32" and err != 0:
            raise Fail(f"{lname}.f differs from {hname} (max |diff| {err:.3g})")
        if how == "q8":   # logos-weights(5): |x - q s| <= d/2 + |q| |d - s|, |d - s| <= d 2^-11
            d = np.abs(want.reshape(-1, 32)).max(axis=1) / 127
            e = np.abs(got - want).reshape(-1, 32).max(axis=1)
            if (e > d * (0.5 + 127 * 2.0 ** -11) + 2.0 ** -24).any():
                raise Fail(f"{lname}.q/.s are not {hname} quantized (max |diff| {err:.3g})")
    return wmap


def dequantized(model, out, wmap):
    """A copy of the model holding the values of out's files."""
    import torch
    import families
    m = copy.deepcopy(model)
    params = dict(m.named_parameters(remove_duplicate=False))
    with torch.no_grad():
        for lname, hname, kind in wmap:
            families.assign(params[hname], kind, torch.from_numpy(read_weight(out, lname)[0]))
    return m


DEVICE = "cpu"   # --device: cpu runs the programs on the reference; cuda fuses them (precise) for the GPU lane


def logos(bin_, out, prompt, tag):
    """Runs the imported model: (tokens, logits [NGEN, vocab])."""
    import numpy as np
    spec, lg = os.path.join(out, "spec.yaml"), os.path.join(out, f"logits-{tag}.f32")
    tool = lambda t: os.path.join(bin_, t)
    a = subprocess.Popen([tool("logos-author"), "generate", spec], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    fuse = [tool("logos-fuse"), "-q", "--lane", "cuda", "--numerics", "precise"] if DEVICE == "cuda" else ["cat"]
    f = subprocess.Popen(fuse, stdin=a.stdout, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    a.stdout.close()
    r = subprocess.run([tool("logos-run"), "-q", "--device", DEVICE, "--weights", out, "-p", " ".join(map(str, prompt)),
                        "-n", str(NGEN), "--logits", lg], stdin=f.stdout, capture_output=True, timeout=300)
    f.stdout.close()
    for p, name in ((a, "logos-author"), (f, "logos-fuse")):
        if p.wait(timeout=300):
            raise Fail(f"{name}: " + last_line(p.stderr.read().decode(errors="replace")))
    if r.returncode:
        raise Fail("logos-run: " + last_line(r.stderr.decode(errors="replace")))
    toks = [int(x) for x in r.stdout.split()]
    if len(toks) != NGEN:
        raise Fail(f"logos-run printed {len(toks)} tokens, not {NGEN}")
    rows = np.fromfile(lg, dtype="<f4")
    if rows.size % NGEN:
        raise Fail(f"{lg}: {rows.size} values are not {NGEN} rows")
    return toks, rows.reshape(NGEN, -1)


def compare(got, want, toks):
    """(max relative error over the steps, tokens equal to the reference's argmax)."""
    import numpy as np
    if got.shape != want.shape:
        raise Fail(f"logits are {got.shape[1]} wide, transformers' {want.shape[1]}")
    rel = np.abs(got - want).max(axis=1) / np.abs(want).max(axis=1)
    same = [int(t) == int(w) for t, w in zip(toks, want.argmax(axis=1))]
    return float(rel.max()), sum(same), verdict(rel, same)


def verdict(rel, same, bound=BOUND):
    """A note naming the first step that breaks a bound ("" when none does)."""
    bad = [k for k, r in enumerate(rel) if not r < bound]
    miss = [k for k, s in enumerate(same) if not s]
    note = f"step {bad[0] + 1} first off (rel {rel[bad[0]]:.2g})" if bad else ""
    if miss:
        note += ("; " if note else "") + f"token {miss[0] + 1} first differs"
    return note


# ---- one row of the table ----

def run_one(args, work, fam, fmt, model, prompt, twins):
    out = os.path.join(work, f"{fam}-{fmt}")
    src = os.path.join(work, f"{fam}-hf")
    cmd = [os.path.join(args.bin, "logos-import"), "--format", fmt, "--ctx", str(CTX), "-o", out, src]
    rc, _, se = sh(cmd)
    if rc:
        raise Fail(f"logos-import exited {rc}: " + last_line(se))
    wmap = check_weights(fam, model, out, manifest(args.bin, os.path.join(out, "spec.yaml")), fmt)
    ref = model if fmt == "f32" else dequantized(model, out, wmap)
    toks, got = logos(args.bin, out, prompt, fmt)
    twins[(fam, fmt)] = (toks, got)
    rel, same, note = compare(got, reference(ref, prompt, toks), toks)
    return rel, same, rel < BOUND and same == NGEN, note


def run_gguf(args, work, model, prompt, twins, rewrite):
    """The llama model as a GGUF against its safetensors twin imported as q8."""
    import to_gguf
    path = os.path.join(work, "llama.gguf")
    if not os.path.exists(path):
        to_gguf.model_gguf(model, path)
    tag = "gguf-rewrite" if rewrite else "gguf"
    out = os.path.join(work, f"llama-{tag}")
    cmd = [os.path.join(args.bin, "logos-import"), "--format", "q8", "--ctx", str(CTX)]
    cmd += ["--rewrite-rope"] if rewrite else []
    rc, _, se = sh(cmd + ["-o", out, path])
    if rc:
        raise Fail(f"logos-import exited {rc}: " + last_line(se))
    if ("llama", "q8") not in twins:
        raise Fail("needs the llama q8 row (its safetensors twin), which did not run")
    toks, got = logos(args.bin, out, prompt, tag)
    ttoks, tgot = twins[("llama", "q8")]
    import numpy as np
    if got.shape != tgot.shape:
        raise Fail(f"logits are {got.shape[1]} wide, the twin's {tgot.shape[1]}")
    rels = np.abs(got - tgot).max(axis=1) / np.abs(tgot).max(axis=1)
    same = [a == b for a, b in zip(toks, ttoks)]
    note = verdict(rels, same, GGUF_BOUND)
    rel = float(rels.max())
    return rel, sum(same), rel < GGUF_BOUND and all(same), "vs llama q8" + (": " + note if note else "")


def main():
    import families
    ap = argparse.ArgumentParser(description="LOGOS against Hugging Face transformers")
    ap.add_argument("--bin", default="build/bin", help="the folder of the logos-* tools")
    ap.add_argument("--families", default=",".join(families.DEFAULT),
                    help="comma-separated, from: " + ",".join(families.FAMILIES))
    ap.add_argument("--formats", default="f32,q8")
    ap.add_argument("--no-gguf", action="store_true", help="leave out the GGUF check")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"),
                    help="cpu: the CPU reference; cuda: the programs fused (precise numerics) for the CUDA lane")
    ap.add_argument("--keep", metavar="DIR", help="keep the checkpoints and imports in DIR")
    args = ap.parse_args()
    global DEVICE
    DEVICE = args.device
    fams = [f for f in args.families.split(",") if f]
    fmts = [f for f in args.formats.split(",") if f]
    bad = [f for f in fams if f not in families.FAMILIES] + [f for f in fmts if f not in ("f32", "q8")]
    if bad:
        ap.error("unknown family or format: " + ", ".join(bad))
    try:
        import numpy  # noqa: F401
        import torch
        import transformers
    except ImportError as e:
        print(f"oracle: skipped: no torch/transformers ({e})")
        return 0
    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    torch.set_num_threads(min(8, os.cpu_count() or 1))
    args.bin = os.path.abspath(args.bin)
    if not os.access(os.path.join(args.bin, "logos-import"), os.X_OK):
        print(f"oracle: note: {args.bin}/logos-import is missing: every row fails", file=sys.stderr)
    work = args.keep or tempfile.mkdtemp(prefix="logos-oracle-")
    os.makedirs(work, exist_ok=True)
    print(f"oracle: torch {torch.__version__}, transformers {transformers.__version__}, work in {work}")
    g = torch.Generator().manual_seed(args.seed)
    prompt = torch.randint(0, families.VOCAB, (PROMPT_LEN,), generator=g).tolist()
    rows, twins, t0 = [], {}, time.time()

    def row(fam, fmt, fn):
        try:
            rel, same, ok, note = fn()
        except Fail as e:
            rel, same, ok, note = None, None, False, str(e)
        except Exception as e:  # a broken oracle is a failure too: it is never skipped
            rel, same, ok, note = None, None, False, f"{type(e).__name__}: {e}"
        rows.append((fam, fmt, rel, same, ok, note))
        print(f"  {fam:<16} {fmt:<13} {'PASS' if ok else 'FAIL'}  {note}", file=sys.stderr, flush=True)

    llama = None
    for fam in fams:
        try:
            model = build(fam, args.seed, os.path.join(work, f"{fam}-hf"))
        except Exception as e:
            for fmt in fmts:
                row(fam, fmt, lambda e=e: (_ for _ in ()).throw(Fail(f"building the HF model: {e}")))
            continue
        llama = model if fam == "llama" else llama
        for fmt in fmts:
            row(fam, fmt, lambda: run_one(args, work, fam, fmt, model, prompt, twins))
    if not args.no_gguf and "llama" in fams and "q8" in fmts and llama is not None:
        for rewrite in (False, True):
            row("llama", "gguf-rewrite" if rewrite else "gguf",
                lambda: run_gguf(args, work, llama, prompt, twins, rewrite))

    print(f"{'family':<16} {'format':<13} {'max rel err':>11} {'tokens':>7}  result")
    for fam, fmt, rel, same, ok, note in rows:
        r = f"{rel:11.2e}" if rel is not None else f"{'-':>11}"
        s = f"{same}/{NGEN}" if same is not None else "-"
        print(f"{fam:<16} {fmt:<13} {r} {s:>7}  {'PASS' if ok else 'FAIL'}" + (f"  {note}" if note else ""))
    nfail = sum(not r[4] for r in rows)
    print(f"oracle: {len(rows) - nfail} passed, {nfail} failed ({time.time() - t0:.0f}s; bounds: "
          f"rel < {BOUND:g} every step, gguf rel < {GGUF_BOUND:g}, all tokens equal)")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
