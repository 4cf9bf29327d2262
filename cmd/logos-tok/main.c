/* logos-tok — text in, token ids out (encode), and back (decode), with a
 * model's own tokenizer: a Hugging Face tokenizer.json or a GGUF's
 * tokenizer.ggml.* keys, as logos-import leaves them beside spec.yaml. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "logos.h"

static const char usage[] =
    "usage: logos-tok encode [-l | -z] [--special] [--bare] [-v] [-o FILE] DIR [FILE]\n"
    "       logos-tok decode [-l | -z] [--special] [-v] [-o FILE] DIR [FILE]\n"
    "  DIR        a folder holding tokenizer.json or tokenizer.gguf (as logos-import\n"
    "             writes them), such a file, or a model's .gguf\n"
    "  FILE       the input (stdin when absent or -)\n"
    "  encode     UTF-8 text in, token ids out: the whole input is one text (less\n"
    "             one final newline), its ids on one line\n"
    "  decode     token ids in (as logos-run prints them), text out as each id arrives\n"
    "  -l         a line at a time: each line is a text (encode) or the ids of one (decode)\n"
    "  -z         as -l, with each text ended by a NUL byte instead of a newline\n"
    "  --special  special tokens written in the text are themselves (encode);\n"
    "             special tokens are written out (decode)\n"
    "  --bare     no tokens from the tokenizer's template (BOS) around the text\n"
    "  -v         each id with its piece, a line each\n"
    "  -o FILE    write to FILE (whole, or not at all) instead of stdout\n"
    "  -h         this help\n";

typedef struct Opts {
    int decode, lines, nul, special, bare, verbose;
    const char *out, *dir, *input;
} Opts;

static int usage_error(const char *fmt, const char *arg)
{
    diag(fmt, arg);
    fputs(usage, stderr);
    return EXIT_USAGE;
}

static int options(int argc, char **argv, Opts *o)
{
    if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        fputs(usage, stdout);
        exit(EXIT_OK);
    }
    if (argc < 2 || (strcmp(argv[1], "encode") && strcmp(argv[1], "decode")))
        return argc < 2 ? usage_error("%s", "say encode or decode") : usage_error("say encode or decode, not '%s'", argv[1]);
    o->decode = argv[1][0] == 'd';
    int i = 2;
    for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            exit(EXIT_OK);
        } else if (!strcmp(a, "-l") || !strcmp(a, "-z")) {
            o->lines = 1;
            o->nul = a[1] == 'z';
        } else if (!strcmp(a, "--special")) {
            o->special = 1;
        } else if (!strcmp(a, "--bare") && !o->decode) {
            o->bare = 1;
        } else if (!strcmp(a, "-v")) {
            o->verbose = 1;
        } else if (!strcmp(a, "-o") && i + 1 < argc) {
            o->out = argv[++i];
        } else {
            return usage_error(!strcmp(a, "-o") ? "%s needs a value" : "unknown option '%s'", a);
        }
    }
    if (argc - i < 1 || argc - i > 2)
        return usage_error("%s", argc - i < 1 ? "no tokenizer given: DIR is required" : "one input at a time");
    o->dir = argv[i];
    o->input = i + 1 < argc ? argv[i + 1] : "-";
    return 0;
}

/* ---- encode ---- */

/* The whole input (binary: NUL bytes are text, or -z's ends). */
static char *read_input(const char *path, size_t *len)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    char *buf = NULL;
    size_t cap = 0, n = 0, got;
    while (f) {
        if (n == cap) {
            cap = cap ? cap * 2 : 65536;
            char *nb = realloc(buf, cap);
            if (!nb) {
                diag("out of memory");
                exit(EXIT_SYSTEM);
            }
            buf = nb;
        }
        if ((got = fread(buf + n, 1, cap - n, f)) == 0)
            break;
        n += got;
    }
    if (!f || ferror(f)) {
        diag_file(strcmp(path, "-") ? path : "<stdin>", "cannot read: %s", strerror(errno));
        free(buf);
        buf = NULL;
    }
    if (f && f != stdin)
        fclose(f);
    *len = n;
    return buf;
}

/* Each text of the input must be UTF-8: 0, or EXIT_INPUT naming the first
 * bad byte's line and column. */
static int check_utf8(const char *name, const char *s, size_t n)
{
    size_t bad = utf8_valid(s, n);
    if (bad == n)
        return 0;
    int line = 1;
    size_t bol = 0;
    for (size_t i = 0; i < bad; i++)
        if (s[i] == '\n') {
            line++;
            bol = i + 1;
        }
    fprintf(stderr, "%s: %s:%d:%zu: invalid UTF-8 (byte 0x%02X): the text must be UTF-8\n", diag_tool, name, line,
            bad - bol + 1, (unsigned char)s[bad]);
    return EXIT_INPUT;
}

static void put_ids(FILE *f, Tokenizer *t, const TokIds *ids, const Opts *o)
{
    for (int i = 0; i < ids->n; i++) {
        if (o->verbose)
            tok_show(f, t, ids->v[i]);
        else
            fprintf(f, "%s%d", i ? " " : "", ids->v[i]);
    }
    if (!o->verbose || o->lines)
        fputc('\n', f);   /* ends the ids' line, or -l's record of -v lines */
}

