/* opt.c — the command line, one parser for every tool: a tool's options are
 * a table of rows (logos.h), each saying where its value goes; GNU order
 * (options and operands mixed), `--name=value`, `-nVALUE`, bundled flags,
 * `--`; -h/--help and --version are every tool's. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "logos.h"

enum { COL_MIN = 12 };   /* the narrowest column of names in the help */

/* The table ends with a row of zeros. */
static int opt_end(const Opt *r)
{
    return !r->s && !r->l && !r->arg;
}

/* A row's names as the help shows them: "-n, --steps N". */
static int row_names(const Opt *r, char *buf, size_t n)
{
    const char *sep = r->s && r->l ? ", " : "";
    char s[3] = {'-', r->s, 0};
    return snprintf(buf, n, "%s%s%s%s%s%s", r->s ? s : "", sep, r->l ? "--" : "", r->l ? r->l : "",
                    r->arg && (r->s || r->l) ? " " : "", r->arg ? r->arg : "");
}

/* "  NAMES   help", the help's later lines under its first. */
static void help_row(FILE *f, const char *names, const char *help, int col)
{
    fprintf(f, "  %-*s  ", col, names);
    for (const char *p = help; *p; p++) {
        fputc(*p, f);
        if (*p == '\n' && p[1])
            fprintf(f, "  %-*s  ", col, "");
    }
    if (!*help || help[strlen(help) - 1] != '\n')
        fputc('\n', f);
}

void opt_usage(const Cli *c, FILE *f)
{
    char buf[128];
    int col = COL_MIN;
    for (const Opt *r = c->opts; !opt_end(r); r++) {
        int n = row_names(r, buf, sizeof buf);
        if (n > col)
            col = n;
    }
    fputs(c->usage, f);
    for (const Opt *r = c->opts; !opt_end(r); r++) {
        if (!r->help)
            continue;
        row_names(r, buf, sizeof buf);
        help_row(f, buf, r->help, col);
    }
    help_row(f, "-h, --help", "this help", col);
    help_row(f, "--version", "the tool's version and the LOGOS language version", col);
}

/* The number of words in a space-separated list. */
static int word_count(const char *words)
{
    int n = 0;
    for (const char *p = words; *p; p += strcspn(p, " "), p += *p == ' ')
        n++;
    return n;
}

/* The words of a list ("f32 q8") for a message: "f32 or q8". */
static const char *word_list(const char *words, char *buf, size_t n)
{
    int count = word_count(words), i = 0;
    size_t k = 0;
    buf[0] = 0;
    for (const char *p = words; *p && k < n; i++) {
        size_t len = strcspn(p, " ");
        const char *sep = i == 0 ? "" : i + 1 == count ? " or " : ", ";
        k += (size_t)snprintf(buf + k, n - k, "%s%.*s", sep, (int)len, p);
        p += len + (p[len] == ' ');
    }
    return buf;
}

/* The index of value among words, or -1. */
static int word_index(const char *words, const char *value)
{
    int i = 0;
    for (const char *p = words; *p; i++) {
        size_t len = strcspn(p, " ");
        if (strlen(value) == len && !strncmp(p, value, len))
            return i;
        p += len + (p[len] == ' ');
    }
    return -1;
}

static int set_long(const Opt *r, const char *flag, const char *v, void *field)
{
    long x;
    if (parse_long(v, (long)r->lo, (long)r->hi, &x) == 0) {
        *(long *)field = x;
        return 0;
    }
    diag("%s takes %s from %ld to %ld, not '%s'", flag, r->what ? r->what : "a whole number", (long)r->lo,
         (long)r->hi, v);
    return EXIT_USAGE;
}

static int set_num(const Opt *r, const char *flag, const char *v, void *field)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (*v && !*end && !errno && x >= r->lo && x <= r->hi) {
        *(double *)field = x;
        return 0;
    }
    diag("%s takes %s from %.10g to %.10g, not '%s'", flag, r->what ? r->what : "a number", r->lo, r->hi, v);
    return EXIT_USAGE;
}

