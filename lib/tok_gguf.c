/* tok_gguf.c — the tokenizer a GGUF carries in its tokenizer.ggml.* keys,
 * read as llama.cpp reads it: "gpt2" is byte-level BPE (tokens, merges,
 * the pre-tokenizer's regexes named by tokenizer.ggml.pre), "llama" is
 * SentencePiece BPE merged by the tokens' scores (a space before the text
 * and after each added token unless add_space_prefix is false, spaces as
 * ▁, bytes as <0xNN>). Control tokens (type 3) are special added tokens,
 * user-defined ones (type 4) plain added tokens; BOS and EOS go around the
 * text as add_bos_token and add_eos_token say. Also the extraction of those
 * keys into a GGUF of their own (tokenizer.gguf) for logos-import. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tok.h"

enum { GT_U8, GT_I8, GT_U16, GT_I16, GT_U32, GT_I32, GT_F32, GT_BOOL, GT_STR, GT_ARR, GT_U64, GT_I64, GT_F64,
       GT_COUNT };

typedef struct G {
    Tokenizer *t;
    const unsigned char *p;
    size_t len, pos;
    int err;
    /* what the keys hold */
    Str model, pre;
    size_t tokens, merges, scores, types;   /* positions of the arrays' counts; 0 absent */
    long bos, eos, unk;
    int add_bos, add_eos, add_space;        /* -1: absent */
    Buf8 raw;                               /* the tokenizer.* key-values as they lie */
    int nraw;
} G;

static int g_need(G *g, uint64_t n, const char *what)
{
    if (g->err)
        return -1;
    if (n > g->len - g->pos) {
        g->err = tok_fail(g->t, "truncated at byte %zu: %s runs past the end of the file", g->pos, what);
        return -1;
    }
    return 0;
}

static uint64_t g_le(G *g, int n, const char *what)
{
    if (g_need(g, (uint64_t)n, what))
        return 0;
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | g->p[g->pos + (size_t)i];
    g->pos += (size_t)n;
    return v;
}

static Str g_str(G *g, const char *what)
{
    uint64_t n = g_le(g, 8, what);
    if (g_need(g, n, what))
        return (Str){"", 0};
    Str s = {(const char *)g->p + g->pos, (size_t)n};
    g->pos += (size_t)n;
    return s;
}

static int type_size(int t)
{
    static const int size[GT_COUNT] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    return t >= 0 && t < GT_COUNT ? size[t] : -1;
}

static void g_skip(G *g, int t, const char *what, int depth)
{
    if (t == GT_STR) {
        g_str(g, what);
        return;
    }
    if (t == GT_ARR) {
        int et = (int)g_le(g, 4, what);
        uint64_t n = g_le(g, 8, what);
        if (!g->err && (depth > 4 || type_size(et) < 0))
            g->err = tok_fail(g->t, "%s: an array of unknown value type %d", what, et);
        if (!g->err && type_size(et) > 0) {
            if (!g_need(g, n * (uint64_t)type_size(et), what) && n < (1ULL << 40))
                g->pos += (size_t)(n * (uint64_t)type_size(et));
            return;
        }
        for (uint64_t i = 0; i < n && !g->err; i++)
            g_skip(g, et, what, depth + 1);
        return;
    }
    if (type_size(t) < 0) {
        g->err = tok_fail(g->t, "%s: unknown value type %d", what, t);
        return;
    }
    g_le(g, type_size(t), what);
}

/* A key of the tokenizer: its value kept (scalars) or its place (arrays). */
static void g_tok_key(G *g, const char *key, int type)
{
    size_t at = g->pos;
    if (type == GT_STR && (!strcmp(key, "tokenizer.ggml.model") || !strcmp(key, "tokenizer.ggml.pre"))) {
        *(key[15] == 'm' ? &g->model : &g->pre) = g_str(g, key);
        return;
    }
    long *ids[] = {&g->bos, &g->eos, &g->unk};
    static const char *idkeys[] = {"tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id",
                                   "tokenizer.ggml.unknown_token_id"};
    int *flags[] = {&g->add_bos, &g->add_eos, &g->add_space};
    static const char *flagkeys[] = {"tokenizer.ggml.add_bos_token", "tokenizer.ggml.add_eos_token",
                                     "tokenizer.ggml.add_space_prefix"};
    for (int i = 0; i < 3; i++) {
        if (!strcmp(key, idkeys[i]) && (type == GT_U32 || type == GT_I32)) {
            *ids[i] = (long)(type == GT_I32 ? (int32_t)g_le(g, 4, key) : (int64_t)g_le(g, 4, key));
            return;
        }
        if (!strcmp(key, flagkeys[i]) && type == GT_BOOL) {
            *flags[i] = g_le(g, 1, key) != 0;
            return;
        }
    }
    if (type == GT_ARR) {
        if (!strcmp(key, "tokenizer.ggml.tokens"))
            g->tokens = at;
        else if (!strcmp(key, "tokenizer.ggml.merges"))
            g->merges = at;
        else if (!strcmp(key, "tokenizer.ggml.scores"))
            g->scores = at;
        else if (!strcmp(key, "tokenizer.ggml.token_type"))
            g->types = at;
    }
    g_skip(g, type, key, 0);
}