static int encode(Tokenizer *t, const Opts *o, FILE *f)
{
    size_t n;
    char *text = read_input(o->input, &n);
    if (!text)
        return EXIT_INPUT;
    int st = check_utf8(strcmp(o->input, "-") ? o->input : "<stdin>", text, n);
    char end = o->nul ? '\0' : '\n';
    if (!o->lines && n && text[n - 1] == '\n')
        n--;
    TokIds ids = {0};
    for (size_t at = 0; !st && (at < n || (!o->lines && at == 0));) {
        size_t len = n - at;
        const char *e = o->lines ? memchr(text + at, end, n - at) : NULL;
        if (e)
            len = (size_t)(e - (text + at));
        ids.n = 0;
        tok_encode(t, text + at, len, o->special, o->bare, &ids);
        put_ids(f, t, &ids, o);
        at += len + (e != NULL);
        if (!o->lines)
            break;
    }
    free(ids.v);
    free(text);
    return st;
}

/* ---- decode ---- */

typedef struct In {
    FILE *f;
    const char *name;
    int line, col;        /* of the last character read */
} In;

static int next_char(In *in)
{
    int c = getc(in->f);
    if (c == '\n') {
        in->line++;
        in->col = 0;
    } else if (c != EOF) {
        in->col++;
    }
    return c;
}

static int is_sep(int c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ',';
}

/* One id's word: read from the stream up to a separator (kept in *after).
 * Its line and column; 0 at the end of the input. */
static int read_word(In *in, char *w, size_t cap, int *after, int *line)
{
    int c;
    while ((c = next_char(in)) != EOF && is_sep(c))
        if (c == '\n')
            *after = c;
    if (c == EOF)
        return 0;
    int col = in->col;
    *line = in->line;
    size_t n = 0;
    for (; c != EOF && !is_sep(c); c = next_char(in))
        if (n + 1 < cap)
            w[n++] = (char)c;
    w[n] = 0;
    *after = c;
    return col;
}

/* Decodes (or shows) one id written as w at line:col; 0 or EXIT_INPUT. */
static int one_id(Tokenizer *t, TokDec *d, const Opts *o, FILE *f, const char *name, int line, int col, const char *w)
{
    long v;
    if (parse_long(w, 0, 2147483647L, &v)) {
        fprintf(stderr, "%s: %s:%d:%d: '%s' is not a token id\n", diag_tool, name, line, col, w);
        return EXIT_INPUT;
    }
    if (v < tok_vocab(t) && o->verbose && tok_piece(t, (int)v, &(size_t){0})) {
        tok_show(f, t, (int)v);
        return 0;
    }
    if (v >= tok_vocab(t) || o->verbose || tok_dec_push(d, (int32_t)v, f)) {
        fprintf(stderr, "%s: %s:%d:%d: id %ld is past the vocabulary (%d tokens)\n", diag_tool, name, line, col, v,
                tok_vocab(t));
        return EXIT_INPUT;
    }
    return 0;
}

/* Ends a text: what the decoder held, then -l's newline or -z's NUL. */
static void end_text(TokDec *d, FILE *f, const Opts *o)
{
    if (!o->verbose)
        tok_dec_end(d, f);
    if (o->lines)
        fputc(o->nul ? '\0' : '\n', f);
    fflush(f);
}

/* -l, -z: each line holds the ids of one text. */
static int decode_lines(Tokenizer *t, TokDec *d, const Opts *o, FILE *f, In *in)
{
    char *l = NULL;
    size_t cap = 0;
    int st = 0;
    for (ssize_t n; !st && (n = getline(&l, &cap, in->f)) > 0;) {
        in->line++;
        for (char *p = l; !st && *p;) {
            size_t sep = strspn(p, " \t\r\n,"), len = strcspn(p + sep, " \t\r\n,");
            if (!len)
                break;
            char save = p[sep + len];
            p[sep + len] = 0;
            st = one_id(t, d, o, f, in->name, in->line, (int)(p + sep - l) + 1, p + sep);
            p[sep + len] = save;
            p += sep + len;
        }
        if (!st)
            end_text(d, f, o);
    }
    free(l);
    return st;
}

/* The whole input is one text: each id decoded as soon as it is read. */
static int decode_stream(Tokenizer *t, TokDec *d, const Opts *o, FILE *f, In *in)
{
    char w[64];
    int st = 0, after = 0, line = 0;
    for (int col; !st && (col = read_word(in, w, sizeof w, &after, &line));) {
        st = one_id(t, d, o, f, in->name, line, col, w);
        fflush(f);
    }
    if (!st)
        end_text(d, f, o);
    return st;
}

static int decode(Tokenizer *t, const Opts *o, FILE *f)
{
    int std = !strcmp(o->input, "-");
    In in = {std ? stdin : fopen(o->input, "rb"), std ? "<stdin>" : o->input, o->lines ? 0 : 1, 0};
    if (!in.f) {
        diag_file(o->input, "cannot read: %s", strerror(errno));
        return EXIT_INPUT;
    }
    TokDec *d = tok_dec_new(t, o->special);
    int st = o->lines ? decode_lines(t, d, o, f, &in) : decode_stream(t, d, o, f, &in);
    if (!st && ferror(in.f)) {
        diag_file(in.name, "cannot read: %s", strerror(errno));
        st = EXIT_SYSTEM;
    }
    if (!std)
        fclose(in.f);
    tok_dec_free(d);
    return st;
}

int main(int argc, char **argv)
{
    diag_tool = "logos-tok";
    Opts o = {0};
    int st = options(argc, argv, &o);
    if (st)
        return st;
    Arena *a = arena_new();
    Tokenizer *t = tok_load(a, o.dir);
    OutFile out = {0};
    st = t ? outfile_open(&out, o.out, stdout) : EXIT_INPUT;
    if (!st)
        st = o.decode ? decode(t, &o, out.f) : encode(t, &o, out.f);
    if (t)
        st = outfile_close(&out, st);
    tok_free(t);
    arena_free(a);
    return st;
}
