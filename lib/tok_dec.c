/* tok_dec.c — ids back to text as a stream, as tokenizers' decoders do it
 * on a whole sequence (special tokens skipped unless asked): ByteLevel
 * turns each piece's characters back into bytes (a piece with a character
 * outside GPT-2's map stays as it is) and writes them as UTF-8 with each
 * invalid sequence as U+FFFD, the way Rust's from_utf8_lossy does; the
 * others run per piece in order — Replace, ByteFallback (a run of <0xNN>
 * tokens is its bytes when they are valid UTF-8, else one U+FFFD a byte),
 * Fuse (what follows sees one text), Strip (leading characters),
 * Metaspace (▁ to a space, none in the first piece). Text is written as
 * soon as nothing after it can change it: an unfinished UTF-8 sequence
 * and a run of byte tokens wait for what ends them. */
#include <stdlib.h>
#include <string.h>

#include "tok.h"

enum { MAXDEC = 16 };

struct TokDec {
    const Tokenizer *t;
    int special;
    int count;              /* pieces decoded (not skipped) in this text */
    Buf8 pend;              /* ByteLevel: an unfinished sequence */
    Buf8 group[MAXDEC];     /* ByteFallback: the run of byte tokens at that stage */
    Buf8 work[MAXDEC];      /* Replace's output at that stage */
    int seen[MAXDEC];       /* pieces that reached that stage */
    int cut, stripped;      /* Strip after Fuse: characters cut, done with the text's start */
};

TokDec *tok_dec_new(const Tokenizer *t, int special)
{
    TokDec *d = calloc(1, sizeof *d);
    if (!d) {
        diag("out of memory");
        exit(EXIT_SYSTEM);
    }
    d->t = t;
    d->special = special;
    return d;
}

void tok_dec_free(TokDec *d)
{
    if (!d)
        return;
    buf8_free(&d->pend);
    for (int i = 0; i < MAXDEC; i++) {
        buf8_free(&d->group[i]);
        buf8_free(&d->work[i]);
    }
    free(d);
}

static const char fffd[] = "\xEF\xBF\xBD";

/* ---- ByteLevel ---- */

/* Writes the complete part of the pending bytes; at the end (last) an
 * unfinished sequence too, as U+FFFD. */
static void lossy(TokDec *d, FILE *out, int last)
{
    if (!d->pend.n)
        return;
    const unsigned char *s = (const unsigned char *)d->pend.p;
    size_t n = d->pend.n, i = 0, done = 0;
    while (i < n) {
        uint32_t cp;
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        int k = utf8_len(s + i, n - i, &cp);
        if (k) {
            i += (size_t)k;
            continue;
        }
        int sub = utf8_subpart(s + i, n - i);
        unsigned lead = s[i];
        int want = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
        if (!last && i + (size_t)sub == n && sub < want && lead >= 0xC2 && lead <= 0xF4)
            break;   /* may still be finished by the next piece */
        fwrite(s + done, 1, i - done, out);
        fputs(fffd, out);
        i += (size_t)sub;
        done = i;
    }
    fwrite(s + done, 1, i - done, out);
    memmove(d->pend.p, d->pend.p + i, n - i);
    d->pend.n = n - i;
}

static void bytelevel(TokDec *d, const Str *piece, FILE *out)
{
    const unsigned char *s = (const unsigned char *)piece->p;
    size_t at = d->pend.n;
    for (size_t i = 0; i < piece->n;) {
        uint32_t cp;
        int k = utf8_len(s + i, piece->n - i, &cp);
        int b = k ? bytelevel_byte(cp) : -1;
        if (b < 0) {   /* not a mapped piece: its own bytes */
            d->pend.n = at;
            buf8_put(&d->pend, piece->p, piece->n);
            break;
        }
        unsigned char c = (unsigned char)b;
        buf8_put(&d->pend, &c, 1);
        i += (size_t)k;
    }
    lossy(d, out, 0);
}

/* ---- the other decoders, a stage at a time ---- */

static void stage(TokDec *d, int k, const char *p, size_t n, FILE *out);

/* Rust's u8::from_str_radix(s, 16) on the two characters of <0xNN>. */
static int byte_token(const char *p, size_t n)
{
    if (n != 6 || memcmp(p, "<0x", 3) || p[5] != '>')
        return -1;
    int v = 0;
    for (int i = 3; i < 5; i++) {
        int c = p[i], h = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
                       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (h < 0 && !(i == 3 && c == '+'))
            return -1;
        v = h < 0 ? 0 : v * 16 + h;
    }
    return v;
}

