/* import_st.c — safetensors checkpoints: a Hugging Face folder's one file or
 * its shards (named by model.safetensors.index.json). A file is an 8-byte
 * little-endian header length, a JSON header naming each tensor's dtype,
 * shape and data_offsets, then the data. Only the header is read here; the
 * data stays in the file and is streamed by import_write.c. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "import.h"

enum { ST_MAX_HEADER = 100 << 20 };   /* the format's own limit: 100 MB */

typedef struct Span {
    uint64_t b, e;
    const char *name;
} Span;

static int dtype_of(const char *s)
{
    if (!strcmp(s, "F32"))
        return DT_F32;
    if (!strcmp(s, "F16"))
        return DT_F16;
    if (!strcmp(s, "BF16"))
        return DT_BF16;
    return DT_OTHER;
}

static int span_cmp(const void *x, const void *y)
{
    const Span *a = x, *b = y;
    return a->b < b->b ? -1 : a->b > b->b;
}

/* A JSON integer in [0, 2^62), or -1. */
static long long json_count(const json_t *v)
{
    if (!json_is_integer(v))
        return -1;
    long long n = json_integer_value(v);
    return n < 0 || n >= (1LL << 62) ? -1 : n;
}

/* One entry of the header: dtype, shape and data_offsets. */
static int st_tensor(Ckpt *c, const char *file, const char *name, json_t *v, uint64_t data, Span *sp)
{
    json_t *dt = json_object_get(v, "dtype"), *sh = json_object_get(v, "shape");
    json_t *of = json_object_get(v, "data_offsets");
    if (!json_is_object(v) || !json_is_string(dt) || !json_is_array(sh) || !json_is_array(of) ||
        json_array_size(of) != 2)
        return imp_fail(file, "tensor '%s': expected an object with dtype, shape and data_offsets", name);
    if (json_array_size(sh) > LOGOS_MAXRANK)
        return imp_fail(file, "tensor '%s': rank %zu is more than %d", name, json_array_size(sh), LOGOS_MAXRANK);
    Tensor *t = ckpt_add(c);
    t->name = arena_strdup(c->a, name);
    t->dtname = arena_strdup(c->a, json_string_value(dt));
    t->dtype = dtype_of(t->dtname);
    t->rank = (int)json_array_size(sh);
    t->file = file;
    t->fd = -1;
    unsigned long long n = 1;
    for (int k = 0; k < t->rank; k++) {
        long long dk = json_count(json_array_get(sh, (size_t)k));
        if (dk < 0 || __builtin_mul_overflow(n, (unsigned long long)dk, &n) || n >= (1ULL << 60))
            return imp_fail(file, "tensor '%s': a bad shape", name);
        t->d[k] = (long)dk;
    }
    json_t *jb = json_array_get(of, 0), *je = json_array_get(of, 1);
    if (!json_is_integer(jb) || !json_is_integer(je) || json_integer_value(jb) < 0 || json_integer_value(je) < 0)
        return imp_fail(file, "tensor '%s': data_offsets are not two whole numbers", name);
    long long b = json_integer_value(jb), e = json_integer_value(je);
    if (b > e)
        return imp_fail(file, "tensor '%s': data_offsets [%lld, %lld] are not increasing", name, b, e);
    if ((uint64_t)e > data)
        return imp_fail(file, "tensor '%s': data_offsets [%lld, %lld] are past the data (%llu bytes)", name, b, e,
                        (unsigned long long)data);
    if (t->dtype != DT_OTHER && (uint64_t)(e - b) != n * (uint64_t)dtype_size(t->dtype))
        return imp_fail(file, "tensor '%s': data_offsets hold %lld bytes, but %s%s needs %llu", name, e - b, t->dtname,
                        shape_str(c->a, t->rank, t->d), n * (unsigned long long)dtype_size(t->dtype));
    t->nbytes = (uint64_t)(e - b);
    t->off = (uint64_t)b;   /* relative to the data until the header's length is added */
    *sp = (Span){(uint64_t)b, (uint64_t)e, t->name};
    return 0;
}

/* No two tensors' bytes may overlap: each non-empty span against the
 * furthest end seen before it (an empty one between hides nothing). */
static int st_overlaps(const char *file, Span *sp, int n)
{
    qsort(sp, (size_t)n, sizeof *sp, span_cmp);
    const Span *far = NULL;
    for (int i = 0; i < n; i++) {
        if (sp[i].b == sp[i].e)
            continue;
        if (far && sp[i].b < far->e)
            return imp_fail(file, "tensors '%s' and '%s' overlap in the data (bytes %llu to %llu)", far->name,
                            sp[i].name, (unsigned long long)sp[i].b,
                            (unsigned long long)(far->e < sp[i].e ? far->e : sp[i].e));
        if (!far || sp[i].e > far->e)
            far = &sp[i];
    }
    return 0;
}

