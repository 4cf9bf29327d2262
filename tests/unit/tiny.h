/* tiny.h — the unit tests' list of the tiny specs (every .yaml file of examples/tiny),
 * sorted by name, so every family test walks them in one order. Run from
 * the repository root. */
#ifndef TINY_H
#define TINY_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tiny_by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Up to cap paths into files (malloc'd); -1 when examples/tiny is not here. */
static int tiny_specs(char **files, int cap)
{
    DIR *d = opendir("examples/tiny");
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *de; (de = readdir(d)) && n < cap;)
        if (strstr(de->d_name, ".yaml")) {
            files[n] = malloc(strlen(de->d_name) + 16);
            sprintf(files[n++], "examples/tiny/%s", de->d_name);
        }
    closedir(d);
    qsort(files, (size_t)n, sizeof *files, tiny_by_name);
    return n;
}

#endif
