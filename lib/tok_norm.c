/* tok_norm.c — normalizers, applied in order to the text between added
 * tokens: Unicode normal forms (NFC, NFD, NFKC, NFKD) by utf8proc,
 * Replace (a literal or a regex pattern, every match, left to right) and
 * Prepend (before a non-empty text). */
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "tok.h"

static int ascii(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] >= 0x80)
            return 0;
    return 1;
}

static int normal_form(int kind, const char *s, size_t n, Buf8 *out)
{
    if (ascii(s, n)) {   /* every normal form of ASCII is itself */
        buf8_put(out, s, n);
        return 0;
    }
    int opt = UTF8PROC_STABLE;
    opt |= kind == NORM_NFC || kind == NORM_NFKC ? UTF8PROC_COMPOSE : UTF8PROC_DECOMPOSE;
    opt |= kind == NORM_NFKC || kind == NORM_NFKD ? UTF8PROC_COMPAT : 0;
    utf8proc_uint8_t *r = NULL;
    utf8proc_ssize_t len = utf8proc_map((const utf8proc_uint8_t *)s, (utf8proc_ssize_t)n, &r, (utf8proc_option_t)opt);
    if (len < 0) {
        diag("cannot normalize: %s", utf8proc_errmsg(len));
        return EXIT_SYSTEM;
    }
    buf8_put(out, r, (size_t)len);
    free(r);
    return 0;
}

/* The first occurrence of pat in s[0..n), or NULL (pat not empty). */
static const char *find(const char *s, size_t n, const Str *pat)
{
    for (const char *p = s, *end = s + n; (size_t)(end - p) >= pat->n;) {
        p = memchr(p, pat->p[0], (size_t)(end - p) - pat->n + 1);
        if (!p)
            return NULL;
        if (!memcmp(p, pat->p, pat->n))
            return p;
        p++;
    }
    return NULL;
}

static void replace_literal(const Norm *nm, const char *s, size_t n, Buf8 *out)
{
    size_t i = 0;
    while (i < n) {
        const char *hit = nm->pat.n ? find(s + i, n - i, &nm->pat) : NULL;
        if (!hit)
            break;
        buf8_put(out, s + i, (size_t)(hit - (s + i)));
        buf8_put(out, nm->rep.p, nm->rep.n);
        i = (size_t)(hit - s) + nm->pat.n;
    }
    buf8_put(out, s + i, n - i);
}

static int replace_regex(const Norm *nm, const char *s, size_t n, Buf8 *out)
{
    pcre2_match_data *md = pcre2_match_data_create(1, NULL);
    if (!md) {
        diag("out of memory");
        return EXIT_SYSTEM;
    }
    size_t i = 0;
    while (i < n) {
        int rc = pcre2_match(nm->re, (PCRE2_SPTR)s, n, i, PCRE2_NO_UTF_CHECK, md, NULL);
        if (rc == PCRE2_ERROR_NOMATCH)
            break;
        if (rc < 0)
            split_failed(rc);
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        if (ov[1] == ov[0]) {   /* an empty match replaces nothing: step over a character */
            uint32_t cp;
            int k = utf8_len((const unsigned char *)s + ov[0], n - ov[0], &cp);
            buf8_put(out, s + i, ov[0] - i + (size_t)(k ? k : 1));
            i = ov[0] + (size_t)(k ? k : 1);
            continue;
        }
        buf8_put(out, s + i, ov[0] - i);
        buf8_put(out, nm->rep.p, nm->rep.n);
        i = ov[1];
    }
    if (i < n)
        buf8_put(out, s + i, n - i);
    pcre2_match_data_free(md);
    return 0;
}

static int norm_one(const Norm *nm, const char *s, size_t n, Buf8 *out)
{
    out->n = 0;
    switch (nm->kind) {
    case NORM_REPLACE:
        if (nm->re)
            return replace_regex(nm, s, n, out);
        replace_literal(nm, s, n, out);
        return 0;
    case NORM_PREPEND:
        if (n)
            buf8_put(out, nm->rep.p, nm->rep.n);
        buf8_put(out, s, n);
        return 0;
    default:
        return normal_form(nm->kind, s, n, out);
    }
}

int norm_apply(const Norm *nm, int count, const char *s, size_t n, Buf8 *out)
{
    static Buf8 tmp;
    out->n = 0;
    buf8_put(out, s, n);
    for (int i = 0; i < count; i++) {
        int st = norm_one(&nm[i], out->p, out->n, &tmp);
        if (st)
            return st;
        Buf8 swap = *out;
        *out = tmp;
        tmp = swap;
    }
    return 0;
}
