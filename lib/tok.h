/* tok.h — what the files of the tokenizer share (tok.c, tok_json.c,
 * tok_gguf.c, tok_norm.c, tok_split.c, tok_bpe.c, tok_added.c, tok_dec.c):
 * a tokenizer as one pipeline of stages — added tokens, normalizers,
 * pre-tokenizers, the BPE model, the post-processor's template and the
 * decoders — whichever file (a Hugging Face tokenizer.json or a GGUF's
 * tokenizer.ggml.* metadata) it was read from. */
#ifndef TOK_H
#define TOK_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "logos.h"

/* A byte string (not NUL-terminated where it points into another). */
typedef struct Str {
    const char *p;
    size_t n;
} Str;

/* A growable byte buffer (malloc'd, kept between calls). */
typedef struct Buf8 {
    char *p;
    size_t n, cap;
} Buf8;
void buf8_put(Buf8 *b, const void *p, size_t n);
void buf8_free(Buf8 *b);

/* ---- vocabulary: pieces by id and ids by piece ---- */
typedef struct Vocab {
    Str *piece;           /* by id; .p NULL for an id no piece has */
    int n;                /* ids 0 .. n-1 */
    int32_t *slot;        /* open addressing: id + 1, 0 empty */
    uint32_t mask;
} Vocab;
/* Builds the table over pieces 0..n-1; a piece given twice is an error
 * reported with its two ids (returns EXIT_INPUT). */
int vocab_index(Arena *a, Vocab *v, const char *file);
int vocab_find(const Vocab *v, const char *p, size_t n);   /* id or -1 */

/* ---- normalizers (tok_norm.c) ---- */
enum NormKind { NORM_NFC, NORM_NFD, NORM_NFKC, NORM_NFKD, NORM_REPLACE, NORM_PREPEND };
typedef struct Norm {
    int kind;
    Str pat, rep;          /* REPLACE: a literal pattern; PREPEND: rep */
    pcre2_code *re;        /* REPLACE with a Regex pattern */
} Norm;
/* Applies every normalizer to s[0..n) into out (cleared first); 0 or
 * EXIT_SYSTEM. */
int norm_apply(const Norm *nm, int count, const char *s, size_t n, Buf8 *out);

/* ---- pre-tokenizers (tok_split.c) ---- */
enum PreKind { PRE_SPLIT, PRE_BYTELEVEL, PRE_METASPACE };
enum Behavior { B_REMOVED, B_ISOLATED, B_PREVIOUS, B_NEXT, B_CONTIGUOUS };
enum Prepend { PREP_ALWAYS, PREP_FIRST, PREP_NEVER };
typedef struct Pre {
    int kind;
    pcre2_code *re;        /* SPLIT, or BYTELEVEL with use_regex */
    int behavior, invert;  /* SPLIT */
    int prefix_space;      /* BYTELEVEL: add_prefix_space */
    Str repl;              /* METASPACE: the replacement (▁) */
    int prepend, split;    /* METASPACE */
} Pre;
/* A piece of text between stages: its bytes in a Buf8 of the pass, and
 * whether it starts the original text (Metaspace's "first"). */
typedef struct Piece {
    size_t at, n;          /* into the pass's buffer */
    int first;
} Piece;
typedef struct Pieces {
    Piece *v;
    int n, cap;
    Buf8 text;
} Pieces;
/* Compiles a split regex written in Oniguruma's syntax (what tokenizers
 * uses) for PCRE2 with Unicode properties and JIT; NULL with *why set. */
pcre2_code *split_compile(const char *pat, size_t n, int literal, const char **why);
/* A pattern that failed on a text (PCRE2's match or depth limit): a
 * message, and exit(EXIT_SYSTEM). */
_Noreturn void split_failed(int rc);
/* The GPT-2 pattern ByteLevel applies when use_regex is true. */
extern const char split_gpt2[];
/* Runs the pre-tokenizers over pieces in place; 0 or EXIT_SYSTEM. */
int pre_apply(const Pre *pre, int count, Pieces *ps, pcre2_match_data *md);
void pieces_add(Pieces *ps, const char *p, size_t n, int first);
void pieces_free(Pieces *ps);

