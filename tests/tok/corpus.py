#!/usr/bin/env python3
"""corpus.py — the generated texts of the tokenizer tests, the same on every
run (seeded): lines mixing Latin, Greek, Cyrillic, CJK, Arabic, Devanagari
and Hangul words, emoji with skin tones, flags, keycaps and ZWJ sequences,
combining marks (composed and decomposed), numbers of every length, runs of
spaces, tabs and newlines and the other whitespace characters, punctuation
and contractions, the families' special tokens written as text, and random
codepoints of many blocks; and byte strings that are not UTF-8.

  corpus.py test N      N test texts, NUL-terminated, on stdout
  corpus.py invalid     the invalid byte strings, one per line, in hex"""
import random
import sys
import unicodedata

WORDS = {
    "latin": ["the", "capital", "of", "France", "is", "Paris", "don't", "I'M", "we'll", "THEY'RE", "café", "naïve",
              "Straße", "über", "façade", "jalapeño", "Œuvre", "smörgåsbord", "Ångström", "x", "OpenAI", "GPUs",
              "HTTPServer", "camelCase", "snake_case", "l'été", "ſ's", "K", "ﬁne", "Ǆemal"],
    "greek": ["Ελληνικά", "καλημέρα", "ΑΘΗΝΑ", "λόγος"],
    "cyrillic": ["Русский", "язык", "Москва", "ПРИВЕТ", "ёлка"],
    "cjk": ["中文", "北京", "東京", "日本語", "ひらがな", "カタカナ", "漢字", "你好世界", "한국어", "서울", "中华人民共和国"],
    "arabic": ["العربية", "مرحبا", "السلام عليكم", "القاهرة", "٣٤٥", "كتاب"],
    "devanagari": ["नमस्ते", "हिन्दी", "भारत", "संस्कृतम्", "क्षत्रिय", "१२३"],
    "emoji": ["😀", "👍", "👍🏽", "👨‍👩‍👧‍👦", "🏳️‍🌈", "🇫🇷", "🇯🇵", "1️⃣", "❤️", "🧑🏿‍💻", "🫠", "👩‍❤️‍💋‍👨", "🐈‍⬛", "™", "©️"],
    "combining": ["e\u0301", "e\u0301tude", "a\u0308\u0304", "n\u0303", "Z\u0351\u036b\u0343\u036a\u0302\u036b",
                  "o\u0302\u0323", "\u0301alone", "A\u030a", "\u1100\u1161\u11a8", "\u0915\u094d\u0937"],
    "punct": ["!", "?", "...", "—", "–", "«", "»", "“quoted”", "(x)", "[1]", "{a: b}", "#", "@user", "$9.99",
              "100%", "a/b", "C++", "->", "=>", "::", "//", "/*", "*/", "'", "\"", "''", "`x`", "¿", "¡", "§"],
    "special": ["<|im_start|>", "<|im_end|>", "<|begin_of_text|>", "<|eot_id|>", "<s>", "</s>", "[INST]",
                "<start_of_turn>", "<|endoftext|>", "<think>", "<mask>", " <mask> ", "[SW]", "a[SW]b", "<unk>",
                "<｜begin▁of▁sentence｜>", "<tool▁call>", "<table>", "<|start|>", "<|message|>", "<0x41>", "▁"],
}
SPACES = [" ", "  ", "   ", "    ", " " * 9, " " * 17, "\t", "\t\t", " \t ", "\n", "\n\n", "\n\n\n", "\r\n",
          "\r", " \n ", "\u00a0", "\u3000", "\u2028", "\u2029", "\u0085", "\u180e", "\u200b", "\x0b", "\x0c",
          "\u2009", "\u202f", "\x1c"]
BLOCKS = [(0x20, 0x7e), (0xa0, 0x24f), (0x300, 0x36f), (0x370, 0x3ff), (0x400, 0x4ff), (0x590, 0x6ff), (0x900, 0x97f),
          (0xe00, 0xe7f), (0x1100, 0x11ff), (0x1e00, 0x1eff), (0x2000, 0x206f), (0x20a0, 0x20cf), (0x2100, 0x214f),
          (0x2190, 0x22ff), (0x2500, 0x25ff), (0x3000, 0x30ff), (0x4e00, 0x9fff), (0xac00, 0xd7a3), (0xe000, 0xe0ff),
          (0xfb00, 0xfb4f), (0xfe00, 0xfe0f), (0xff00, 0xffef), (0x10000, 0x1007f), (0x1d400, 0x1d7ff),
          (0x1f300, 0x1faff), (0x20000, 0x2a6df), (0xe0000, 0xe007f), (0xf0000, 0xf00ff), (0x10fff0, 0x10ffff)]


def number(r):
    n = r.choice([r.randint(1, 12), r.randint(1, 60)])
    s = "".join(r.choice("0123456789") for _ in range(n))
    return r.choice([s, "-" + s, s + "." + s[:3], "1,234,567", s + "e-9", "0x" + s, "٣" + s, "१२" + s])


def random_char(r):
    """A codepoint of one of the blocks, assigned in Unicode 14 (Python's
    tables): PCRE2 10.42 knows Unicode 14, Oniguruma 6.9.8 (tokenizers')
    Unicode 15, so a character assigned in between is a letter or a symbol
    to one and unassigned to the other."""
    while True:
        c = chr(r.randint(*r.choice(BLOCKS)))
        if unicodedata.category(c) != "Cn":
            return c


def random_text(r):
    return "".join(random_char(r) for _ in range(r.randint(1, 8)))


def fragment(r):
    kind = r.choice(list(WORDS) + ["number", "number", "space", "space", "random"])
    if kind == "number":
        return number(r)
    if kind == "space":
        return r.choice(SPACES)
    if kind == "random":
        return random_text(r)
    return r.choice(WORDS[kind])


def text(r):
    parts = []
    for _ in range(r.randint(1, 12)):
        parts.append(fragment(r))
        parts.append(r.choice([" ", " ", " ", "", r.choice(SPACES)]))
    t = "".join(parts)
    return t if r.random() < 0.2 else t.strip(" ")


def tests(n, seed=12):
    r = random.Random(seed)
    fixed = ["", " ", "\n", "Hello", " Hello", "Hello world", "  leading", "trailing  ", "\t\ttabs", "a\n\nb",
             "<|im_start|>user\nHi<|im_end|>", "<s>[INST] x [/INST]", "1" * 100, "12345678901234567890",
             "👨‍👩‍👧‍👦👨‍👩‍👧‍👦", "e\u0301 é", "\u180e\u180e", " " * 64, "\n" * 20]
    out = fixed + [text(r) for _ in range(n - len(fixed))]
    return [t.replace("\0", "") for t in out]


def training():
    r = random.Random(7)
    return [text(r) for _ in range(6000)]


INVALID = ["ff", "616263ff", "c3", "61c3", "c328", "e282", "e28228", "f09f98", "f09f9828", "ed a080".replace(" ", ""),
           "edbfbf", "f4908080", "f8888080", "c0af", "e080af", "f08080af", "80", "bf41", "fe", "41fe42",
           "e4b8ade4b8", "0a0aff0a", "f0", "c2"]


def main(argv):
    if argv[:1] == ["test"]:
        sys.stdout.buffer.write(b"".join(t.encode() + b"\0" for t in tests(int(argv[1]))))
    elif argv[:1] == ["invalid"]:
        print("\n".join(INVALID))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
