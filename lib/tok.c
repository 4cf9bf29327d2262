/* tok.c — the tokenizer's pipeline: loading (a folder, a tokenizer.json or
 * a GGUF), and encoding as tokenizers does it — added tokens split off the
 * raw text, the rest normalized, added tokens of the normalized text split
 * off, pre-tokenized into pieces, each piece through the BPE model, then
 * the template's ids around the whole. Also the vocabulary's hash table,
 * UTF-8 checks and the byte buffers the stages share. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tok.h"

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p) {
        diag("out of memory");
        exit(EXIT_SYSTEM);
    }
    return p;
}

void buf8_put(Buf8 *b, const void *p, size_t n)
{
    if (!n)
        return;
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = xrealloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
}

void buf8_free(Buf8 *b)
{
    free(b->p);
    *b = (Buf8){0};
}

void ids_push(Ids *ids, int32_t id)
{
    if (ids->n == ids->cap) {
        ids->cap = ids->cap ? ids->cap * 2 : 64;
        ids->v = xrealloc(ids->v, (size_t)ids->cap * sizeof *ids->v);
    }
    ids->v[ids->n++] = id;
}

int tok_fail(const Tokenizer *t, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    diag_file(t->file, "%s", msg);
    return EXIT_INPUT;
}

/* ---- UTF-8 ---- */

/* The second byte's range after lead byte c, and the sequence's length. */
static int utf8_lead(unsigned c, unsigned *lo, unsigned *hi)
{
    *lo = 0x80;
    *hi = 0xBF;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        return 2;
    if (c >= 0xE0 && c <= 0xEF) {
        *lo = c == 0xE0 ? 0xA0 : 0x80;
        *hi = c == 0xED ? 0x9F : 0xBF;
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        *lo = c == 0xF0 ? 0x90 : 0x80;
        *hi = c == 0xF4 ? 0x8F : 0xBF;
        return 4;
    }
    return 0;
}

int utf8_len(const unsigned char *s, size_t n, uint32_t *cp)
{
    unsigned lo, hi;
    int len = n ? utf8_lead(s[0], &lo, &hi) : 0;
    if (len == 0 || (size_t)len > n)
        return 0;
    if (len == 1) {
        *cp = s[0];
        return 1;
    }
    if (s[1] < lo || s[1] > hi)
        return 0;
    uint32_t c = s[0] & (0x7F >> len);
    for (int i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        c = c << 6 | (s[i] & 0x3F);
    }
    *cp = c;
    return len;
}

int utf8_subpart(const unsigned char *s, size_t n)
{
    unsigned lo, hi;
    int len = utf8_lead(s[0], &lo, &hi);
    if (len <= 1 || n < 2 || s[1] < lo || s[1] > hi)
        return 1;
    int k = 2;
    while (k < len && (size_t)k < n && (s[k] & 0xC0) == 0x80)
        k++;
    return k;
}

int utf8_put(char *out, uint32_t cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

size_t utf8_valid(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        if (u[i] < 0x80) {
            i++;
            continue;
        }
        uint32_t cp;
        int k = utf8_len(u + i, n - i, &cp);
        if (!k)
            return i;
        i += (size_t)k;
    }
    return n;
}

/* ---- the vocabulary ---- */

static uint64_t hash(const char *p, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * 1099511628211ULL;
    return h ^ h >> 29;
}

int vocab_find(const Vocab *v, const char *p, size_t n)
{
    for (uint32_t i = (uint32_t)hash(p, n) & v->mask;; i = (i + 1) & v->mask) {
        int32_t s = v->slot[i];
        if (!s)
            return -1;
        const Str *q = &v->piece[s - 1];
        if (q->n == n && !memcmp(q->p, p, n))
            return s - 1;
    }
}

int vocab_index(Arena *a, Vocab *v, const char *file)
{
    uint32_t cap = 64;
    while (cap < 2u * (uint32_t)v->n + 2)
        cap *= 2;
    v->mask = cap - 1;
    v->slot = arena_alloc(a, cap * sizeof *v->slot);
    for (int id = 0; id < v->n; id++) {
        const Str *q = &v->piece[id];
        if (!q->p)
            continue;
        int old = vocab_find(v, q->p, q->n);
        if (old >= 0) {
            diag_file(file, "the piece '%.*s' has two ids, %d and %d", (int)q->n, q->p, old, id);
            return EXIT_INPUT;
        }
        uint32_t i = (uint32_t)hash(q->p, q->n) & v->mask;
        while (v->slot[i])
            i = (i + 1) & v->mask;
        v->slot[i] = id + 1;
    }
    return 0;
}

