/* import_gguf.c — GGUF files (versions 2 and 3): the header (magic, version,
 * tensor and key-value counts), the typed key-values (every value type,
 * arrays included, bounds-checked and skipped unless needed), the tensor
 * infos (name, dims with ne[0] the fastest, type, offset) and the aligned
 * data section. The metadata becomes a Cfg the way llama.cpp's converter
 * wrote it: its llama q/k rows are interleaved pairs, its Gemma 2 norms
 * already hold 1 + w. The file is mapped to read the header; tensor data is
 * streamed by import_write.c through the descriptor. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "import.h"

enum { GT_U8, GT_I8, GT_U16, GT_I16, GT_U32, GT_I32, GT_F32, GT_BOOL, GT_STR, GT_ARR, GT_U64, GT_I64, GT_F64,
       GT_COUNT };
enum { GG_F32 = 0, GG_F16 = 1, GG_Q8_0 = 8, GG_BF16 = 30 };
enum { MAX_NEST = 5 };   /* levels of arrays of arrays read */

/* A key-value kept for the configuration: scalars only. */
typedef struct Kv {
    const char *key;
    int type;
    double num;
    const char *str;
} Kv;

typedef struct Rd {
    const unsigned char *p;
    size_t len, pos;
    const char *file;
    int err;
} Rd;

typedef struct Gg {
    Ckpt *c;
    Rd r;
    Kv *kv; int nkv, ckv;
    uint64_t align;
} Gg;

static int rd_need(Rd *r, uint64_t n)
{
    if (r->err)
        return -1;
    if (n > r->len - r->pos) {
        r->err = imp_fail(r->file, "truncated at byte %zu: the header runs past the end of the file", r->pos);
        return -1;
    }
    return 0;
}

static uint64_t rd_le(Rd *r, int n)
{
    if (rd_need(r, (uint64_t)n))
        return 0;
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | r->p[r->pos + (size_t)i];
    r->pos += (size_t)n;
    return v;
}

/* A string: u64 length then bytes (not NUL-terminated in the file). */
static const char *rd_str(Gg *g)
{
    uint64_t n = rd_le(&g->r, 8);
    if (g->r.err)
        return NULL;
    if (n > g->r.len - g->r.pos) {
        g->r.err = imp_fail(g->r.file, "a string of %llu bytes at byte %zu runs past the end of the file",
                            (unsigned long long)n, g->r.pos - 8);
        return NULL;
    }
    const char *s = arena_strndup(g->c->a, (const char *)g->r.p + g->r.pos, (size_t)n);
    g->r.pos += (size_t)n;
    return s;
}

static int type_bytes(int t)
{
    static const int size[GT_COUNT] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    return t >= 0 && t < GT_COUNT ? size[t] : -1;
}

/* The shortest decimal that reads back as f (1e-05, not 9.99999975e-06), so
 * that a spec shows what the converter was given. */
static double shortest(float f)
{
    char buf[32];
    for (int p = 1; p < 10; p++) {
        snprintf(buf, sizeof buf, "%.*g", p, (double)f);
        if ((float)strtod(buf, NULL) == f)
            break;
    }
    return strtod(buf, NULL);
}