static int g_header(G *g)
{
    if (g->len < 4 || memcmp(g->p, "GGUF", 4))
        return tok_fail(g->t, "not a GGUF file: bad magic (expected 'GGUF')");
    g->pos = 4;
    uint32_t version = (uint32_t)g_le(g, 4, "the header");
    if (!g->err && version != 2 && version != 3)
        return tok_fail(g->t, "unsupported GGUF version %u (2 and 3 are read)", version);
    g_le(g, 8, "the header");
    uint64_t nkv = g_le(g, 8, "the header");
    for (uint64_t i = 0; i < nkv && !g->err; i++) {
        size_t start = g->pos;
        Str k = g_str(g, "a key");
        const char *key = arena_strndup(g->t->a, k.p, k.n);
        int type = (int)g_le(g, 4, key);
        if (g->err)
            break;
        if (strncmp(key, "tokenizer.", 10)) {
            g_skip(g, type, key, 0);
            continue;
        }
        g_tok_key(g, key, type);
        if (!g->err) {
            buf8_put(&g->raw, g->p + start, g->pos - start);
            g->nraw++;
        }
    }
    return g->err;
}

/* ---- arrays of the vocabulary ---- */

/* Positions at an array's element type and count; its count or -1. */
static long g_array(G *g, size_t at, int want, const char *key)
{
    g->pos = at;
    int et = (int)g_le(g, 4, key);
    uint64_t n = g_le(g, 8, key);
    if (g->err)
        return -1;
    if (et != want) {
        g->err = tok_fail(g->t, "%s: an array of type %d, not %d", key, et, want);
        return -1;
    }
    if (n >= (1u << 24)) {
        g->err = tok_fail(g->t, "%s: %llu values, more than a vocabulary holds", key, (unsigned long long)n);
        return -1;
    }
    return (long)n;
}

static int g_tokens(G *g)
{
    Tokenizer *t = g->t;
    long n = g->tokens ? g_array(g, g->tokens, GT_STR, "tokenizer.ggml.tokens") : -1;
    if (!g->tokens)
        return tok_fail(t, "no tokenizer.ggml.tokens");
    if (n < 0)
        return EXIT_INPUT;
    t->v.n = (int)n;
    t->v.piece = arena_alloc(t->a, (size_t)(n ? n : 1) * sizeof *t->v.piece);
    for (long i = 0; i < n; i++) {
        Str s = g_str(g, "tokenizer.ggml.tokens");
        if (g->err)
            return tok_fail(t, "tokenizer.ggml.tokens: token %ld of %ld is cut off by the end of the file", i, n);
        t->v.piece[i] = (Str){arena_strndup(t->a, s.p, s.n), s.n};
    }
    return vocab_index(t->a, &t->v, t->file);
}

static int g_types(G *g)
{
    Tokenizer *t = g->t;
    long n = g->types ? g_array(g, g->types, GT_I32, "tokenizer.ggml.token_type") : 0;
    if (n < 0)
        return EXIT_INPUT;
    if (g->types && n != t->v.n)
        return tok_fail(t, "tokenizer.ggml.token_type has %ld values for %d tokens", n, t->v.n);
    if (g_need(g, (uint64_t)n * 4, "tokenizer.ggml.token_type"))
        return EXIT_INPUT;
    int cap = 0;
    t->m.mergeable = arena_alloc(t->a, (size_t)(t->v.n ? t->v.n : 1));
    memset(t->m.mergeable, 1, (size_t)t->v.n);
    for (long i = 0; i < n; i++) {
        int type = (int32_t)g_le(g, 4, "tokenizer.ggml.token_type");
        t->m.mergeable[i] = type == 1;
        if (type == 3 || type == 4)
            *VEC_PUSH(t->a, t->added, t->nadded, cap) = (Added){.text = t->v.piece[i], .id = (int)i,
                                                               .special = type == 3};
    }
    return 0;
}

