#!/usr/bin/env python3
"""conform.py — logos-tok against Hugging Face `tokenizers`, family by
family: the tokenizers of families.py, the texts of corpus.py; every text
encoded three ways (special tokens as text, --special, --bare) and every
id sequence decoded two ways (special tokens skipped, --special), plus
random id sequences, must give exactly the ids and the text `tokenizers`
gives; texts that are not UTF-8 (which `tokenizers` cannot take) must be
refused with a message naming the byte. Then each family's GGUF twin (the
tokenizer.ggml.* keys llama.cpp's converter writes) against a `tokenizers`
tokenizer built from the same keys the way llama.cpp reads them.

  conform.py BIN DIR N [FAMILY...]   BIN holds logos-tok; DIR is scratch;
                                      N texts. Prints TAP lines (ok / not ok)."""
import os
import random
import struct
import subprocess
import sys

from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus      # noqa: E402
import families    # noqa: E402
from fixture import kv, kv_arr  # noqa: E402  (the GGUF key writers the bad-input fixtures use)

SHOWN = 3   # mismatches shown per check


def tool(bin_dir, args, data):
    p = subprocess.run([os.path.join(bin_dir, "logos-tok")] + args, input=data, capture_output=True)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


def report(name, total, bad, notes):
    print("%s - %s: %d checked, %d mismatches" % ("ok" if not bad and total else "not ok", name, total, bad))
    for n in notes[:SHOWN]:
        print("#   " + n)
    sys.stdout.flush()
    return bad


def encode_check(bin_dir, d, tok, texts, name, flags):
    """Every text through `logos-tok encode -z FLAGS` against tok.encode."""
    data = b"".join(t.encode() + b"\0" for t in texts)
    rc, out, err = tool(bin_dir, ["encode", "-z"] + flags + [d], data)
    if rc:
        return report(name, 0, 1, ["exit %d: %s" % (rc, err.strip())])
    got = out.decode().split("\n")[:-1]
    tok.encode_special_tokens = "--special" not in flags
    want = [e.ids for e in tok.encode_batch(texts, add_special_tokens="--bare" not in flags)]
    tok.encode_special_tokens = False
    bad, notes = 0, []
    for i, t in enumerate(texts):
        ids = [int(x) for x in got[i].split()] if i < len(got) else None
        if ids != want[i]:
            bad += 1
            notes.append("%r: logos-tok %s, tokenizers %s" % (t, ids, want[i]))
    return report(name, len(texts), bad + (len(got) != len(texts)), notes)


def decode_check(bin_dir, d, tok, seqs, name, special):
    data = "".join(" ".join(map(str, s)) + "\n" for s in seqs).encode()
    rc, out, err = tool(bin_dir, ["decode", "-z"] + (["--special"] if special else []) + [d], data)
    if rc:
        return report(name, 0, 1, ["exit %d: %s" % (rc, err.strip())])
    got = out.split(b"\0")[:-1]
    want = tok.decode_batch(seqs, skip_special_tokens=not special)
    bad, notes = 0, []
    for i, s in enumerate(seqs):
        g = got[i].decode(errors="surrogateescape") if i < len(got) else None
        if g != want[i]:
            bad += 1
            notes.append("%s: logos-tok %r, tokenizers %r" % (s, g, want[i]))
    return report(name, len(seqs), bad + (len(got) != len(seqs)), notes)


def random_ids(tok, r, n):
    """Sequences of random ids, leaving out those whose text holds a NUL
    (the -z output's separator)."""
    vocab = tok.get_vocab(with_added_tokens=True)
    ids = [i for p, i in vocab.items() if "\0" not in tok.decode([i], skip_special_tokens=False)]
    return [[r.choice(ids) for _ in range(r.randint(1, 24))] for _ in range(n)]


def invalid_check(bin_dir, d, name):
    bad, notes, n = 0, [], 0
    for h in corpus.INVALID:
        raw = bytes.fromhex(h)
        try:
            raw.decode("utf-8")
            notes.append("%s is UTF-8 after all" % h)
            bad += 1
            continue
        except UnicodeDecodeError as e:
            pos = e.start
        line = raw[:pos].count(b"\n") + 1
        col = pos - (raw[:pos].rfind(b"\n") + 1) + 1
        want = "logos-tok: <stdin>:%d:%d: invalid UTF-8 (byte 0x%02X): the text must be UTF-8" % (line, col, raw[pos])
        rc, out, err = tool(bin_dir, ["encode", d], raw)
        n += 1
        if rc != 1 or err.strip() != want or out:
            bad += 1
            notes.append("%s: exit %d, %r (want %r)" % (h, rc, err.strip(), want))
    return report(name, n, bad, notes)


# ---- GGUF twins ----

GGUF_PRE = {"llama3": "llama-bpe", "qwen2": "qwen2", "gptoss": "gpt-4o", "deepseek": "deepseek-v3"}
GGUF_SP = ["mistral", "gemma2"]