/* One value of type t; scalars land in kv (when given). */
static void rd_value(Gg *g, int t, Kv *kv, int depth)
{
    Rd *r = &g->r;
    if (t == GT_STR) {
        const char *s = rd_str(g);
        if (kv)
            kv->str = s;
        return;
    }
    if (t == GT_ARR) {
        int et = (int)rd_le(r, 4);
        uint64_t n = rd_le(r, 8);
        if (r->err)
            return;
        if (depth >= MAX_NEST) {
            r->err = imp_fail(r->file, "an array nested more than %d levels deep at byte %zu", MAX_NEST, r->pos);
            return;
        }
        if (type_bytes(et) < 0) {
            r->err = imp_fail(r->file, "an array of unknown value type %d at byte %zu", et, r->pos);
            return;
        }
        uint64_t min = type_bytes(et) ? (uint64_t)type_bytes(et) : et == GT_STR ? 8 : 12;
        if (n > (r->len - r->pos) / min) {
            r->err = imp_fail(r->file, "an array of %llu values runs past the end of the file", (unsigned long long)n);
            return;
        }
        if (type_bytes(et)) {
            r->pos += (size_t)(n * (uint64_t)type_bytes(et));
            return;
        }
        for (uint64_t i = 0; i < n && !r->err; i++)
            rd_value(g, et, NULL, depth + 1);
        return;
    }
    int nb = type_bytes(t);
    if (nb < 0) {
        r->err = imp_fail(r->file, "unknown value type %d at byte %zu", t, r->pos);
        return;
    }
    uint64_t v = rd_le(r, nb);
    if (!kv || r->err)
        return;
    int64_t sv = t == GT_I8 ? (int8_t)v : t == GT_I16 ? (int16_t)v : t == GT_I32 ? (int32_t)v : (int64_t)v;
    if (t == GT_F32) {
        float f;
        uint32_t b = (uint32_t)v;
        memcpy(&f, &b, 4);
        kv->num = shortest(f);
    } else if (t == GT_F64) {
        memcpy(&kv->num, &v, 8);
    } else {
        kv->num = (t == GT_U64 || t == GT_U32 || t == GT_U16 || t == GT_U8 || t == GT_BOOL) ? (double)v : (double)sv;
    }
}

static int rd_kvs(Gg *g, uint64_t n)
{
    if (n > (g->r.len - g->r.pos) / 13)
        return imp_fail(g->r.file, "key-value count %llu is past the end of the file", (unsigned long long)n);
    for (uint64_t i = 0; i < n && !g->r.err; i++) {
        Kv kv = {0};
        kv.key = rd_str(g);
        kv.type = (int)rd_le(&g->r, 4);
        rd_value(g, kv.type, &kv, 0);
        if (!g->r.err && kv.type != GT_ARR)
            *VEC_PUSH(g->c->a, g->kv, g->nkv, g->ckv) = kv;
    }
    return g->r.err;
}

static const Kv *kv_get(const Gg *g, const char *key)
{
    for (int i = 0; i < g->nkv; i++)
        if (!strcmp(g->kv[i].key, key))
            return &g->kv[i];
    return NULL;
}

static const char *gg_type_name(int t)
{
    static const char *names[] = {"F32", "F16", "Q4_0", "Q4_1", "Q4_2", "Q4_3", "Q5_0", "Q5_1", "Q8_0", "Q8_1",
                                  "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "Q8_K", "IQ2_XXS", "IQ2_XS", "IQ3_XXS",
                                  "IQ1_S", "IQ4_NL", "IQ3_S", "IQ2_S", "IQ4_XS", "I8", "I16", "I32", "I64", "F64",
                                  "IQ1_M", "BF16"};
    return t >= 0 && t < (int)(sizeof names / sizeof *names) ? names[t] : "unknown";
}

static int gg_dtype(int t)
{
    switch (t) {
    case GG_F32: return DT_F32;
    case GG_F16: return DT_F16;
    case GG_BF16: return DT_BF16;
    case GG_Q8_0: return DT_Q8_0;
    default: return DT_OTHER;
    }
}

/* One tensor info; its offset is relative to the data section for now. */
static int rd_tensor(Gg *g)
{
    Rd *r = &g->r;
    Tensor *t = ckpt_add(g->c);
    t->name = rd_str(g);
    uint32_t nd = (uint32_t)rd_le(r, 4);
    if (r->err)
        return r->err;
    if (nd == 0 || nd > 4)
        return imp_fail(r->file, "tensor '%s': %u dimensions (GGUF has 1 to 4)", t->name, nd);
    t->rank = (int)nd;
    unsigned long long n = 1;
    for (uint32_t k = 0; k < nd; k++) {
        uint64_t ne = rd_le(r, 8);
        if (r->err || ne >= (1ULL << 40) || __builtin_mul_overflow(n, ne, &n) || n >= (1ULL << 60))
            return r->err ? r->err : imp_fail(r->file, "tensor '%s': a bad shape", t->name);
        t->d[nd - 1 - k] = (long)ne;
    }
    int type = (int)rd_le(r, 4);
    t->off = rd_le(r, 8);
    if (r->err)
        return r->err;
    t->dtype = gg_dtype(type);
    t->dtname = arena_printf(g->c->a, "%s (%d)", gg_type_name(type), type);
    if (t->dtype == DT_Q8_0 && t->d[nd - 1] % 32)
        return imp_fail(r->file, "tensor '%s': Q8_0 rows of %ld values are not whole 32-value blocks", t->name,
                        t->d[nd - 1]);
    if (t->dtype != DT_OTHER)
        t->nbytes = t->dtype == DT_Q8_0 ? n / 32 * 34 : n * (uint64_t)dtype_size(t->dtype);
    t->file = r->file;
    return 0;
}

