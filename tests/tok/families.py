#!/usr/bin/env python3
"""families.py — tokenizers of every family's kind, built with Hugging Face
`tokenizers` itself: a BPE trained on a generated corpus (corpus.py), then
put together with the family's normalizer, pre-tokenizer, post-processor,
decoder and added tokens as its published tokenizer.json has them.

  families.py DIR [FAMILY...]   writes DIR/FAMILY/tokenizer.json (every
                                family when none is named)

Byte-level BPE: llama3, qwen2, gptoss, deepseek, lfm2 (and gpt2: ByteLevel's
own regex and prefix space; splits: no family's, every Split behaviour, a
literal and an inverted pattern, NFKC and a regex Replace). SentencePiece-
style BPE with byte fallback: mistral (the legacy normalizer: Prepend and
Replace), mistral-ms (Metaspace, prepend_scheme "first", as converters
write it now), gemma2 (Replace only, no prefix) (and metaspace: no
family's, Metaspace splitting before each ▁, and its decoder). GGUF twins are written by gguf.py from these."""
import json
import os
import sys

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

import corpus

LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
          r"\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
         r"\s*[\r\n]+|\s+(?!\S)|\s+")
O200K = (r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
         r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
         r"\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")
DEEPSEEK = [r"\p{N}{1,3}", "[一-龥\u3040-ゟ゠-ヿ]+",
            r"[!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|"
            r"\s*[\r\n]+|\s+(?!\S)|\s+"]

BYTELEVEL = ["llama3", "qwen2", "gptoss", "deepseek", "lfm2", "gpt2", "splits"]
SENTENCEPIECE = ["mistral", "mistral-ms", "gemma2", "metaspace"]
FAMILIES = BYTELEVEL + SENTENCEPIECE