/* ---- after either reader ---- */

/* After either reader: every id's text (the model's pieces, the added
 * tokens'), which ids are special, the byte tokens and a byte-level
 * vocabulary's byte characters, and the template's ids checked. */
static int tok_finish(Tokenizer *t)
{
    Arena *a = t->a;
    int n = t->v.n;
    for (int i = 0; i < t->nadded; i++)
        n = t->added[i].id + 1 > n ? t->added[i].id + 1 : n;
    t->ntext = n;
    t->text = arena_alloc(a, (size_t)n * sizeof *t->text);
    t->special = arena_alloc(a, (size_t)n);
    memcpy(t->text, t->v.piece, (size_t)t->v.n * sizeof *t->text);
    for (int i = 0; i < t->nadded; i++) {
        const Added *ad = &t->added[i];
        t->text[ad->id] = ad->text;
        t->special[ad->id] = (char)ad->special;
    }
    added_index(t);
    for (int i = 0; i < t->nhead + t->ntail; i++) {
        int id = i < t->nhead ? t->head[i] : t->tail[i - t->nhead];
        if (id >= n || !t->text[id].p)
            return tok_fail(t, "the template's token %d is not in the vocabulary (%d tokens)", id, n);
    }
    for (int b = 0; b < 256; b++) {
        char s[8];
        snprintf(s, sizeof s, "<0x%02X>", b);
        t->m.byte_tok[b] = vocab_find(&t->v, s, 6);
        t->m.byte_sym[b] = -1;
    }
    if (t->m.bytelevel) {
        for (int b = 0; b < 256; b++) {
            char s[4];
            t->m.byte_sym[b] = vocab_find(&t->v, s, (size_t)utf8_put(s, bytelevel_cp[b]));
        }
    }
    return 0;
}

/* ---- loading ---- */