def write_gguf(fam, tok, path):
    """The keys llama.cpp's converter writes for this tokenizer, alone."""
    vocab = tok.get_vocab(with_added_tokens=True)
    pieces = [p for p, _ in sorted(vocab.items(), key=lambda kv: kv[1])]
    added = {a.content: a for a in tok.get_added_tokens_decoder().values()}
    types = [3 if p in added and added[p].special else 4 if p in added else
             6 if fam in GGUF_SP and len(p) == 6 and p.startswith("<0x") else 1 for p in pieces]
    bos = families.BOS.get(fam)
    keys = [kv("general.architecture", "str", "llama"),
            kv("tokenizer.ggml.model", "str", "llama" if fam in GGUF_SP else "gpt2"),
            kv_arr("tokenizer.ggml.tokens", "str", pieces), kv_arr("tokenizer.ggml.token_type", "i32", types),
            kv("tokenizer.ggml.add_bos_token", "bool", bool(bos))]
    if bos:
        keys.append(kv("tokenizer.ggml.bos_token_id", "u32", vocab[bos]))
    if fam in GGUF_SP:
        keys.append(kv_arr("tokenizer.ggml.scores", "f32", [0.0 if t != 1 else -float(i) for i, t in enumerate(types)]))
        keys.append(kv("tokenizer.ggml.unknown_token_id", "u32", vocab["<unk>"]))
        keys.append(kv("tokenizer.ggml.add_space_prefix", "bool", fam != "gemma2"))
    else:
        import json
        merges = json.loads(tok.to_str())["model"]["merges"]
        keys.append(kv("tokenizer.ggml.pre", "str", GGUF_PRE[fam]))
        keys.append(kv_arr("tokenizer.ggml.merges", "str", [m if isinstance(m, str) else " ".join(m) for m in merges]))
    with open(path, "wb") as f:
        f.write(b"GGUF" + struct.pack("<IQQ", 3, 0, len(keys)) + b"".join(keys))
    return pieces, types


def score_merges(pieces, types):
    """Merges in the order of the merged piece's score, each piece's splits
    ordered by their ids: what transformers derives from a SentencePiece
    model, and what merging by score amounts to."""
    vocab = {p: i for i, p in enumerate(pieces)}
    out = []
    for i, p in enumerate(pieces):
        if types[i] != 1:
            continue
        local = [(p[:k], p[k:]) for k in range(1, len(p)) if p[:k] in vocab and p[k:] in vocab]
        out += sorted(local, key=lambda lr: (vocab[lr[0]], vocab[lr[1]]))
    return vocab, out   # scores are -id: already in order


def gguf_oracle(fam, tok, pieces, types):
    """A `tokenizers` tokenizer doing what llama.cpp does with the keys."""
    import json
    if fam in GGUF_SP:
        vocab, merges = score_merges(pieces, types)
        o = Tokenizer(models.BPE(vocab=vocab, merges=merges, byte_fallback=True, unk_token="<unk>"))
        steps = [normalizers.Prepend("▁")] if fam != "gemma2" else []
        o.normalizer = normalizers.Sequence(steps + [normalizers.Replace(" ", "▁")])
        dec = [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()]
        o.decoder = decoders.Sequence(dec + ([decoders.Strip(" ", 1, 0)] if fam != "gemma2" else []))
    else:
        m = json.loads(tok.to_str())["model"]
        merges = [tuple(x.split(" ")) if isinstance(x, str) else tuple(x) for x in m["merges"]]
        o = Tokenizer(models.BPE(vocab=m["vocab"], merges=merges, ignore_merges=fam == "llama3"))
        o.pre_tokenizer = families.byte_pre(fam)
        o.decoder = decoders.ByteLevel()
    o.add_special_tokens([AddedToken(p, special=True, normalized=False) for i, p in enumerate(pieces) if types[i] == 3])
    o.add_tokens([AddedToken(p, special=False, normalized=False) for i, p in enumerate(pieces) if types[i] == 4])
    bos = families.BOS.get(fam)
    if bos:
        o.post_processor = processors.TemplateProcessing(single=bos + " $A", special_tokens=[(bos, pieces.index(bos))])
    return o


def family(bin_dir, out, fam, texts, train):
    d = os.path.join(out, fam)
    os.makedirs(d, exist_ok=True)
    tok = families.build(fam, train)
    tok.save(os.path.join(d, "tokenizer.json"))
    bad = 0
    for flags in ([], ["--special"], ["--bare"]):
        bad += encode_check(bin_dir, d, tok, texts, "tok %s encode %s" % (fam, " ".join(flags) or "(default)"), flags)
    tok.encode_special_tokens = True
    seqs = [e.ids for e in tok.encode_batch(texts)]
    tok.encode_special_tokens = False
    seqs += [e.ids for e in tok.encode_batch(texts)]
    seqs += random_ids(tok, random.Random(5), 2000)
    for special in (False, True):
        bad += decode_check(bin_dir, d, tok, seqs, "tok %s decode%s" % (fam, " --special" if special else ""), special)
    bad += invalid_check(bin_dir, d, "tok %s refuses text that is not UTF-8" % fam)
    if fam in GGUF_PRE or fam in GGUF_SP:
        g = os.path.join(out, fam + ".gguf")
        pieces, types = write_gguf(fam, tok, g)
        oracle = gguf_oracle(fam, tok, pieces, types)
        for flags in ([], ["--special"]):
            bad += encode_check(bin_dir, g, oracle, texts, "tok %s gguf encode %s" % (fam, " ".join(flags) or
                                                                                    "(default)"), flags)
        bad += decode_check(bin_dir, g, oracle, seqs[:len(texts)] + random_ids(oracle, random.Random(6), 1000),
                            "tok %s gguf decode" % fam, False)
    return bad


def main(argv):
    bin_dir, out, n = argv[0], argv[1], int(argv[2])
    fams = argv[3:] or families.FAMILIES
    texts, train = corpus.tests(n), corpus.training()
    bad = sum(family(bin_dir, out, f, texts, train) for f in fams)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main(sys.argv[1:])
