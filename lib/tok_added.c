/* tok_added.c — added tokens: found in a text the way tokenizers' added
 * vocabulary finds them — leftmost, longest, not overlapping; a special
 * token left as text unless asked (then matching goes on after it); a
 * single_word token only between non-word characters; lstrip and rstrip
 * taking the whitespace before and after into the token. */
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "tok.h"

/* Unicode's White_Space (Rust's char::is_whitespace). */
static int is_white(uint32_t c)
{
    return (c >= 9 && c <= 13) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) ||
           c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

/* A word character as the regex \w of Rust's regex crate (which tokenizers
 * asks about the neighbours of a single_word token): Alphabetic (letters,
 * letter numbers, the circled and squared letters), marks, decimal digits,
 * connector punctuation and the joiners. */
static int is_word(uint32_t c)
{
    utf8proc_category_t k = utf8proc_category((utf8proc_int32_t)c);
    return (k >= UTF8PROC_CATEGORY_LU && k <= UTF8PROC_CATEGORY_ME) || k == UTF8PROC_CATEGORY_ND ||
           k == UTF8PROC_CATEGORY_NL || k == UTF8PROC_CATEGORY_PC || c == 0x200C || c == 0x200D ||
           (c >= 0x24B6 && c <= 0x24E9) || (c >= 0x1F130 && c <= 0x1F149) || (c >= 0x1F150 && c <= 0x1F169) ||
           (c >= 0x1F170 && c <= 0x1F189);
}

static int cmp_added(const void *x, const void *y)
{
    const Added *a = x, *b = y;
    if (a->normalized != b->normalized)
        return a->normalized - b->normalized;
    unsigned char ca = a->text.n ? (unsigned char)a->text.p[0] : 0, cb = b->text.n ? (unsigned char)b->text.p[0] : 0;
    if (ca != cb)
        return ca - cb;
    if (a->text.n != b->text.n)
        return a->text.n > b->text.n ? -1 : 1;
    return a->id - b->id;
}

void added_index(Tokenizer *t)
{
    if (t->nadded)   /* none: no array to sort */
        qsort(t->added, (size_t)t->nadded, sizeof *t->added, cmp_added);
    memset(t->alo, 0, sizeof t->alo);
    memset(t->ahi, 0, sizeof t->ahi);
    for (int i = t->nadded - 1; i >= 0; i--) {
        const Added *ad = &t->added[i];
        if (!ad->text.n)
            continue;
        int k = !!ad->normalized, b = (unsigned char)ad->text.p[0];
        t->alo[k][b] = i;
        if (!t->ahi[k][b])
            t->ahi[k][b] = i + 1;
    }
}

static void span_add(Spans *sp, size_t at, size_t n, int id)
{
    if (sp->n == sp->cap) {
        sp->cap = sp->cap ? sp->cap * 2 : 32;
        sp->v = realloc(sp->v, (size_t)sp->cap * sizeof *sp->v);
        if (!sp->v) {
            diag("out of memory");
            exit(EXIT_SYSTEM);
        }
    }
    sp->v[sp->n++] = (Span){at, n, id};
}

/* The codepoint that ends s[0..n) (n > 0). */
static uint32_t last_cp(const char *s, size_t n, size_t *at)
{
    size_t i = n - 1;
    while (i > 0 && ((unsigned char)s[i] & 0xC0) == 0x80)
        i--;
    uint32_t cp = 0xFFFD;
    utf8_len((const unsigned char *)s + i, n - i, &cp);
    *at = i;
    return cp;
}

static int word_before(const char *s, size_t at)
{
    size_t i;
    return at > 0 && is_word(last_cp(s, at, &i));
}

static int word_after(const char *s, size_t at, size_t n)
{
    uint32_t cp;
    return at < n && utf8_len((const unsigned char *)s + at, n - at, &cp) && is_word(cp);
}

/* The longest token of this kind at s[i..n), or NULL. */
static const Added *match_at(const Tokenizer *t, int k, const char *s, size_t i, size_t n)
{
    int b = (unsigned char)s[i];
    for (int j = t->alo[k][b]; j < t->ahi[k][b]; j++) {
        const Added *ad = &t->added[j];
        if (ad->text.n <= n - i && !memcmp(s + i, ad->text.p, ad->text.n))
            return ad;
    }
    return NULL;
}

void added_split(const Tokenizer *t, int normalized, int special, const char *s, size_t n, Spans *out)
{
    int k = !!normalized;
    size_t from = 0;   /* the text not yet in a span */
    out->n = 0;
    for (size_t i = 0; i < n;) {
        const Added *ad = t->ahi[k][(unsigned char)s[i]] ? match_at(t, k, s, i, n) : NULL;
        if (!ad) {
            i++;
            continue;
        }
        size_t start = i, stop = i + ad->text.n;
        i = stop;
        if (ad->special && !special)
            continue;
        if (ad->single_word && (word_before(s, start) || word_after(s, stop, n)))
            continue;
        while (ad->lstrip && start > from) {
            size_t at;
            if (!is_white(last_cp(s, start, &at)))
                break;
            start = at;
        }
        for (uint32_t cp; ad->rstrip && stop < n;) {
            int len = utf8_len((const unsigned char *)s + stop, n - stop, &cp);
            if (!len || !is_white(cp))
                break;
            stop += (size_t)len;
        }
        if (from < start)
            span_add(out, from, start - from, -1);
        span_add(out, start, stop - start, ad->id);
        from = stop;
    }
    if (from < n)
        span_add(out, from, n - from, -1);
}
