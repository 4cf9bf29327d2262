/* out.c — output files written whole or not at all: under a temporary
 * name beside the file, renamed into place only when everything succeeded,
 * removed otherwise; without a path, a stream such as stdout. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "logos.h"

int outfile_open(OutFile *o, const char *path, FILE *dflt)
{
    o->path = path;
    o->tmp = NULL;
    o->f = dflt;
    if (!path)
        return 0;
    o->tmp = malloc(strlen(path) + 32);
    if (!o->tmp) {
        diag("out of memory");
        return EXIT_SYSTEM;
    }
    sprintf(o->tmp, "%s.tmp%ld", path, (long)getpid());
    o->f = fopen(o->tmp, "wb");
    if (!o->f) {
        diag_file(path, "cannot write: %s", strerror(errno));
        free(o->tmp);
        o->tmp = NULL;
        return EXIT_SYSTEM;
    }
    return 0;
}

int outfile_close(OutFile *o, int status)
{
    if (!o->tmp) {   /* a stream of the caller's: stdout */
        if (status || !o->f || (fflush(o->f) == 0 && !ferror(o->f)))
            return status;
        diag("cannot write to standard output: %s", strerror(errno));
        return EXIT_SYSTEM;
    }
    int bad = ferror(o->f) != 0;
    bad |= fclose(o->f) != 0;
    if (status == 0 && !bad && rename(o->tmp, o->path) == 0) {
        free(o->tmp);
        return 0;
    }
    if (status == 0) {
        diag_file(o->path, "cannot write: %s", strerror(errno));
        status = EXIT_SYSTEM;
    }
    remove(o->tmp);
    free(o->tmp);
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
