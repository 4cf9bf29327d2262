/* diag.c — diagnostics (`tool: file:line:col: message`, the source line and a
 * caret), the broken-invariant tier, and reading whole input files. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "logos.h"

const char *diag_tool = "logos";
int diag_errors;
int diag_progress;

enum { SHOW_MAX = 160 };   /* longest part of a source line shown */

/* Print line `line` of s with a caret under column col (1-based); a long line
 * is shown as a window around the column, "..." where it was cut. */
static void show_line(const Src *s, int line, int col)
{
    const char *p = s->text, *end = s->text + s->len;
    for (int l = 1; l < line && p < end; p++)
        if (*p == '\n')
            l++;
    const char *q = p;
    while (q < end && *q != '\n')
        q++;
    size_t len = (size_t)(q - p), c = col > 0 ? (size_t)col - 1 : 0;
    if (c > len)
        c = len;
    size_t from = c > SHOW_MAX / 2 ? c - SHOW_MAX / 2 : 0;
    size_t n = len - from > SHOW_MAX ? SHOW_MAX : len - from;
    fputs(from ? "  ..." : "  ", stderr);
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)p[from + i];
        fputc(ch == '\t' || (ch >= 32 && ch != 127) ? ch : '?', stderr);
    }
    fputs(from + n < len ? "...\n  " : "\n  ", stderr);
    if (from)
        fputs("   ", stderr);
    for (size_t i = from; i < c; i++)
        fputc(p[i] == '\t' ? '\t' : ' ', stderr);
    fputs("^\n", stderr);
}

void diag_at(const Src *s, int line, int col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: %s:%d:%d: ", diag_tool, s->name, line, col);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    if (line > 0)
        show_line(s, line, col);
    diag_errors++;
}

void diag_file(const char *file, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: %s: ", diag_tool, file);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    diag_errors++;
}

void diag(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", diag_tool);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

_Noreturn void bug_at(const char *file, int line, const char *msg)
{
    fprintf(stderr, "%s: internal error at %s:%d: %s\n", diag_tool, file, line, msg);
    abort();
}

void text_locate(const char *t, size_t off, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < off; i++) {
        if (t[i] == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

Src *src_from_string(Arena *a, const char *name, const char *text)
{
    Src *s = arena_alloc(a, sizeof *s);
    s->name = arena_strdup(a, name);
    s->len = strlen(text);
    s->text = arena_strndup(a, text, s->len);
    return s;
}

/* Why reading an input stopped before its end. */
enum { READ_END, READ_NUL, READ_LARGE, READ_ERROR };

/* Reads f whole into a malloc'd, NUL-terminated buffer, stopping at the
 * first NUL byte (*len is its offset; where nuls is 0) or past
 * LOGOS_MAXINPUT bytes, so that /dev/zero or an endless pipe is refused at
 * once; READ_* in *why. */
static char *read_all(FILE *f, int nuls, size_t *len, int *why, int *err)
{
    size_t cap = 1 << 16, n;
    char *buf = malloc(cap);
    *len = 0;
    *why = READ_END;
    while (buf && (n = fread(buf + *len, 1, cap - *len - 1, f)) > 0) {
        char *nul = nuls ? NULL : memchr(buf + *len, 0, n);
        *len += n;
        if (nul) {
            *len = (size_t)(nul - buf);
            *why = READ_NUL;
            return buf;
        }
        if (*len > LOGOS_MAXINPUT) {
            *why = READ_LARGE;
            return buf;
        }
        if (cap - *len - 1 == 0) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb)
                free(buf);
            buf = nb;
        }
    }
    if (buf && ferror(f)) {
        *why = READ_ERROR;
        *err = errno;
    }
    if (buf)
        buf[*len] = 0;
    return buf;
}

void diag_nul(const char *name, int line, int col)
{
    fprintf(stderr, "%s: %s:%d:%d: a NUL byte: this is not a text file\n", diag_tool, name, line, col);
    diag_errors++;
}

/* The message for an input read only in part. */
static void read_stopped(const char *name, const char *buf, size_t len, int why, int err)
{
    int line, col;
    if (why == READ_NUL) {
        text_locate(buf, len, &line, &col);
        diag_nul(name, line, col);
    } else if (why == READ_LARGE) {
        diag_file(name, "larger than %d MiB: too large for one input", (int)(LOGOS_MAXINPUT >> 20));
    } else {
        diag_file(name, "cannot read: %s", strerror(err));
    }
}

char *input_all(FILE *f, const char *name, int nuls, size_t *len)
{
    int why, err = 0;
    char *buf = read_all(f, nuls, len, &why, &err);
    if (!buf) {
        diag("out of memory reading %s", name);
        exit(EXIT_SYSTEM);
    }
    if (why != READ_END) {
        read_stopped(name, buf, *len, why, err);
        free(buf);
        return NULL;
    }
    return buf;
}

Src *src_read(Arena *a, const char *path)
{
    int std = strcmp(path, "-") == 0;
    FILE *f = std ? stdin : fopen(path, "rb");
    if (!f) {
        diag_file(path, "%s", strerror(errno));
        return NULL;
    }
    size_t len;
    const char *name = std ? "<stdin>" : path;
    char *buf = input_all(f, name, 0, &len);
    if (!std)
        fclose(f);
    if (!buf)
        return NULL;
    Src *s = arena_alloc(a, sizeof *s);
    s->name = std ? name : arena_strdup(a, path);
    s->len = len;
    s->text = arena_strndup(a, buf, len);
    free(buf);
    return s;
}

int parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int arg_long(const char *flag, const char *v, long lo, long hi, long *out)
{
    if (parse_long(v, lo, hi, out) == 0)
        return 0;
    diag("%s takes a whole number from %ld to %ld, not '%s'", flag, lo, hi, v);
    return EXIT_USAGE;
}

int stdout_done(int status)
{
    if (status == EXIT_SYSTEM)   /* reported where it failed (outfile_close says so of stdout) */
        return status;
    if (fflush(stdout) == 0 && !ferror(stdout))
        return status;
    diag("cannot write to standard output: %s", strerror(errno));
    return EXIT_SYSTEM;
}

double mono_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