int st_parse(Ckpt *c, const char *file, int fd, const unsigned char *buf, size_t len, uint64_t size)
{
    if (size < 8 || len < 8)
        return imp_fail(file, "truncated: %llu bytes, shorter than the 8-byte header length",
                        (unsigned long long)size);
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--)
        n = n << 8 | buf[i];
    if (n > size - 8 || n > len - 8)
        return imp_fail(file, "header length %llu is past the end of the file (%llu bytes)", (unsigned long long)n,
                        (unsigned long long)size);
    json_error_t err;
    json_t *root = json_loadb((const char *)buf + 8, (size_t)n, JSON_REJECT_DUPLICATES, &err);
    if (!root)
        return imp_fail(file, "header is not JSON: %s (at byte %d of the header)", err.text, err.position);
    int st = 0, ns = 0, first = c->nt;
    if (!json_is_object(root))
        st = imp_fail(file, "header is not a JSON object");
    Span *sp = calloc(json_object_size(root) + 1, sizeof *sp);
    if (!sp) {
        json_decref(root);
        return imp_sysfail(file, "out of memory");
    }
    const char *key;
    json_t *v;
    json_object_foreach(root, key, v) {
        if (st || !strcmp(key, "__metadata__"))
            continue;
        st = st_tensor(c, file, key, v, size - 8 - n, &sp[ns++]);
    }
    if (!st)
        st = st_overlaps(file, sp, ns);
    for (int i = first; i < c->nt; i++) {
        c->t[i].off += 8 + n;
        c->t[i].fd = fd;
    }
    free(sp);
    json_decref(root);
    return st;
}

static int st_open_file(Ckpt *c, const char *path)
{
    struct stat sb;
    int fd = ckpt_open(c, path, &sb);
    if (fd < 0)
        return EXIT_INPUT;
    unsigned char head[8];
    uint64_t size = (uint64_t)sb.st_size;
    if (size < 8 || pread(fd, head, 8, 0) != 8)
        return st_parse(c, path, fd, head, 0, size);
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--)
        n = n << 8 | head[i];
    if (n > size - 8)
        return st_parse(c, path, fd, head, 8, size);
    if (n > ST_MAX_HEADER)
        return imp_fail(path, "header length %llu is more than the format's 100 MB", (unsigned long long)n);
    unsigned char *buf = malloc(n + 8);
    if (!buf || pread(fd, buf, n + 8, 0) != (ssize_t)(n + 8)) {
        free(buf);
        return imp_sysfail(path, "cannot read the header: %s", strerror(errno));
    }
    int st = st_parse(c, path, fd, buf, n + 8, size);
    free(buf);
    return st;
}

static int name_cmp(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* The shards an index names, each once, in order of first mention. */
static int st_open_index(Ckpt *c, const char *dir, const char *index)
{
    json_error_t err;
    json_t *root = json_load_file(index, JSON_REJECT_DUPLICATES, &err);
    if (!root)
        return imp_fail(index, "not JSON: %s (line %d)", err.text, err.line);
    json_t *map = json_object_get(root, "weight_map");
    int st = 0;
    if (!json_is_object(map))
        st = imp_fail(index, "no weight_map object");
    const char *key;
    json_t *v;
    char *seen = arena_strdup(c->a, "/");
    json_object_foreach(map, key, v) {
        if (st)
            break;
        const char *f = json_string_value(v);
        if (!f || !*f || strchr(f, '/'))
            st = imp_fail(index, "tensor '%s': its shard is not a file name", key);
        else if (!strstr(seen, arena_printf(c->a, "/%s/", f))) {
            seen = arena_printf(c->a, "%s%s/", seen, f);
            const char *path = arena_printf(c->a, "%s/%s", dir, f);
            if (access(path, F_OK) != 0)
                st = imp_fail(index, "names shard '%s', which does not exist", f);
            else
                st = st_open_file(c, path);
        }
    }
    json_decref(root);
    return st;
}

int st_open_dir(Ckpt *c, const char *dir)
{
    const char *index = arena_printf(c->a, "%s/model.safetensors.index.json", dir);
    if (access(index, F_OK) == 0)
        return st_open_index(c, dir, index);
    DIR *d = opendir(dir);
    if (!d)
        return imp_fail(dir, "cannot read: %s", strerror(errno));
    char **names = NULL;
    int n = 0, cap = 0, st = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t l = strlen(e->d_name);
        if (l > 12 && !strcmp(e->d_name + l - 12, ".safetensors") && e->d_name[0] != '.')
            *VEC_PUSH(c->a, names, n, cap) = arena_strdup(c->a, e->d_name);
    }
    closedir(d);
    if (!n)
        return imp_fail(dir, "no *.safetensors file");
    qsort(names, (size_t)n, sizeof *names, name_cmp);
    for (int i = 0; i < n && !st; i++)
        st = st_open_file(c, arena_printf(c->a, "%s/%s", dir, names[i]));
    return st;
}