/* A run of byte tokens ends: its text, or U+FFFD for each of its bytes. */
static void group_end(TokDec *d, int k, FILE *out)
{
    Buf8 *g = &d->group[k];
    if (!g->n)
        return;
    size_t n = g->n;
    g->n = 0;
    if (utf8_valid(g->p, n) == n) {
        stage(d, k + 1, g->p, n, out);
        return;
    }
    for (size_t i = 0; i < n; i++)
        stage(d, k + 1, fffd, 3, out);
}

static int fused_before(const Tokenizer *t, int k)
{
    for (int i = 0; i < k; i++)
        if (t->dec[i].kind == DEC_FUSE)
            return 1;
    return 0;
}

static void replace(TokDec *d, int k, const Dec *dc, const char *p, size_t n, FILE *out)
{
    Buf8 *w = &d->work[k];
    w->n = 0;
    for (size_t i = 0; i < n;) {
        if (dc->pat.n && n - i >= dc->pat.n && !memcmp(p + i, dc->pat.p, dc->pat.n)) {
            buf8_put(w, dc->rep.p, dc->rep.n);
            i += dc->pat.n;
        } else {
            buf8_put(w, p + i++, 1);
        }
    }
    stage(d, k + 1, w->p, w->n, out);
}

/* Strip: up to `start` leading content characters of each piece, or of
 * the whole text after Fuse (counted across pieces until text begins); an
 * empty content strips nothing. */
static void strip(TokDec *d, int k, const Dec *dc, const char *p, size_t n, FILE *out)
{
    int fused = fused_before(d->t, k), cut = 0;
    int *done = fused ? &d->cut : &cut;
    while (!(fused && d->stripped) && dc->content.n && *done < dc->start && n >= dc->content.n &&
           !memcmp(p, dc->content.p, dc->content.n)) {
        p += dc->content.n;
        n -= dc->content.n;
        (*done)++;
    }
    if (fused && (n || d->cut >= dc->start))
        d->stripped = 1;
    stage(d, k + 1, p, n, out);
}

static void metaspace(TokDec *d, int k, const Dec *dc, const char *p, size_t n, int idx, FILE *out)
{
    Buf8 *w = &d->work[k];
    w->n = 0;
    int first = (fused_before(d->t, k) || idx == 0) && dc->prepend != PREP_NEVER;
    for (size_t i = 0; i < n;) {
        if (n - i >= 3 && !memcmp(p + i, "\xE2\x96\x81", 3)) {
            if (!first)
                buf8_put(w, " ", 1);
            i += 3;
        } else {
            buf8_put(w, p + i++, 1);
        }
    }
    stage(d, k + 1, w->p, w->n, out);
}

static void stage(TokDec *d, int k, const char *p, size_t n, FILE *out)
{
    const Tokenizer *t = d->t;
    if (k == t->ndec) {
        if (n)
            fwrite(p, 1, n, out);
        return;
    }
    const Dec *dc = &t->dec[k];
    int idx = d->seen[k]++;
    switch (dc->kind) {
    case DEC_REPLACE:
        replace(d, k, dc, p, n, out);
        return;
    case DEC_BYTEFALLBACK: {
        int b = byte_token(p, n);
        if (b >= 0) {
            unsigned char c = (unsigned char)b;
            buf8_put(&d->group[k], &c, 1);
            return;
        }
        group_end(d, k, out);
        stage(d, k + 1, p, n, out);
        return;
    }
    case DEC_STRIP:
        strip(d, k, dc, p, n, out);
        return;
    case DEC_METASPACE:
        metaspace(d, k, dc, p, n, idx, out);
        return;
    default:   /* Fuse: the text goes on whole */
        stage(d, k + 1, p, n, out);
    }
}

int tok_dec_push(TokDec *d, int32_t id, FILE *out)
{
    const Tokenizer *t = d->t;
    if (id < 0 || id >= t->ntext || !t->text[id].p)
        return -1;
    if (t->special[id] && !d->special)
        return 0;
    const Str *piece = &t->text[id];
    if (t->ndec && t->dec[0].kind == DEC_BYTELEVEL)
        bytelevel(d, piece, out);
    else if (!t->ndec && d->count)   /* no decoder: tokenizers joins the pieces with spaces */
        fputc(' ', out), fwrite(piece->p, 1, piece->n, out);
    else
        stage(d, 0, piece->p, piece->n, out);
    d->count++;
    return 0;
}

void tok_dec_end(TokDec *d, FILE *out)
{
    if (d->t->ndec && d->t->dec[0].kind == DEC_BYTELEVEL)
        lossy(d, out, 1);
    for (int k = 0; k < d->t->ndec && k < MAXDEC; k++)
        group_end(d, k, out);
    d->count = 0;
    d->stripped = 0;
    d->cut = 0;
    d->pend.n = 0;
    memset(d->seen, 0, sizeof d->seen);
}
