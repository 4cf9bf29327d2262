/* out.c — output files written whole or not at all: a regular file (or a
 * symbolic link's target, which may not exist yet) is written under a
 * temporary name beside it, renamed into place only when everything
 * succeeded and removed otherwise; a file that is not regular (a device, a
 * FIFO, /dev/stdout) is written in place; without a path, a stream such as
 * stdout. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "logos.h"

enum { MAX_HOPS = 40 };   /* symbolic links followed, as the kernel's ELOOP */

/* ---- temporaries removed on a signal ---- */

/* The temporaries being written (at most LIVE_MAX at once; past that one is
 * simply not removed on a signal): SIGINT, SIGTERM, SIGHUP and SIGPIPE
 * remove them, then take their default action, so an interrupted tool
 * leaves no partial file behind. */
enum { LIVE_MAX = 64 };
static const char *volatile live[LIVE_MAX];

static void on_signal(int sig)
{
    for (int i = 0; i < LIVE_MAX; i++)
        if (live[i])
            unlink(live[i]);
    signal(sig, SIG_DFL);
    raise(sig);
}

void tmp_keep(const char *path)
{
    static int armed;
    if (!armed) {
        static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
        armed = 1;
        for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
            struct sigaction sa, old;
            if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
                continue;   /* ignored by whoever started us (nohup): stays ignored */
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = on_signal;
            sigemptyset(&sa.sa_mask);
            sigaction(sigs[i], &sa, NULL);
        }
    }
    for (int i = 0; i < LIVE_MAX; i++)
        if (!live[i]) {
            live[i] = path;
            return;
        }
}

void tmp_drop(const char *path)
{
    for (int i = 0; i < LIVE_MAX; i++)
        if (live[i] == path)
            live[i] = NULL;
}

/* The name a symbolic link at path names, relative to path's folder; NULL
 * (errno set) when it cannot be read or memory runs out. */
static char *link_next(const char *path)
{
    char buf[PATH_MAX];
    ssize_t n = readlink(path, buf, sizeof buf - 1);
    if (n < 0)
        return NULL;
    buf[n] = 0;
    const char *slash = strrchr(path, '/');
    size_t dir = buf[0] == '/' || !slash ? 0 : (size_t)(slash - path) + 1;
    char *next = malloc(dir + (size_t)n + 1);
    if (next) {
        memcpy(next, path, dir);
        memcpy(next + dir, buf, (size_t)n + 1);
    }
    return next;
}

/* Where a write to path lands: path, or the end of its chain of symbolic
 * links (malloc'd); NULL with errno set on failure. */
static char *link_target(const char *path)
{
    char *cur = strdup(path);
    for (int hop = 0; cur && hop < MAX_HOPS; hop++) {
        struct stat st;
        if (lstat(cur, &st) || !S_ISLNK(st.st_mode))
            return cur;
        char *next = link_next(cur);
        free(cur);
        cur = next;
    }
    if (cur)
        errno = ELOOP;
    free(cur);
    return NULL;
}

static int cannot_write(OutFile *o)
{
    diag_file(o->path, "cannot write: %s", strerror(errno));
    free(o->dest);
    free(o->tmp);
    o->dest = o->tmp = NULL;
    return EXIT_SYSTEM;
}

/* A device, a FIFO, a terminal: opened and written where it is. */
static int open_in_place(OutFile *o)
{
    o->f = fopen(o->path, "wb");
    if (!o->f)
        return cannot_write(o);
    o->own = 1;
    return 0;
}

/* Where path's link chain ends, its folder resolved ("/abs/dir/name"),
 * malloc'd; NULL where it cannot be worked out. */
static char *place_of(const char *path)
{
    char *dest = link_target(path);
    if (!dest)
        return NULL;
    char *slash = strrchr(dest, '/');
    const char *dir = slash ? (slash == dest ? "/" : dest) : ".", *base = slash ? slash + 1 : dest;
    if (slash && slash != dest)
        *slash = 0;
    char *real = realpath(dir, NULL), *out = NULL;
    if (real && (out = malloc(strlen(real) + strlen(base) + 2)))
        sprintf(out, "%s/%s", real, base);
    free(real);
    free(dest);
    return out;
}

int outfile_same(const char *a, const char *b)
{
    struct stat sa, sb;
    int ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
    if ((ea && !S_ISREG(sa.st_mode)) || (eb && !S_ISREG(sb.st_mode)))
        return 0;   /* a device or a FIFO, written in place: /dev/null twice is fine */
    if (!strcmp(a, b) || (ea && eb && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino))
        return 1;
    char *pa = place_of(a), *pb = place_of(b);
    int same = pa && pb && !strcmp(pa, pb);
    free(pa);
    free(pb);
    return same;
}

int outfile_open(OutFile *o, const char *path, FILE *dflt)
{
    *o = (OutFile){.f = dflt};
    if (!path)
        return 0;
    o->path = path;
    struct stat st, at;
    int exists = stat(path, &st) == 0;
    if (exists && !S_ISREG(st.st_mode))
        return open_in_place(o);
    if (!(o->dest = link_target(path)))
        return cannot_write(o);
    if (exists && lstat(o->dest, &at)) {   /* a link only the kernel follows (/proc/self/fd) */
        free(o->dest);
        o->dest = NULL;
        return open_in_place(o);
    }
    if (!(o->tmp = malloc(strlen(o->dest) + 32))) {
        diag("out of memory");
        free(o->dest);
        return EXIT_SYSTEM;
    }
    sprintf(o->tmp, "%s.tmp%ld", o->dest, (long)getpid());
    o->f = fopen(o->tmp, "wb");
    if (!o->f)
        return cannot_write(o);
    tmp_keep(o->tmp);
    if (exists)   /* the replaced file's permissions */
        (void)fchmod(fileno(o->f), st.st_mode & 07777);
    o->own = 1;
    return 0;
}

int outfile_close(OutFile *o, int status)
{
    if (!o->own) {   /* a stream of the caller's: stdout */
        if (status || !o->f || (fflush(o->f) == 0 && !ferror(o->f)))
            return status;
        diag("cannot write to standard output: %s", strerror(errno));
        return EXIT_SYSTEM;
    }
    int bad = ferror(o->f) != 0;
    bad |= fclose(o->f) != 0;
    o->own = 0;
    if (o->tmp)
        tmp_drop(o->tmp);
    if (status == 0 && !bad && (!o->tmp || rename(o->tmp, o->dest) == 0)) {
        free(o->tmp);
        free(o->dest);
        return 0;
    }
    if (status == 0) {
        diag_file(o->path, "cannot write: %s", strerror(errno));
        status = EXIT_SYSTEM;
    }
    if (o->tmp)
        remove(o->tmp);
    free(o->tmp);
    free(o->dest);
    return status;
}

int outfile_whole(const char *path, const char *text, size_t len)
{
    OutFile o;
    int st = outfile_open(&o, path, stdout);
    if (!st)
        fwrite(text, 1, len, o.f);   /* a short write shows in ferror at the close */
    return outfile_close(&o, st);
}

FILE *mem_stream(char **text, size_t *len)
{
    *text = NULL;
    *len = 0;
    FILE *f = open_memstream(text, len);
    if (!f)
        diag("out of memory");
    return f;
}