static int g_merges(G *g)
{
    Tokenizer *t = g->t;
    long n = g->merges ? g_array(g, g->merges, GT_STR, "tokenizer.ggml.merges") : 0;
    if (n < 0)
        return EXIT_INPUT;
    int cap = 0;
    static Buf8 both;
    for (long i = 0; i < n; i++) {
        Str m = g_str(g, "tokenizer.ggml.merges");
        if (g->err)
            return tok_fail(t, "tokenizer.ggml.merges: merge %ld of %ld is cut off by the end of the file", i, n);
        const char *sp = m.n > 1 ? memchr(m.p + 1, ' ', m.n - 1) : NULL;
        if (!sp)
            return tok_fail(t, "tokenizer.ggml.merges[%ld]: not two pieces", i);
        size_t ln = (size_t)(sp - m.p);
        both.n = 0;
        buf8_put(&both, m.p, ln);
        buf8_put(&both, sp + 1, m.n - ln - 1);
        int a = vocab_find(&t->v, m.p, ln), b = vocab_find(&t->v, sp + 1, m.n - ln - 1);
        int ab = vocab_find(&t->v, both.p, both.n);
        if (a < 0 || b < 0 || ab < 0)
            return tok_fail(t, "tokenizer.ggml.merges[%ld]: '%.*s' is not in the vocabulary", i,
                            (int)(a < 0 ? ln : b < 0 ? m.n - ln - 1 : both.n), a < 0 ? m.p : b < 0 ? sp + 1 : both.p);
        merge_add(t->a, &t->m, a, b, ab, (int)i, &cap);
    }
    return 0;
}

static int g_scores(G *g)
{
    Tokenizer *t = g->t;
    long n = g->scores ? g_array(g, g->scores, GT_F32, "tokenizer.ggml.scores") : -1;
    if (!g->scores)
        return tok_fail(t, "no tokenizer.ggml.scores: a SentencePiece vocabulary merges by them");
    if (n < 0)
        return EXIT_INPUT;
    if (n != t->v.n)
        return tok_fail(t, "tokenizer.ggml.scores has %ld values for %d tokens", n, t->v.n);
    if (g_need(g, (uint64_t)n * 4, "tokenizer.ggml.scores"))
        return EXIT_INPUT;
    t->m.score = arena_alloc(t->a, (size_t)(n ? n : 1) * sizeof *t->m.score);
    memcpy(t->m.score, g->p + g->pos, (size_t)n * 4);
    return 0;
}

/* ---- the pipeline each kind implies ---- */

