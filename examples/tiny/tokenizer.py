#!/usr/bin/env python3
"""tokenizer.py — writes examples/tiny/tokenizer.json: a tokenizer that fits
the tiny models (vocab 256), so that the demo's prompt is text and its
generated ids read as text. It is built with Hugging Face `tokenizers`: a
SentencePiece-style BPE (Mistral's legacy configuration: a ▁ before the
text, spaces as ▁, <unk> <s> </s>, <s> before each text) trained on the
English below until it holds exactly 256 pieces. Run it again only to
change the tokenizer; the demo reads the committed file.

  python3 examples/tiny/tokenizer.py [OUT]"""
import os
import sys

from tokenizers import Tokenizer, decoders, models, normalizers, processors, trainers

TEXT = """The capital of France is Paris. The capital of Italy is Rome.
A language model reads a prompt and writes the next word, then the next.
Small filters in a pipeline: each reads its input and writes its output.
The quick brown fox jumps over the lazy dog while the cat sleeps.
Tokens are pieces of text; a tokenizer turns text into ids and back again.
We test every tool with the examples of its manual, and the tests pass.
In the morning there is coffee, and in the evening there is tea.
Numbers like 1, 2, 3, 10, 42 and 2026 are written with digits."""


def main(argv):
    out = argv[0] if argv else os.path.join(os.path.dirname(os.path.abspath(__file__)), "tokenizer.json")
    tok = Tokenizer(models.BPE(unk_token="<unk>", fuse_unk=True))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    trainer = trainers.BpeTrainer(vocab_size=256, special_tokens=["<unk>", "<s>", "</s>"], show_progress=False)
    tok.train_from_iterator([line for line in TEXT.split("\n")] * 4, trainer)
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
    assert tok.get_vocab_size() == 256, tok.get_vocab_size()
    tok.save(out)


if __name__ == "__main__":
    main(sys.argv[1:])