static int is_dir(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static int exists(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0;
}

static int ends_with(const char *s, const char *suf)
{
    size_t n = strlen(s), k = strlen(suf);
    return n >= k && !strcmp(s + n - k, suf);
}

Tokenizer *tok_load(Arena *a, const char *path)
{
    Tokenizer *t = arena_alloc(a, sizeof *t);
    t->a = a;
    t->m.unk = -1;
    bytelevel_init();
    const char *file = path;
    if (is_dir(path)) {
        const char *j = arena_printf(a, "%s/tokenizer.json", path), *g = arena_printf(a, "%s/tokenizer.gguf", path);
        file = exists(j) ? j : exists(g) ? g : NULL;
        if (!file) {
            diag_file(path, "no tokenizer here: neither tokenizer.json nor tokenizer.gguf");
            return NULL;
        }
    } else if (!exists(path)) {
        diag_file(path, "cannot open: %s", strerror(errno));
        return NULL;
    }
    t->file = file;
    int st = ends_with(file, ".gguf") ? tok_from_gguf(t, file) : tok_from_json(t, file);
    if (!st)
        st = tok_finish(t);
    if (st) {
        tok_free(t);
        return NULL;
    }
    t->md = pcre2_match_data_create(64, NULL);
    if (!t->md) {
        diag("out of memory");
        exit(EXIT_SYSTEM);
    }
    return t;
}

void tok_free(Tokenizer *t)
{
    if (!t)
        return;
    for (int i = 0; i < t->npre; i++)
        pcre2_code_free(t->pre[i].re);
    for (int i = 0; i < t->nnorm; i++)
        pcre2_code_free(t->norm[i].re);
    pcre2_match_data_free(t->md);
    free(t->raw.v);
    free(t->sub.v);
    buf8_free(&t->norm_buf);
    pieces_free(&t->pieces);
}

int tok_vocab(const Tokenizer *t)
{
    return t->ntext;
}

const char *tok_kind(const Tokenizer *t)
{
    return t->kind;
}

const char *tok_piece(const Tokenizer *t, int id, size_t *n)
{
    if (id < 0 || id >= t->ntext || !t->text[id].p)
        return NULL;
    *n = t->text[id].n;
    return t->text[id].p;
}

/* ---- encoding ---- */

/* Normalized text between added tokens: its normalized added tokens, and
 * the pieces of the rest through the model. first: it starts the text. */
static void encode_normalized(Tokenizer *t, const char *s, size_t n, int first, int special, Ids *out)
{
    added_split(t, 1, special, s, n, &t->sub);
    for (int i = 0; i < t->sub.n; i++) {
        const Span *sp = &t->sub.v[i];
        if (sp->id >= 0) {
            ids_push(out, sp->id);
            continue;
        }
        Pieces *ps = &t->pieces;
        ps->n = 0;
        ps->text.n = 0;
        pieces_add(ps, s + sp->at, sp->n, first && sp->at == 0);
        if (pre_apply(t->pre, t->npre, ps, t->md))
            exit(EXIT_SYSTEM);
        for (int k = 0; k < ps->n; k++)
            bpe_word(&t->m, &t->v, ps->text.p + ps->v[k].at, ps->v[k].n, out);
    }
}

void tok_encode(Tokenizer *t, const char *text, size_t n, int special, int bare, TokIds *out)
{
    for (int i = 0; !bare && i < t->nhead; i++)
        ids_push(out, t->head[i]);
    added_split(t, 0, special, text, n, &t->raw);
    for (int i = 0; i < t->raw.n; i++) {
        const Span *sp = &t->raw.v[i];
        if (sp->id >= 0) {
            ids_push(out, sp->id);
            continue;
        }
        const char *s = text + sp->at;
        size_t len = sp->n;
        if (t->nnorm) {
            if (norm_apply(t->norm, t->nnorm, s, len, &t->norm_buf))
                exit(EXIT_SYSTEM);
            /* the buffer is reused by no one until this span is done */
            s = t->norm_buf.p;
            len = t->norm_buf.n;
        }
        encode_normalized(t, s, len, sp->at == 0, special, out);
    }
    for (int i = 0; !bare && i < t->ntail; i++)
        ids_push(out, t->tail[i]);
}

/* ---- showing pieces ---- */

void tok_show(FILE *f, const Tokenizer *t, int id)
{
    size_t n = 0;
    const char *p = tok_piece(t, id, &n);
    fprintf(f, "%d\t", id);
    for (size_t i = 0; p && i < n;) {
        unsigned char c = (unsigned char)p[i];
        uint32_t cp;
        int k = c >= 0x80 ? utf8_len((const unsigned char *)p + i, n - i, &cp) : 1;
        if (c == '\\' || c == '\n' || c == '\t' || c == '\r') {
            fprintf(f, "\\%c", c == '\\' ? '\\' : c == '\n' ? 'n' : c == '\t' ? 't' : 'r');
        } else if (c < 0x20 || c == 0x7F || k == 0) {
            fprintf(f, "\\x%02X", c);
        } else {
            fwrite(p + i, 1, (size_t)k, f);
            i += (size_t)k;
            continue;
        }
        i++;
    }
    fputc('\n', f);
}

/* ---- logos-import's part ---- */

static char *read_whole(Arena *a, const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    Buf8 b = {0};
    char chunk[65536];
    size_t n;
    while (f && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
        buf8_put(&b, chunk, n);
    int bad = !f || ferror(f);
    if (f)
        fclose(f);
    if (bad) {
        buf8_free(&b);
        diag_file(path, "cannot read: %s", strerror(errno));
        return NULL;
    }
    char *p = arena_strndup(a, b.p ? b.p : "", b.n);
    *len = b.n;
    buf8_free(&b);
    return p;
}

int tok_import_find(Arena *a, const char *in, TokImport *ti)
{
    *ti = (TokImport){0};
    if (is_dir(in)) {
        const char *j = arena_printf(a, "%s/tokenizer.json", in);
        if (!exists(j))
            return 0;
        Tokenizer *t = tok_load(a, j);
        if (!t)
            return EXIT_INPUT;
        tok_free(t);
        size_t len = 0;
        char *bytes = read_whole(a, j, &len);
        if (!bytes)
            return EXIT_INPUT;
        *ti = (TokImport){j, "tokenizer.json", bytes, len, t->kind, t->ntext};
        return 0;
    }
    Tokenizer probe = {.a = a, .file = in};
    Buf8 b = {0};
    int st = tok_gguf_keys(&probe, in, &b);
    if (!st && b.n) {
        Tokenizer *t = tok_load(a, in);
        if (!t)
            st = EXIT_INPUT;
        else
            *ti = (TokImport){in, "tokenizer.gguf", arena_strndup(a, b.p, b.n), b.n, t->kind, t->ntext};
        tok_free(t);
    }
    buf8_free(&b);
    return st;
}

int tok_import_write(Arena *a, const TokImport *ti, const char *outdir)
{
    if (!ti->from)
        return 0;
    return outfile_whole(arena_printf(a, "%s/%s", outdir, ti->name), ti->bytes, ti->len);
}