/* The data section starts at the next multiple of the alignment. */
static int rd_data(Gg *g, int first, int fd)
{
    Rd *r = &g->r;
    uint64_t start = (r->pos + g->align - 1) / g->align * g->align;
    for (int i = first; i < g->c->nt; i++) {
        Tensor *t = &g->c->t[i];
        t->fd = fd;
        if (t->off % g->align)
            return imp_fail(r->file, "tensor '%s': offset %llu is not a multiple of the alignment %llu", t->name,
                            (unsigned long long)t->off, (unsigned long long)g->align);
        if (t->dtype == DT_OTHER)
            continue;   /* its size is not known here: an error only if it is wanted */
        if (start > r->len || t->off > r->len - start || t->nbytes > r->len - start - t->off)
            return imp_fail(r->file, "tensor '%s': its data (%llu bytes at %llu) is past the end of the file (%zu bytes)",
                            t->name, (unsigned long long)t->nbytes, (unsigned long long)(start + t->off), r->len);
        t->off += start;
    }
    return 0;
}

/* ---- metadata to a Cfg ---- */

static double kv_num(const Gg *g, const char *arch, const char *key, double dflt)
{
    const Kv *kv = kv_get(g, arena_printf(g->c->a, "%s.%s", arch, key));
    return kv && kv->type != GT_STR ? kv->num : dflt;
}

/* A whole number from 0 to LOGOS_MAXINT (as a spec holds it); else a message
 * in g->r.err. */
static long kv_int(Gg *g, const char *arch, const char *key, long dflt)
{
    double v = kv_num(g, arch, key, (double)dflt);
    if (!(v == floor(v) && v >= 0 && v <= (double)LOGOS_MAXINT)) {
        if (!g->r.err)
            g->r.err = imp_fail(g->r.file, "%s.%s is not a whole number from 0 to %ld", arch, key, LOGOS_MAXINT);
        return 0;
    }
    return (long)v;
}

static int gg_family(const char *arch)
{
    static const struct { const char *name; int fam; } fams[] = {
        {"llama", FAM_LLAMA}, {"qwen2", FAM_QWEN2}, {"qwen3", FAM_QWEN3}, {"gemma2", FAM_GEMMA2}};
    for (size_t i = 0; i < sizeof fams / sizeof *fams; i++)
        if (!strcmp(arch, fams[i].name))
            return fams[i].fam;
    return -1;
}

/* llama.cpp writes Llama 3's rope scaling as rope_freqs, a factor per
 * frequency: accepted when they are llama3's with low 1, high 4 and the
 * original context 8192 (or the metadata's). */
