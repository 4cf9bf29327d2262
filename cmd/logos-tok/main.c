/* logos-tok — text in, token ids out (encode), and back (decode), with a
 * model's own tokenizer: a Hugging Face tokenizer.json or a GGUF's
 * tokenizer.ggml.* keys, as logos-import leaves them beside spec.yaml. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "logos.h"

enum { WHOLE, LINES, NULS };   /* what ends a text: the input's end, -l's newline, -z's NUL */

typedef struct Opts {
    int ends, special, bare, verbose;
    int decode, lines, nul;   /* from the operands and ends */
    const char *out, *dir, *input;
} Opts;

static const Opt opts[] = {
    {.arg = "encode", .help = "UTF-8 text in, token ids out: the whole input is one text (less\n"
                              "one final newline), its ids on one line"},
    {.arg = "decode", .help = "token ids in (as logos-run prints them), text out as each id arrives"},
    {.arg = "DIR", .help = "a folder holding tokenizer.json or tokenizer.gguf (as logos-import\n"
                           "writes them), such a file, or a model's .gguf"},
    {.arg = "FILE", .help = "the input (stdin when absent or -)"},
    {.s = 'l', .kind = OPT_FLAG, .at = offsetof(Opts, ends), .lo = LINES,
     .help = "a line at a time: each line is a text (encode) or the ids of one (decode)"},
    {.s = 'z', .kind = OPT_FLAG, .at = offsetof(Opts, ends), .lo = NULS,
     .help = "as -l, with each text ended by a NUL byte instead of a newline"},
    {.l = "special", .kind = OPT_FLAG, .at = offsetof(Opts, special),
     .help = "special tokens written in the text are themselves (encode);\n"
             "special tokens are written out (decode)"},
    {.l = "bare", .kind = OPT_FLAG, .at = offsetof(Opts, bare),
     .help = "no tokens from the tokenizer's template (BOS) around the text (encode)"},
    {.s = 'v', .kind = OPT_FLAG, .at = offsetof(Opts, verbose), .help = "each id with its piece, a line each"},
    {.s = 'o', .kind = OPT_STR, .at = offsetof(Opts, out), .arg = "FILE",
     .help = "write to FILE (whole, or not at all) instead of stdout"},
    {0},
};
static const Cli cli = {"usage: logos-tok encode [-l | -z] [--special] [--bare] [-v] [-o FILE] DIR [FILE]\n"
                        "       logos-tok decode [-l | -z] [--special] [-v] [-o FILE] DIR [FILE]\n",
                        opts};

/* encode|decode DIR [FILE]: the n operands; 0 or EXIT_USAGE. */
static int operands(int n, char **args, Opts *o)
{
    if (n < 1) {
        diag("say encode or decode");
        opt_usage(&cli, stderr);
        return EXIT_USAGE;
    }
    if (strcmp(args[0], "encode") && strcmp(args[0], "decode")) {
        diag("say encode or decode, not '%s'", args[0]);
        return EXIT_USAGE;
    }
    o->decode = args[0][0] == 'd';
    if (o->decode && o->bare) {
        diag("--bare is for encode: decode has no template to leave out");
        return EXIT_USAGE;
    }
    if (n < 2 || n > 3) {
        diag("%s", n < 2 ? "no tokenizer given: DIR is required" : "one input at a time");
        return EXIT_USAGE;
    }
    o->dir = args[1];
    o->input = n > 2 ? args[2] : "-";
    o->lines = o->ends != WHOLE;
    o->nul = o->ends == NULS;
    return 0;
}

/* ---- encode ---- */

/* The whole input; NULL after a message. */
static char *read_input(const char *path, int nuls, size_t *len)
{
    int std = !strcmp(path, "-");
    FILE *f = std ? stdin : fopen(path, "rb");
    if (!f) {
        diag_file(path, "cannot read: %s", strerror(errno));
        return NULL;
    }
    char *buf = input_all(f, std ? "<stdin>" : path, nuls, len);
    if (!std)
        fclose(f);
    return buf;
}

/* Each text of the input must be UTF-8: 0, or EXIT_INPUT naming the first
 * bad byte's line and column. */
