/* tok_split.c — pre-tokenizers: each cuts every piece of text into
 * smaller ones, as tokenizers' do. Split runs a regex (PCRE2 with Unicode
 * properties and JIT, the pattern as the file writes it) or a literal over
 * a piece and keeps matches and the text between them by its behaviour
 * (removed, isolated, merged with the previous or next piece, contiguous),
 * inverted when asked; ByteLevel adds a prefix space when asked and splits
 * by GPT-2's pattern when use_regex is set (the mapping of bytes to
 * characters is the model's); Metaspace puts its replacement (▁) for
 * spaces, prepends one (always, on the text's first piece, or never) and
 * may split before each. Empty pieces are dropped. */
#include <stdlib.h>
#include <string.h>

#include "tok.h"

const char split_gpt2[] = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

/* Oniguruma's \s is Unicode's White_Space; PCRE2's also takes U+180E. */
static const char white_space[] =
    "\\t-\\r\\x{20}\\x{85}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}";

/* Oniguruma's \p{Han} is the script; PCRE2's is the script's extensions
 * (it takes 〚, whose script is Common): \p{sc:Han} is the script. The
 * length of the escape at pat (\p{NAME} or \P{NAME}) put into b, or 0
 * when NAME is no script. */
static size_t script_escape(const char *pat, size_t n, Buf8 *b)
{
    const char *end = n > 3 && pat[2] == '{' ? memchr(pat + 3, '}', n - 3) : NULL;
    if (!end || end - pat > 64 || memchr(pat + 3, ':', (size_t)(end - pat - 3)) || pat[3] == '^')
        return 0;
    char probe[80];
    int k = snprintf(probe, sizeof probe, "\\p{sc:%.*s}", (int)(end - pat - 3), pat + 3);
    int err;
    PCRE2_SIZE off;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)probe, (size_t)k, PCRE2_UTF | PCRE2_UCP, &err, &off, NULL);
    if (!re)
        return 0;
    pcre2_code_free(re);
    probe[1] = pat[1];   /* p or P */
    buf8_put(b, probe, (size_t)k);
    return (size_t)(end - pat + 1);
}

/* The pattern with \s (and \S outside a class) spelled as White_Space,
 * and scripts as scripts. */
static char *onig_to_pcre(const char *pat, size_t n, size_t *len)
{
    Buf8 b = {0};
    int in_class = 0;
    for (size_t i = 0; i < n; i++) {
        char c = pat[i];
        size_t sc;
        if (c == '\\' && i + 1 < n && (pat[i + 1] == 'p' || pat[i + 1] == 'P') &&
            (sc = script_escape(pat + i, n - i, &b))) {
            i += sc - 1;
            continue;
        }
        if (c == '\\' && i + 1 < n) {
            char e = pat[++i];
            if (e == 's') {
                if (!in_class)
                    buf8_put(&b, "[", 1);
                buf8_put(&b, white_space, sizeof white_space - 1);
                if (!in_class)
                    buf8_put(&b, "]", 1);
            } else if (e == 'S' && !in_class) {
                buf8_put(&b, "[^", 2);
                buf8_put(&b, white_space, sizeof white_space - 1);
                buf8_put(&b, "]", 1);
            } else {
                buf8_put(&b, pat + i - 1, 2);
            }
            continue;
        }
        if (c == '[' && !in_class) {
            in_class = 1;
            buf8_put(&b, pat + i, 1);
            if (i + 1 < n && pat[i + 1] == '^')
                buf8_put(&b, pat + ++i, 1);
            if (i + 1 < n && pat[i + 1] == ']')   /* a leading ] is literal */
                buf8_put(&b, pat + ++i, 1);
            continue;
        }
        if (c == ']' && in_class)
            in_class = 0;
        buf8_put(&b, &c, 1);
    }
    buf8_put(&b, "", 1);
    *len = b.n - 1;
    return b.p;
}

pcre2_code *split_compile(const char *pat, size_t n, int literal, const char **why)
{
    static char msg[256];
    size_t len = n;
    char *p = literal ? NULL : onig_to_pcre(pat, n, &len);
    int err;
    PCRE2_SIZE off;
    uint32_t opt = PCRE2_UTF | (literal ? PCRE2_LITERAL : PCRE2_UCP | PCRE2_MULTILINE);
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)(literal ? pat : p), len, opt, &err, &off, NULL);
    free(p);
    if (!re) {
        pcre2_get_error_message(err, (PCRE2_UCHAR *)msg, sizeof msg);
        *why = msg;
        return NULL;
    }
    pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);   /* without JIT it still matches, slower */
    return re;
}

void pieces_add(Pieces *ps, const char *p, size_t n, int first)
{
    if (!n)
        return;
    if (ps->n == ps->cap) {
        ps->cap = ps->cap ? ps->cap * 2 : 64;
        ps->v = realloc(ps->v, (size_t)ps->cap * sizeof *ps->v);
        if (!ps->v) {
            diag("out of memory");
            exit(EXIT_SYSTEM);
        }
    }
    size_t at = ps->text.n;
    buf8_put(&ps->text, p, n);
    ps->v[ps->n++] = (Piece){at, n, first};
}

void pieces_free(Pieces *ps)
{
    free(ps->v);
    buf8_free(&ps->text);
    *ps = (Pieces){0};
}

/* The matches of re in s: (start, end, is_match) triples covering s. */
typedef struct Cut {
    size_t a, b;
    int match;
} Cut;
static Cut *cuts;
static int ccuts;