static int gg_rope_freqs(Gg *g, const Tensor *t, CRope *r, long rot)
{
    const char *f = g->r.file;
    if (t->dtype != DT_F32 || t->rank != 1 || t->d[0] != rot / 2)
        return imp_fail(f, "tensor 'rope_freqs.weight': expected F32[%ld]", rot / 2);
    const unsigned char *p = g->r.p + t->off;
    double mx = 0, low = 1, high = 4;
    long orig = kv_int(g, "llama", "rope.scaling.original_context_length", 8192);
    if (g->r.err)
        return g->r.err;
    for (long i = 0; i < rot / 2; i++) {
        float v;
        memcpy(&v, p + 4 * i, 4);
        mx = v > mx ? v : mx;
    }
    for (long i = 0; i < rot / 2; i++) {
        float v;
        memcpy(&v, p + 4 * i, 4);
        double freq = pow(r->theta, -2.0 * (double)i / (double)rot), wl = 2 * M_PI / freq, want;
        if (wl < orig / high)
            want = 1;
        else if (wl > orig / low)
            want = mx;
        else {
            double s = ((double)orig / wl - low) / (high - low);
            want = 1 / ((1 - s) / mx + s);
        }
        if (fabs(v - want) > 1e-4 * want)
            return imp_fail(f, "tensor 'rope_freqs.weight': factor %ld is %g, not llama3's %g (factor %g, low 1, "
                            "high 4, orig %ld)", i, v, want, mx, orig);
    }
    *r = (CRope){.theta = r->theta, .scaling = SCALE_LLAMA3, .factor = mx, .low = low, .high = high, .orig = orig};
    return 0;
}

/* The architecture: its family and the model's name. */
static int gg_arch(Gg *g, const char **arch)
{
    Cfg *c = &g->c->cfg;
    const char *f = g->r.file;
    const Kv *ak = kv_get(g, "general.architecture");
    if (!ak || !ak->str)
        return imp_fail(f, "no general.architecture");
    *arch = ak->str;
    c->family = gg_family(ak->str);
    if (c->family < 0)
        return imp_fail(f, "unknown architecture '%s' (general.architecture; known: llama qwen2 qwen3 gemma2)",
                        ak->str);
    const Kv *nk = kv_get(g, "general.name");
    c->name = sanitize_name(g->c->a, nk && nk->str ? nk->str : ak->str);
    return 0;
}

/* Shapes from the metadata; biases, norms and the head from the tensors. */
static int gg_shapes(Gg *g, const char *a)
{
    Cfg *c = &g->c->cfg;
    const Tensor *emb = ckpt_find(g->c, "token_embd.weight");
    if (!emb)
        return imp_fail(g->r.file, "tensor 'token_embd.weight' is missing");
    c->vocab = emb->d[0];
    c->dim = kv_int(g, a, "embedding_length", 0);
    c->layers = kv_int(g, a, "block_count", 0);
    c->heads = kv_int(g, a, "attention.head_count", 0);
    c->kv_heads = kv_int(g, a, "attention.head_count_kv", c->heads);
    c->head_dim = kv_int(g, a, "attention.key_length", c->heads ? c->dim / c->heads : 0);
    c->hidden = kv_int(g, a, "feed_forward_length", 0);
    c->eps = kv_num(g, a, "attention.layer_norm_rms_epsilon", 1e-5);
    c->ctx = kv_int(g, a, "context_length", 0);
    c->rot = kv_int(g, a, "rope.dimension_count", 0);
    c->tied = !ckpt_find(g->c, "output.weight");
    c->q_bias = !!ckpt_find(g->c, "blk.0.attn_q.bias");
    c->k_bias = !!ckpt_find(g->c, "blk.0.attn_k.bias");
    c->v_bias = !!ckpt_find(g->c, "blk.0.attn_v.bias");
    c->o_bias = !!ckpt_find(g->c, "blk.0.attn_output.bias");
    c->qk_norm = !!ckpt_find(g->c, "blk.0.attn_q_norm.weight");
    return g->r.err;
}

/* The rope: its base, yarn scaling from the metadata, llama3's from
 * rope_freqs; the same for both kinds of layer. */
static int gg_rope(Gg *g, const char *a)
{
    Cfg *c = &g->c->cfg;
    c->rope[0].theta = kv_num(g, a, "rope.freq_base", 10000);
    const Kv *st = kv_get(g, arena_printf(g->c->a, "%s.rope.scaling.type", a));
    if (st && st->str && !strcmp(st->str, "yarn")) {
        double f = kv_num(g, a, "rope.scaling.factor", 1);
        c->rope[0] = (CRope){.theta = c->rope[0].theta, .scaling = SCALE_YARN, .factor = f, .beta_fast = 32,
                             .beta_slow = 1, .truncate = 1,
                             .attn_factor = kv_num(g, a, "rope.scaling.attn_factor", f > 1 ? 0.1 * log(f) + 1 : 1),
                             .orig = kv_int(g, a, "rope.scaling.original_context_length", 0)};
    } else if (st && st->str && strcmp(st->str, "none")) {
        return imp_fail(g->r.file, "rope scaling '%s' (%s.rope.scaling.type) cannot be written by logos-author yet",
                        st->str, a);
    }
    const Tensor *rf = ckpt_find(g->c, "rope_freqs.weight");
    if (!g->r.err && rf && gg_rope_freqs(g, rf, &c->rope[0], c->rot ? c->rot : c->head_dim))
        return EXIT_INPUT;
    c->rope[1] = c->rope[0];
    return g->r.err;
}