/* Stores an option's value (v is NULL for a flag); 0 or an exit status. */
static int set(const Opt *r, const char *flag, const char *v, void *opts)
{
    void *field = (char *)opts + r->at;
    char buf[256];
    int k;
    switch (r->kind) {
    case OPT_FLAG:
        *(int *)field = r->lo ? (int)r->lo : 1;
        return 0;
    case OPT_STR:
        *(const char **)field = v;
        return 0;
    case OPT_LONG:
        return set_long(r, flag, v, field);
    case OPT_NUM:
        return set_num(r, flag, v, field);
    case OPT_WORD:
        if ((k = word_index(r->what, v)) < 0) {
            diag("%s is %s, not '%s'", flag, word_list(r->what, buf, sizeof buf), v);
            return EXIT_USAGE;
        }
        *(int *)field = k;
        return 0;
    case OPT_CALL:
        return r->fn(field, flag, v);
    }
    BUG("an option row of no kind");
}

static const Opt *find_long(const Cli *c, const char *name, size_t len)
{
    for (const Opt *r = c->opts; !opt_end(r); r++)
        if (r->l && strlen(r->l) == len && !strncmp(r->l, name, len))
            return r;
    return NULL;
}

static const Opt *find_short(const Cli *c, char ch)
{
    for (const Opt *r = c->opts; !opt_end(r); r++)
        if (r->s && r->s == ch)
            return r;
    return NULL;
}

static int unknown(const char *flag)
{
    diag("unknown option '%s' (try --help)", flag);
    return EXIT_USAGE;
}

static int version(void)
{
    printf("%s %s (LOGOS language %d)\n", diag_tool, LOGOS_VERSION, LOGOS_LANG);
    return OPT_DONE;
}

static int help(const Cli *c)
{
    opt_usage(c, stdout);
    return OPT_DONE;
}

/* --name, --name=value or --name value at argv[*i]. */
static int long_opt(const Cli *c, int argc, char **argv, int *i, void *opts)
{
    const char *name = argv[*i] + 2, *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    char flag[96];
    snprintf(flag, sizeof flag, "--%.*s", (int)len, name);
    const Opt *r = find_long(c, name, len);
    int builtin = !r && (!strcmp(flag, "--help") || !strcmp(flag, "--version"));
    if (!r && !builtin)
        return unknown(flag);
    if ((builtin || r->kind == OPT_FLAG) && eq) {
        diag("%s takes no value", flag);
        return EXIT_USAGE;
    }
    if (builtin && flag[2] == 'h')
        return help(c);
    if (builtin)
        return version();
    if (r->kind == OPT_FLAG)
        return set(r, flag, NULL, opts);
    const char *v = eq ? eq + 1 : *i + 1 < argc ? argv[++*i] : NULL;
    if (!v) {
        diag("%s needs a value", flag);
        return EXIT_USAGE;
    }
    return set(r, flag, v, opts);
}

/* -a, bundled -qv, -nVALUE or -n VALUE at argv[*i]. */
static int short_opts(const Cli *c, int argc, char **argv, int *i, void *opts)
{
    const char *a = argv[*i];
    for (int j = 1; a[j]; j++) {
        char flag[3] = {'-', a[j], 0};
        if (a[j] == 'h')
            return help(c);
        const Opt *r = find_short(c, a[j]);
        if (!r)
            return unknown(flag);
        if (r->kind == OPT_FLAG) {
            int st = set(r, flag, NULL, opts);
            if (st)
                return st;
            continue;
        }
        const char *v = a[j + 1] ? a + j + 1 : *i + 1 < argc ? argv[++*i] : NULL;
        if (!v) {
            diag("%s needs a value", flag);
            return EXIT_USAGE;
        }
        return set(r, flag, v, opts);
    }
    return 0;
}

/* An operand: not an option, `-` (stdin), or a negative number (no option
 * is a digit). */
static int is_operand(const char *a)
{
    return a[0] != '-' || !a[1] || (a[1] >= '0' && a[1] <= '9');
}

int opt_parse(const Cli *c, void *opts, int argc, char **argv, int *nargs)
{
    int n = 0, only = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int st = 0;
        if (only || is_operand(a))
            argv[1 + n++] = argv[i];
        else if (!strcmp(a, "--"))
            only = 1;
        else if (a[1] == '-')
            st = long_opt(c, argc, argv, &i, opts);
        else
            st = short_opts(c, argc, argv, &i, opts);
        if (st)
            return st;
    }
    *nargs = n;
    return 0;
}
