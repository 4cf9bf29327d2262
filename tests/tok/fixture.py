#!/usr/bin/env python3
"""fixture.py — tokenizers for logos-tok's bats tests, written with the
Python standard library alone (no `tokenizers`): variants of the tiny
SentencePiece-style tokenizer of examples/tiny, a byte-level one whose id is
its byte, and GGUF files of their tokenizer.ggml.* keys; each KIND
broken one way.

  fixture.py json KIND DIR     DIR/tokenizer.json
  fixture.py gguf KIND FILE    a GGUF holding only the tokenizer keys

json KINDs: tiny, bytes (a byte-level BPE of 256 pieces, id = byte, one
merge), and the broken ones in JSON_BREAKS. gguf KINDs: llama (tiny's
vocabulary, scores by id), gpt2 (bytes'), and the broken ones in
GGUF_BREAKS."""
import json
import os
import struct
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TINY = os.path.join(TOP, "examples", "tiny", "tokenizer.json")

JSON_BREAKS = ["notjson", "unigram", "vocab", "merge-piece", "merge-result", "twice", "normalizer", "pre",
               "regex", "decoder", "unk", "post", "added-id", "behavior", "strip", "bytelevel-mixed",
               "template"]
GGUF_BREAKS = ["truncated", "bert", "pre", "nomodel", "scores", "bos", "magic"]


def byte_chars():
    """GPT-2's byte to character map, byte by byte."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    k, out = 0, []
    for b in range(256):
        if b in bs:
            out.append(chr(b))
        else:
            out.append(chr(256 + k))
            k += 1
    return out


def bytes_tokenizer():
    chars = byte_chars()
    vocab = {c: b for b, c in enumerate(chars)}
    vocab[chars[ord("h")] + chars[ord("i")]] = 256
    return {"version": "1.0", "added_tokens": [{"id": 257, "content": "<|end|>", "single_word": False, "lstrip": False,
                                                 "rstrip": False, "normalized": False, "special": True}],
            "normalizer": None,
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
            "post_processor": None, "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                                                "use_regex": True},
            "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                      "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                      "vocab": vocab, "merges": [[chars[ord("h")], chars[ord("i")]]]}}


def broken(kind):
    t = json.load(open(TINY, encoding="utf-8"))
    m = t["model"]
    if kind == "unigram":
        t["model"] = {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0]]}
    elif kind == "vocab":
        m["vocab"] = ["a", "b"]
    elif kind == "merge-piece":
        m["merges"][3] = "▁q zz"
    elif kind == "merge-result":   # the piece of the first merge goes
        gone = "".join(m["merges"][0].split(" ") if isinstance(m["merges"][0], str) else m["merges"][0])
        m["vocab"] = {k: v for k, v in m["vocab"].items() if k != gone}
    elif kind == "twice":
        m["vocab"]["▁extra"] = 5
    elif kind == "normalizer":
        t["normalizer"] = {"type": "Lowercase"}
    elif kind == "pre":
        t["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [{"type": "Whitespace"}]}
    elif kind == "regex":
        t["pre_tokenizer"] = {"type": "Split", "pattern": {"Regex": "(\\p{L}+"}, "behavior": "Isolated",
                              "invert": False}
    elif kind == "behavior":
        t["pre_tokenizer"] = {"type": "Split", "pattern": {"String": " "}, "behavior": "Sideways", "invert": False}
    elif kind == "decoder":
        t["decoder"] = {"type": "WordPiece", "prefix": "##", "cleanup": True}
    elif kind == "strip":
        t["decoder"] = {"type": "Strip", "content": " ", "start": 0, "stop": 1}
    elif kind == "bytelevel-mixed":
        t["decoder"] = {"type": "Sequence", "decoders": [{"type": "ByteLevel"}, {"type": "Fuse"}]}
    elif kind == "unk":
        m["unk_token"] = "<missing>"
    elif kind == "post":
        t["post_processor"] = {"type": "BertProcessing", "sep": ["</s>", 2], "cls": ["<s>", 1]}
    elif kind == "template":
        t["post_processor"]["special_tokens"]["<s>"]["ids"] = [999]
    elif kind == "added-id":
        t["added_tokens"][1]["id"] = "one"
    else:
        sys.exit("unknown kind " + kind)
    return t


def write_json(kind, d):
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "tokenizer.json")
    if kind == "notjson":
        open(path, "w").write('{"model": {"type": "BPE",\n  "vocab": [1, 2,]}}\n')
        return
    t = json.load(open(TINY, encoding="utf-8")) if kind == "tiny" else bytes_tokenizer() if kind == "bytes" else \
        broken(kind)
    json.dump(t, open(path, "w", encoding="utf-8"), ensure_ascii=False, indent=1)


# ---- GGUF ----

def gstr(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def kv(key, typ, val):
    code = {"str": 8, "u32": 4, "bool": 7}[typ]
    body = gstr(val) if typ == "str" else struct.pack("<I" if typ == "u32" else "<?", val)
    return gstr(key) + struct.pack("<I", code) + body


def kv_arr(key, typ, vals):
    code, fmt = {"str": (8, None), "f32": (6, "<f"), "i32": (5, "<i")}[typ]
    body = b"".join(gstr(v) if fmt is None else struct.pack(fmt, v) for v in vals)
    return gstr(key) + struct.pack("<IIQ", 9, code, len(vals)) + body


def gguf_keys(kind):
    if kind in ("gpt2", "pre"):
        t = bytes_tokenizer()
        pieces = [p for p, _ in sorted(t["model"]["vocab"].items(), key=lambda kv: kv[1])] + ["<|end|>"]
        return [kv("tokenizer.ggml.model", "str", "gpt2"),
                kv("tokenizer.ggml.pre", "str", "mystery" if kind == "pre" else "gpt2"),
                kv_arr("tokenizer.ggml.tokens", "str", pieces),
                kv_arr("tokenizer.ggml.token_type", "i32", [1] * 257 + [3]),
                kv_arr("tokenizer.ggml.merges", "str", [" ".join(m) for m in t["model"]["merges"]])]
    t = json.load(open(TINY, encoding="utf-8"))
    pieces = [p for p, _ in sorted(t["model"]["vocab"].items(), key=lambda kv: kv[1])]
    types = [3 if p in ("<unk>", "<s>", "</s>") else 1 for p in pieces]
    keys = [kv("tokenizer.ggml.model", "str", "bert" if kind == "bert" else "llama"),
            kv_arr("tokenizer.ggml.tokens", "str", pieces), kv_arr("tokenizer.ggml.token_type", "i32", types),
            kv_arr("tokenizer.ggml.scores", "f32", [-float(i) for i in range(len(pieces) - (kind == "scores"))]),
            kv("tokenizer.ggml.bos_token_id", "u32", 300 if kind == "bos" else 1),
            kv("tokenizer.ggml.unknown_token_id", "u32", 0)]
    return keys[1:] if kind == "nomodel" else keys


def write_gguf(kind, path):
    keys = gguf_keys(kind)
    data = (b"GGUG" if kind == "magic" else b"GGUF") + struct.pack("<IQQ", 3, 0, len(keys)) + b"".join(keys)
    if kind == "truncated":   # cut inside the tokens' array
        data = data[:len(data) // 3]
    open(path, "wb").write(data)


def main(argv):
    if len(argv) == 3 and argv[0] == "json":
        write_json(argv[1], argv[2])
    elif len(argv) == 3 and argv[0] == "gguf":
        write_gguf(argv[1], argv[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