/* Each family's own: llama's interleaved q/k rows, Gemma 2's window, caps,
 * stored norms and query scale. */
static int gg_family_cfg(Gg *g, const char *a)
{
    Cfg *c = &g->c->cfg;
    c->interleaved = c->family == FAM_LLAMA;
    if (c->family != FAM_GEMMA2) {
        c->window = kv_int(g, a, "attention.sliding_window", 0);
        return g->r.err;
    }
    c->window = kv_int(g, a, "attention.sliding_window", 4096);
    c->attn_softcap = kv_num(g, a, "attn_logit_softcapping", 50);
    c->final_softcap = kv_num(g, a, "final_logit_softcapping", 30);
    c->norm_offset = -1;   /* the converter stored 1 + w: no offset */
    /* llama.cpp scales gemma2 queries by head_dim, but 27B (46 layers) by dim/heads */
    if (c->layers == 46 && c->heads)
        c->scale = 1 / sqrt((double)(c->dim / c->heads));
    return g->r.err;
}

static int gg_config(Gg *g)
{
    const char *a = NULL;
    int st = gg_arch(g, &a);
    if (!st)
        st = gg_shapes(g, a);
    if (!st)
        st = gg_rope(g, a);
    return st ? st : gg_family_cfg(g, a);
}

int gguf_parse(Ckpt *c, const char *file, int fd, const unsigned char *buf, size_t len)
{
    Gg g = {.c = c, .r = {buf, len, 0, file, 0}, .align = 32};
    if (len < 4 || memcmp(buf, "GGUF", 4))
        return imp_fail(file, "not a GGUF file: bad magic (expected 'GGUF')");
    g.r.pos = 4;
    uint32_t version = (uint32_t)rd_le(&g.r, 4);
    if (g.r.err)
        return g.r.err;
    if (version != 2 && version != 3)
        return imp_fail(file, "unsupported GGUF version %u (2 and 3 are read)", version);
    uint64_t nt = rd_le(&g.r, 8), nkv = rd_le(&g.r, 8);
    if (g.r.err)
        return g.r.err;
    if (nt > (len - g.r.pos) / 24)
        return imp_fail(file, "tensor count %llu is past the end of the file", (unsigned long long)nt);
    if (rd_kvs(&g, nkv))
        return EXIT_INPUT;
    const Kv *al = kv_get(&g, "general.alignment");
    if (al) {
        if (al->type == GT_STR || al->num < 1 || al->num > 65536 || ((uint64_t)al->num & ((uint64_t)al->num - 1)))
            return imp_fail(file, "general.alignment is not a power of two up to 65536");
        g.align = (uint64_t)al->num;
    }
    int first = c->nt;
    for (uint64_t i = 0; i < nt; i++)
        if (rd_tensor(&g))
            return EXIT_INPUT;
    if (rd_data(&g, first, fd))
        return EXIT_INPUT;
    return gg_config(&g);
}

int gguf_open(Ckpt *c, const char *path)
{
    struct stat sb;
    int fd = ckpt_open(c, path, &sb);
    if (fd < 0)
        return EXIT_INPUT;
    if (sb.st_size == 0)
        return gguf_parse(c, path, fd, (const unsigned char *)"", 0);
    void *m = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED)
        return imp_sysfail(path, "cannot map: %s", strerror(errno));
    int st = gguf_parse(c, path, fd, m, (size_t)sb.st_size);
    munmap(m, (size_t)sb.st_size);
    return st;
}