/* ---- the model (tok_bpe.c) ---- */
typedef struct Merge {
    uint64_t key;          /* left id << 32 | right id; 0 with rank -1 empty */
    int32_t rank, id;
} Merge;
typedef struct Model {
    int bytelevel;         /* pieces are bytes mapped to GPT-2's characters */
    int byte_fallback, fuse_unk, ignore_merges;
    int unk;               /* -1: none */
    int by_score;          /* GGUF's SentencePiece: merge by the pieces' scores */
    float *score;          /* by id, for by_score */
    char *mergeable;       /* by id, for by_score: a normal piece (not control, byte, unused) */
    Merge *merge;          /* open addressing on key */
    uint32_t mmask;
    int byte_tok[256];     /* <0xNN> ids, -1 absent */
    int byte_sym[256];     /* bytelevel: the id of each byte's character, -1 absent */
} Model;
/* GPT-2's byte to character map: byte b is codepoint bytelevel_cp[b]
 * (filled by bytelevel_init). */
extern uint16_t bytelevel_cp[256];
void bytelevel_init(void);
int bytelevel_byte(uint32_t cp);   /* the byte of a mapped character, or -1 */
/* Adds merge (l, r) -> id with rank (ranks in increasing order); a pair
 * given again takes the later rank, as tokenizers' map does. */
int merge_add(Arena *a, Model *m, int l, int r, int id, int rank, int *cap);
/* The ids of one piece, appended to out. */
typedef TokIds Ids;
void ids_push(Ids *ids, int32_t id);
void bpe_word(const Model *m, const Vocab *v, const char *s, size_t n, Ids *out);

/* ---- added tokens (tok_added.c) ---- */
typedef struct Added {
    Str text;              /* content (normalized when .normalized) */
    int id, special, lstrip, rstrip, single_word, normalized;
} Added;
/* A span of a text: an added token's id, or -1 for text between them. */
typedef struct Span {
    size_t at, n;
    int id;
} Span;
typedef struct Spans {
    Span *v;
    int n, cap;
} Spans;
typedef struct Tokenizer Tokenizer;
/* Sorts the added tokens for matching (by kind, first byte, longest first). */
void added_index(Tokenizer *t);
/* Splits s into added tokens (those with .normalized == normalized; special
 * ones only when special is set) and the text between, as tokenizers'
 * leftmost-longest matching does. */
void added_split(const Tokenizer *t, int normalized, int special, const char *s, size_t n, Spans *out);


/* ---- the tokenizer ---- */
enum DecKind { DEC_BYTELEVEL, DEC_REPLACE, DEC_BYTEFALLBACK, DEC_FUSE, DEC_STRIP, DEC_METASPACE };
typedef struct Dec {
    int kind;
    Str pat, rep;          /* REPLACE */
    Str content;           /* STRIP: one character */
    int start;             /* STRIP */
    int prepend;           /* METASPACE: its scheme */
} Dec;

struct Tokenizer {
    Arena *a;
    const char *file;      /* as messages name it */
    const char *kind;      /* "byte-level BPE", "SentencePiece BPE" */
    Vocab v;               /* the model's pieces: what BPE looks up */
    Str *text;             /* by id, the model's and the added tokens': what decoding writes */
    int ntext;
    char *special;         /* by id: an added token marked special */
    Model m;
    Added *added; int nadded;
    int alo[2][256], ahi[2][256];   /* added tokens by normalized, first byte */
    Norm *norm; int nnorm;
    Pre *pre; int npre;
    Dec *dec; int ndec;
    int32_t *head, *tail;  /* the template's ids around the text */
    int nhead, ntail;
    /* scratch of tok_encode, kept between calls */
    Spans raw, sub;
    Buf8 norm_buf;
    Pieces pieces;
    pcre2_match_data *md;
};

/* tok_json.c / tok_gguf.c: fill a Tokenizer from a file; 0 or EXIT_INPUT after a
 * message naming the file. */
int tok_from_json(Tokenizer *t, const char *path);
int tok_from_gguf(Tokenizer *t, const char *path);
/* The tokenizer.* keys of the GGUF at path, as a GGUF of their own (no
 * tensors), appended to out; nothing when it has no tokenizer.ggml.model.
 * 0 or EXIT_INPUT. */
int tok_gguf_keys(Tokenizer *t, const char *path, Buf8 *out);
/* Fails with `logos-tok: FILE: message` (diag_file); returns EXIT_INPUT. */
int tok_fail(const Tokenizer *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* UTF-8: the length of the valid sequence at s (at most n bytes), or 0
 * when the bytes there are not one; *cp its codepoint. */
int utf8_len(const unsigned char *s, size_t n, uint32_t *cp);
/* The length of the longest prefix of s that could begin a valid sequence
 * (Unicode's "maximal subpart"), at least 1. */
int utf8_subpart(const unsigned char *s, size_t n);
int utf8_put(char *out, uint32_t cp);

#endif