static int check_utf8(const char *name, const char *s, size_t n)
{
    size_t bad = utf8_valid(s, n);
    if (bad == n)
        return 0;
    int line, col;
    text_locate(s, bad, &line, &col);
    diag("%s:%d:%d: invalid UTF-8 (byte 0x%02X): the text must be UTF-8", name, line, col, (unsigned char)s[bad]);
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
    char *text = read_input(o->input, o->nul, &n);
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
    int nul;              /* a NUL byte was read (and refused): the input ends there */
} In;

/* The next character; EOF at the end, and at a NUL byte after its message. */
static int next_char(In *in)
{
    int c = getc(in->f);
    if (c == '\n') {
        in->line++;
        in->col = 0;
    } else if (c != EOF) {
        in->col++;
    }
    if (c == 0) {
        diag_nul(in->name, in->line, in->col);
        in->nul = EXIT_INPUT;
        return EOF;
    }
    return c;
}

static int is_sep(int c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ',';
}

/* Skips separators; the first character that is not one, or with -l the
 * newline that ends a text. */
static int skip_seps(In *in, int lines)
{
    int c;
    while ((c = next_char(in)) != EOF && is_sep(c) && !(lines && c == '\n'))
        ;
    return c;
}

/* One id's word, from its first character c up to a separator, into w (cut
 * at cap); the character after it. */
static int read_word(In *in, int c, char *w, size_t cap)
{
    size_t n = 0;
    for (; c != EOF && !is_sep(c); c = next_char(in))
        if (n + 1 < cap)
            w[n++] = (char)c;
    w[n] = 0;
    return c;
}

/* Decodes (or shows) one id written as w at line:col; 0 or EXIT_INPUT. */
static int one_id(Tokenizer *t, TokDec *d, const Opts *o, FILE *f, const In *in, int line, int col, const char *w)
{
    long v;
    if (parse_long(w, 0, 2147483647L, &v)) {
        diag("%s:%d:%d: '%s' is not a token id", in->name, line, col, w);
        return EXIT_INPUT;
    }
    if (v < tok_vocab(t) && o->verbose && tok_piece(t, (int)v, &(size_t){0})) {
        tok_show(f, t, (int)v);
        return 0;
    }
    if (v >= tok_vocab(t)) {
        diag("%s:%d:%d: id %ld is past the vocabulary (%d tokens)", in->name, line, col, v, tok_vocab(t));
        return EXIT_INPUT;
    }
    if (o->verbose || tok_dec_push(d, (int32_t)v, f)) {   /* a gap among the ids */
        diag("%s:%d:%d: id %ld is not in the vocabulary (it has no piece)", in->name, line, col, v);
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

/* Each id decoded as soon as it is read; the whole input is one text, or
 * with -l, -z each line holds the ids of one. */
static int decode_ids(Tokenizer *t, TokDec *d, const Opts *o, FILE *f, In *in)
{
    char w[64];
    int st = 0;
    for (int c; !st && (c = skip_seps(in, o->lines)) != EOF;) {
        int line = in->line, col = in->col;
        if (c != '\n') {
            c = read_word(in, c, w, sizeof w);
            if (in->nul)
                break;
            st = one_id(t, d, o, f, in, line, col, w);
            fflush(f);
        }
        if (!st && o->lines && c == '\n')
            end_text(d, f, o);
    }
    if (in->nul)
        return in->nul;
    if (!st && (!o->lines || in->col > 0))   /* the last line may lack its newline */
        end_text(d, f, o);
    return st;
}

static int decode(Tokenizer *t, const Opts *o, FILE *f)
{
    int std = !strcmp(o->input, "-");
    In in = {std ? stdin : fopen(o->input, "rb"), std ? "<stdin>" : o->input, 1, 0, 0};
    if (!in.f) {
        diag_file(o->input, "cannot read: %s", strerror(errno));
        return EXIT_INPUT;
    }
    TokDec *d = tok_dec_new(t, o->special);
    int st = decode_ids(t, d, o, f, &in);
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
    int n, st = opt_parse(&cli, &o, argc, argv, &n);
    if (st)
        return st == OPT_DONE ? stdout_done(EXIT_OK) : st;
    if ((st = operands(n, argv + 1, &o)))
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