/* llama.cpp's pre-tokenizers by name: their split regexes. */
static const struct {
    const char *name;
    int ignore_merges;
    const char *re[3];
} pres[] = {
    {"default", 0, {"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"}},
    {"gpt2", 0, {"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"}},
    {"llama-bpe", 1, {"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
                      "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
    {"qwen2", 0, {"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
                  "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
    {"deepseek-v3", 0, {"\\p{N}{1,3}", "[一-龥\\x{3040}-ゟ゠-ヿ]+",
                        "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| "
                        "?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
    {"gpt-4o", 0, {"[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+"
                   "(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+"
                   "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|"
                   "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
};

static int g_gpt2(G *g)
{
    Tokenizer *t = g->t;
    const char *name = g->pre.p ? arena_strndup(t->a, g->pre.p, g->pre.n) : "default";
    if (!strcmp(name, "llama3"))
        name = "llama-bpe";
    size_t k = 0;
    while (k < sizeof pres / sizeof *pres && strcmp(pres[k].name, name))
        k++;
    if (k == sizeof pres / sizeof *pres)
        return tok_fail(t, "tokenizer.ggml.pre '%s' is not known (known: default gpt2 llama-bpe qwen2 deepseek-v3 "
                        "gpt-4o)", name);
    int cap = 0;
    for (int i = 0; i < 3 && pres[k].re[i]; i++) {
        const char *why;
        Pre p = {.kind = PRE_SPLIT, .behavior = B_ISOLATED};
        p.re = split_compile(pres[k].re[i], strlen(pres[k].re[i]), 0, &why);
        if (!p.re)
            BUG("a pre-tokenizer's regex does not compile");
        *VEC_PUSH(t->a, t->pre, t->npre, cap) = p;
    }
    *VEC_PUSH(t->a, t->pre, t->npre, cap) = (Pre){.kind = PRE_BYTELEVEL};
    t->m.bytelevel = 1;
    t->m.ignore_merges = pres[k].ignore_merges;
    t->dec = arena_alloc(t->a, sizeof *t->dec);
    t->dec[t->ndec++] = (Dec){.kind = DEC_BYTELEVEL};
    t->kind = "byte-level BPE";
    return g_merges(g);
}

static int g_llama(G *g)
{
    Tokenizer *t = g->t;
    int space = g->add_space != 0;
    static const char bar[] = "\xE2\x96\x81";
    t->norm = arena_alloc(t->a, 2 * sizeof *t->norm);
    if (space)
        t->norm[t->nnorm++] = (Norm){.kind = NORM_PREPEND, .rep = {bar, 3}};
    t->norm[t->nnorm++] = (Norm){.kind = NORM_REPLACE, .pat = {" ", 1}, .rep = {bar, 3}};
    t->dec = arena_alloc(t->a, 4 * sizeof *t->dec);
    t->dec[t->ndec++] = (Dec){.kind = DEC_REPLACE, .pat = {bar, 3}, .rep = {" ", 1}};
    t->dec[t->ndec++] = (Dec){.kind = DEC_BYTEFALLBACK};
    t->dec[t->ndec++] = (Dec){.kind = DEC_FUSE};
    if (space)
        t->dec[t->ndec++] = (Dec){.kind = DEC_STRIP, .content = {" ", 1}, .start = 1};
    t->m.by_score = 1;
    t->m.byte_fallback = 1;
    t->kind = "SentencePiece BPE";
    if (g->unk < 0)
        g->unk = 0;
    return g_scores(g);
}

/* BOS, EOS and the unknown token: within the vocabulary. */
static int g_ids(G *g, int bos_dflt)
{
    Tokenizer *t = g->t;
    long *ids[] = {&g->bos, &g->eos, &g->unk};
    static const char *names[] = {"bos_token_id", "eos_token_id", "unknown_token_id"};
    for (int i = 0; i < 3; i++)
        if (*ids[i] >= t->v.n || *ids[i] < -1)
            return tok_fail(t, "tokenizer.ggml.%s %ld is past the vocabulary (%d tokens)", names[i], *ids[i], t->v.n);
    t->m.unk = (int)g->unk;
    int bos = g->add_bos < 0 ? bos_dflt : g->add_bos;
    if (bos && g->bos >= 0) {
        t->head = arena_alloc(t->a, sizeof *t->head);
        t->head[t->nhead++] = (int32_t)g->bos;
    }
    if (g->add_eos > 0 && g->eos >= 0) {
        t->tail = arena_alloc(t->a, sizeof *t->tail);
        t->tail[t->ntail++] = (int32_t)g->eos;
    }
    return 0;
}

static int g_map(Tokenizer *t, const char *path, G *g)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        if (fd >= 0)
            close(fd);
        return tok_fail(t, "cannot open: %s", strerror(errno));
    }
    g->len = (size_t)sb.st_size;
    g->p = (const unsigned char *)"";
    if (g->len) {
        void *m = mmap(NULL, g->len, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            close(fd);
            diag_file(path, "cannot map: %s", strerror(errno));
            exit(EXIT_SYSTEM);
        }
        g->p = m;
    }
    close(fd);
    return 0;
}

/* Reads the header into g (mapped; the caller unmaps). */
static int g_open(Tokenizer *t, const char *path, G *g)
{
    *g = (G){.t = t, .bos = -1, .eos = -1, .unk = -1, .add_bos = -1, .add_eos = -1, .add_space = -1};
    int st = g_map(t, path, g);
    return st ? st : g_header(g);
}

static void g_close(G *g)
{
    if (g->len)
        munmap((void *)g->p, g->len);
    buf8_free(&g->raw);
}

int tok_from_gguf(Tokenizer *t, const char *path)
{
    G g;
    int st = g_open(t, path, &g);
    const char *model = g.model.p ? arena_strndup(t->a, g.model.p, g.model.n) : NULL;
    if (!st && !model)
        st = tok_fail(t, "no tokenizer.ggml.model: the file carries no tokenizer");
    else if (!st && strcmp(model, "gpt2") && strcmp(model, "llama"))
        st = tok_fail(t, "tokenizer.ggml.model '%s' is not read (logos-tok reads gpt2 and llama)", model);
    if (!st)
        st = g_tokens(&g);
    if (!st)
        st = g_types(&g);
    if (!st)
        st = !strcmp(model, "gpt2") ? g_gpt2(&g) : g_llama(&g);
    if (!st)
        st = g_ids(&g, !strcmp(model, "llama"));
    g_close(&g);
    return st;
}

/* ---- extraction for logos-import ---- */

/* A GGUF of the tokenizer keys alone: no tensors. */
int tok_gguf_keys(Tokenizer *t, const char *path, Buf8 *out)
{
    G g;
    int st = g_open(t, path, &g);
    if (!st && g.model.p) {
        uint32_t v = 3;
        uint64_t nt = 0, nkv = (uint64_t)g.nraw;
        buf8_put(out, "GGUF", 4);
        buf8_put(out, &v, 4);
        buf8_put(out, &nt, 8);
        buf8_put(out, &nkv, 8);
        buf8_put(out, g.raw.p, g.raw.n);
    }
    g_close(&g);
    return st;
}