# each family's special tokens (the first is its BOS where it has one), and
# added tokens that are not special
SPECIALS = {
    "llama3": ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"],
    "qwen2": ["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
    "gptoss": ["<|startoftext|>", "<|endoftext|>", "<|start|>", "<|message|>", "<|end|>", "<|return|>",
               "<|channel|>"],
    "deepseek": ["<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"],
    "lfm2": ["<|startoftext|>", "<|im_start|>", "<|im_end|>"],
    "gpt2": ["<|endoftext|>"],
    "mistral": ["<unk>", "<s>", "</s>", "[INST]", "[/INST]"],
    "mistral-ms": ["<unk>", "<s>", "</s>"],
    "gemma2": ["<pad>", "<eos>", "<bos>", "<unk>", "<start_of_turn>", "<end_of_turn>"],
    "splits": ["<|endoftext|>"],
    "metaspace": ["<unk>", "<s>", "</s>"],
}
PLAIN = {"qwen2": ["<think>", "</think>"], "deepseek": ["<tool▁call>"], "gemma2": ["<table>"]}
BOS = {"llama3": "<|begin_of_text|>", "deepseek": "<｜begin▁of▁sentence｜>", "lfm2": "<|startoftext|>",
       "mistral": "<s>", "mistral-ms": "<s>", "gemma2": "<bos>"}


def split(pattern):
    return pre_tokenizers.Split(Regex(pattern), behavior="isolated", invert=False)


def byte_pre(fam):
    if fam == "splits":   # not a family's: every behaviour of Split, a literal pattern, an inverted one
        return pre_tokenizers.Sequence([
            pre_tokenizers.Split(" ", behavior="merged_with_next"),
            pre_tokenizers.Split(Regex(r"\p{P}"), behavior="merged_with_previous"),
            pre_tokenizers.Split(Regex(r"\d"), behavior="contiguous"),
            pre_tokenizers.Split(Regex(r"[xq]"), behavior="removed"),
            pre_tokenizers.Split(Regex(r"\p{Han}+|\p{Arabic}+"), behavior="isolated", invert=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    if fam == "gpt2":
        return pre_tokenizers.ByteLevel(add_prefix_space=True, use_regex=True)
    regexes = {"llama3": [LLAMA3], "qwen2": [QWEN2], "gptoss": [O200K], "deepseek": DEEPSEEK, "lfm2": [LLAMA3]}[fam]
    return pre_tokenizers.Sequence([split(r) for r in regexes] +
                                   [pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])


def train(fam, texts, size):
    """A BPE of `size` pieces trained on texts with the family's splitting;
    its vocab and merges."""
    tok = Tokenizer(models.BPE())
    if fam in BYTELEVEL:
        tok.pre_tokenizer = byte_pre(fam)
        tr = trainers.BpeTrainer(vocab_size=size, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                 show_progress=False)
    else:   # SentencePiece's pieces: ▁ before words, whitespace runs kept
        tok.normalizer = normalizers.Replace(" ", "▁")
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
        tr = trainers.BpeTrainer(vocab_size=size, limit_alphabet=400, show_progress=False)
    tok.train_from_iterator(texts, tr)
    m = json.loads(tok.to_str())["model"]
    return m["vocab"], [tuple(x.split(" ")) if isinstance(x, str) else tuple(x) for x in m["merges"]]


def sp_vocab(fam, vocab):
    """SentencePiece's layout: special pieces, then the 256 byte pieces, then
    the trained ones."""
    head = SPECIALS[fam][:3] if fam != "gemma2" else SPECIALS[fam][:4]
    pieces = head + ["<0x%02X>" % b for b in range(256)]
    pieces += [p for p, _ in sorted(vocab.items(), key=lambda kv: kv[1]) if p not in pieces]
    return {p: i for i, p in enumerate(pieces)}


def template(fam, tok):
    bos = BOS.get(fam)
    if bos:
        tok.post_processor = processors.TemplateProcessing(single=bos + " $A", pair=bos + " $A " + bos + " $B",
                                                           special_tokens=[(bos, tok.token_to_id(bos))])
    elif fam in BYTELEVEL:
        tok.post_processor = processors.ByteLevel(trim_offsets=False)


def build(fam, texts, size=3000):
    vocab, merges = train(fam, texts, size)
    if fam in BYTELEVEL:
        tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, ignore_merges=fam == "llama3"))
        tok.pre_tokenizer = byte_pre(fam)
        tok.decoder = decoders.ByteLevel()
        if fam == "qwen2":
            tok.normalizer = normalizers.NFC()
        if fam == "splits":
            tok.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Replace(Regex(r"\d{5,}"), "#")])
    else:
        tok = Tokenizer(models.BPE(vocab=sp_vocab(fam, vocab), merges=merges, byte_fallback=True,
                                   unk_token="<unk>", fuse_unk=True))
        if fam == "mistral":
            tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
        elif fam == "mistral-ms":
            tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=False)
        elif fam == "metaspace":   # not a family's: Metaspace splitting, always prepending, and its decoder
            tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
        else:
            tok.normalizer = normalizers.Replace(" ", "▁")
        steps = [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()]
        if fam != "gemma2":
            steps.append(decoders.Strip(" ", 1, 0))
        tok.decoder = decoders.Sequence(steps)
        if fam == "metaspace":
            tok.decoder = decoders.Sequence([decoders.ByteFallback(), decoders.Metaspace(replacement="▁",
                                                                                        prepend_scheme="always")])
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in SPECIALS[fam]])
    tok.add_tokens([AddedToken(s, special=False, normalized=False) for s in PLAIN.get(fam, [])])
    if fam == "deepseek":   # tokens that take the spaces around them, and one that is a word alone
        tok.add_tokens([AddedToken("<mask>", special=False, lstrip=True, rstrip=True, normalized=False),
                        AddedToken("[SW]", special=False, single_word=True, normalized=False)])
    if fam == "qwen2":      # a token matched in the normalized text
        tok.add_tokens([AddedToken("e\u0301tude", special=False, normalized=True)])
    template(fam, tok)
    return tok


def main(argv):
    out, fams = argv[0], argv[1:] or FAMILIES
    texts = corpus.training()
    for fam in fams:
        os.makedirs(os.path.join(out, fam), exist_ok=True)
        build(fam, texts).save(os.path.join(out, fam, "tokenizer.json"))


if __name__ == "__main__":
    main(sys.argv[1:])