static int add_cut(int n, size_t a, size_t b, int match)
{
    if (n == ccuts) {
        ccuts = ccuts ? ccuts * 2 : 256;
        cuts = realloc(cuts, (size_t)ccuts * sizeof *cuts);
        if (!cuts) {
            diag("out of memory");
            exit(EXIT_SYSTEM);
        }
    }
    cuts[n] = (Cut){a, b, match};
    return n + 1;
}

_Noreturn void split_failed(int rc)
{
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(rc, msg, sizeof msg);
    diag("a split pattern gave up on the text: %s", (const char *)msg);
    exit(EXIT_SYSTEM);
}

static int find_cuts(const pcre2_code *re, const char *s, size_t n, pcre2_match_data *md, int invert)
{
    int nc = 0;
    size_t prev = 0, from = 0;
    while (from <= n) {
        int rc = pcre2_match(re, (PCRE2_SPTR)s, n, from, PCRE2_NO_UTF_CHECK, md, NULL);
        if (rc == PCRE2_ERROR_NOMATCH)
            break;
        if (rc < 0)
            split_failed(rc);
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        if (prev != ov[0])
            nc = add_cut(nc, prev, ov[0], invert);
        nc = add_cut(nc, ov[0], ov[1], !invert);
        prev = ov[1];
        from = ov[1];
        if (ov[1] == ov[0]) {   /* an empty match: go on after the next character */
            uint32_t cp;
            int k = from < n ? utf8_len((const unsigned char *)s + from, n - from, &cp) : 1;
            from += (size_t)(k ? k : 1);
        }
    }
    if (prev != n)
        nc = add_cut(nc, prev, n, invert);
    return nc;
}

/* Folds the cuts by the behaviour (tokenizers' SplitDelimiterBehavior). */
static int fold_cuts(int nc, int behavior)
{
    int out = 0, prev = 0;
    if (behavior == B_NEXT) {   /* from the end: a match joins the piece after it */
        int k = nc;
        for (int i = nc - 1; i >= 0; i--) {
            Cut c = cuts[i];
            if (c.match && !prev && k < nc)
                cuts[k].a = c.a;
            else
                cuts[--k] = (Cut){c.a, c.b, 0};
            prev = c.match;
        }
        memmove(cuts, cuts + k, (size_t)(nc - k) * sizeof *cuts);
        return nc - k;
    }
    for (int i = 0; i < nc; i++) {
        Cut c = cuts[i];
        int join = behavior == B_PREVIOUS ? c.match && !prev : behavior == B_CONTIGUOUS ? c.match == prev : 0;
        prev = c.match;
        if (behavior == B_REMOVED && c.match)
            continue;
        if (join && out)
            cuts[out - 1].b = c.b;
        else
            cuts[out++] = (Cut){c.a, c.b, 0};
    }
    return out;
}

static void split_piece(const Pre *p, Pieces *dst, const char *s, const Piece *pc, pcre2_match_data *md)
{
    int nc = find_cuts(p->re, s, pc->n, md, p->invert);
    int behavior = p->kind == PRE_SPLIT ? p->behavior : B_ISOLATED;
    nc = fold_cuts(nc, behavior);
    for (int i = 0; i < nc; i++)
        pieces_add(dst, s + cuts[i].a, cuts[i].b - cuts[i].a, pc->first && cuts[i].a == 0);
}

/* Metaspace: spaces to the replacement, the prefix, then the pieces. */
static void metaspace(const Pre *p, Pieces *dst, const char *s, const Piece *pc)
{
    static Buf8 w;
    w.n = 0;
    int starts = pc->n >= p->repl.n && !memcmp(s, p->repl.p, p->repl.n);
    if ((p->prepend == PREP_ALWAYS || (p->prepend == PREP_FIRST && pc->first)) && !starts && !(s[0] == ' '))
        buf8_put(&w, p->repl.p, p->repl.n);
    for (size_t i = 0; i < pc->n; i++) {
        if (s[i] == ' ')
            buf8_put(&w, p->repl.p, p->repl.n);
        else
            buf8_put(&w, s + i, 1);
    }
    if (!p->split) {
        pieces_add(dst, w.p, w.n, pc->first);
        return;
    }
    size_t from = 0;
    for (size_t i = 1; i <= w.n; i++) {
        int cut = i == w.n || (w.n - i >= p->repl.n && !memcmp(w.p + i, p->repl.p, p->repl.n));
        if (cut) {
            pieces_add(dst, w.p + from, i - from, pc->first && from == 0);
            from = i;
        }
    }
}

static void pre_one(const Pre *p, Pieces *dst, const char *s, const Piece *pc, pcre2_match_data *md)
{
    if (p->kind == PRE_METASPACE) {
        metaspace(p, dst, s, pc);
    } else if (p->kind == PRE_SPLIT) {
        split_piece(p, dst, s, pc, md);
    } else if (p->prefix_space && s[0] != ' ') {
        static Buf8 w;
        w.n = 0;
        buf8_put(&w, " ", 1);
        buf8_put(&w, s, pc->n);
        Piece q = {0, w.n, pc->first};
        if (p->re)
            split_piece(p, dst, w.p, &q, md);
        else
            pieces_add(dst, w.p, w.n, pc->first);
    } else if (p->re) {
        split_piece(p, dst, s, pc, md);
    } else {
        pieces_add(dst, s, pc->n, pc->first);
    }
}

int pre_apply(const Pre *pre, int count, Pieces *ps, pcre2_match_data *md)
{
    static Pieces tmp;
    for (int i = 0; i < count; i++) {
        tmp.n = 0;
        tmp.text.n = 0;
        for (int k = 0; k < ps->n; k++)
            pre_one(&pre[i], &tmp, ps->text.p + ps->v[k].at, &ps->v[k], md);
        Pieces swap = *ps;
        *ps = tmp;
        tmp = swap;
    }
    return 0;
}
