/* kernels.c — the kernel table (kernels.h) as data: each kernel's constants
 * with their ranges and its parameters with the buffers they accept, what
 * every parameter must hold for given constants (kernel_need, the sizes the
 * kernel's opening comment states), and an instantiation's source (the
 * constants as `constexpr`, then the kernel's file) for NVRTC. The CUDA
 * sources are embedded at build time (scripts/embed). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "logos.h"

extern const char *const kernel_files[][2];   /* build/gen/kernels_src.c */

static const struct {
    const char *name, *file, *consts, *params;
    int threads;
} rows[KN_COUNT] = {
#define K(id, name, file, consts, params, threads) [KN_##id] = {name, file, consts, params, threads},
#include "kernels.h"
#undef K
};

static Kernel table[KN_COUNT];
static int parsed;

static const char *etype_names[ET_COUNT] = {"f32", "i32", "f16", "f64", "q8", "a8", "a8x2", "a8h"};

const char *etype_name(int dt)
{
    return etype_names[dt];
}

int etype_lookup(const char *s, size_t n)
{
    for (int i = 0; i < ET_COUNT; i++)
        if (strlen(etype_names[i]) == n && memcmp(etype_names[i], s, n) == 0)
            return i;
    return -1;
}

long etype_bytes(int dt, long n)
{
    long a16 = (n + 15) & ~15L;
    switch (dt) {
    case ET_F16: case ET_A8H: return 2 * n;
    case ET_F64: return 8 * n;
    case ET_Q8: return a16 + 2 * (n / 32);
    case ET_A8: return a16 + 4 * (n / 32);
    case ET_A8X2: return ((2 * n + 15) & ~15L) + 4 * (n / 32);
    default: return 4 * n;
    }
}

/* "NAME:t:lo:hi ..." */
static void parse_consts(Kernel *k, const char *s)
{
    for (const char *p = s; *p;) {
        KConst *c = &k->c[k->nc++];
        ASSERT(k->nc <= KMAXC);
        size_t n = strcspn(p, ":");
        ASSERT(n < sizeof c->name);
        memcpy(c->name, p, n);
        p += n + 1;
        c->isf = *p == 'f';
        p += 2;
        char *end;
        c->lo = strtod(p, &end);
        c->hi = strtod(end + 1, &end);
        p = end + strspn(end, " ");
    }
}

/* "name:kinds[?]:dt,dt ..." */
static void parse_params(Kernel *k, const char *s)
{
    for (const char *p = s; *p;) {
        KParam *q = &k->p[k->np++];
        ASSERT(k->np <= KMAXP);
        size_t n = strcspn(p, ":");
        ASSERT(n < sizeof q->name);
        memcpy(q->name, p, n);
        p += n + 1;
        n = strcspn(p, ":");
        ASSERT(n < sizeof q->kinds);
        memcpy(q->kinds, p, n);
        char *opt = strchr(q->kinds, '?');
        if (opt) {
            q->optional = 1;
            *opt = 0;
        }
        p += n + 1;
        while (*p && *p != ' ') {
            n = strcspn(p, ", ");
            int dt = etype_lookup(p, n);
            ASSERT(dt >= 0);
            q->dtypes |= 1u << dt;
            p += n + (p[n] == ',');
        }
        p += strspn(p, " ");
    }
}

static void parse_table(void)
{
    if (parsed)
        return;
    for (int i = 0; i < KN_COUNT; i++) {
        Kernel *k = &table[i];
        k->name = rows[i].name;
        k->file = rows[i].file;
        k->threads = rows[i].threads;
        parse_consts(k, rows[i].consts);
        parse_params(k, rows[i].params);
    }
    parsed = 1;
}

const Kernel *kernel_info(int k)
{
    parse_table();
    return &table[k];
}

int kernel_lookup(const char *name)
{
    for (int i = 0; i < KN_COUNT; i++)
        if (strcmp(rows[i].name, name) == 0)
            return i;
    return -1;
}

int kernel_const(int k, const char *name)
{
    const Kernel *kn = kernel_info(k);
    for (int i = 0; i < kn->nc; i++)
        if (strcmp(kn->c[i].name, name) == 0)
            return i;
    return -1;
}

/* mma's and mmh's splits of K are a cluster of SK blocks along z (each
 * gathers their sums through the cluster's shared memory); no other kernel
 * has one. */
int kernel_cluster(int k, const double *c)
{
    static int sk = -1, skh = -1;   /* SK's index among mma's and mmh's constants, looked up once */
    if (k != KN_MMA && k != KN_MMH)
        return 1;
    if (sk < 0)
        sk = kernel_const(KN_MMA, "SK"), skh = kernel_const(KN_MMH, "SK");
    return (int)c[k == KN_MMA ? sk : skh];
}

int kernel_param(int k, const char *name)
{
    const Kernel *kn = kernel_info(k);
    for (int i = 0; i < kn->np; i++)
        if (strcmp(kn->p[i].name, name) == 0)
            return i;
    return -1;
}

/* ---- sizes ---- */

typedef struct Need {
    int k;
    const double *c;
    KNeed *out;
    char *why;
    size_t whylen;
} Need;

static long C(const Need *n, const char *name)
{
    int i = kernel_const(n->k, name);
    ASSERT(i >= 0);
    return (long)n->c[i];
}

static double CF(const Need *n, const char *name)
{
    int i = kernel_const(n->k, name);
    ASSERT(i >= 0);
    return n->c[i];
}

static void need(Need *n, const char *param, long count)
{
    int i = kernel_param(n->k, param);
    ASSERT(i >= 0);
    n->out->count[i] = count;
}

/* The constants read parameter param as element type et. */
static void need_etype(Need *n, const char *param, int et)
{
    n->out->etype[kernel_param(n->k, param)] = et;
}

int act_etype(long f)
{
    return f == 1 ? ET_A8 : f == 2 ? ET_A8X2 : f == 3 ? ET_A8H : ET_F32;
}

int etype_format(int et)
{
    return et == ET_A8 ? 1 : et == ET_A8X2 ? 2 : et == ET_A8H ? 3 : 0;
}

/* The output param is written in format OQ (a quantizing epilogue's words,
 * f32 without one): its buffer must be of that element type, or the
 * launch would write past it or read it wrongly. */
static void need_out(Need *n, const char *param)
{
    need_etype(n, param, act_etype(C(n, "OQ")));
}

/* Parameter param is a table of `entries` buffers, each holding count. */
static void need_table(Need *n, const char *param, long entries, long count)
{
    need(n, param, count);
    n->out->entries[kernel_param(n->k, param)] = entries;
}

static int bad(Need *n, const char *msg)
{
    if (!n->why[0])
        snprintf(n->why, n->whylen, "%s", msg);
    return -1;
}

static void grid(Need *n, long x, long y, long z)
{
    n->out->grid[0] = x;
    n->out->grid[1] = y;
    n->out->grid[2] = z;
}

static long cdiv(long a, long b)
{
    return (a + b - 1) / b;
}

static int need_embed(Need *n)
{
    long D = C(n, "D"), R = C(n, "ROWS");
    need(n, "W", C(n, "V") * D);
    need(n, "ids", R);
    need(n, "y", R * D);
    need_out(n, "y");
    grid(n, R, 1, 1);
    if (C(n, "OQ") && D % 32)
        return bad(n, "a quantized output needs rows of whole 32-value blocks");
    return 0;
}

/* The parts of a product (gemv, mma): each part's weight, output, bias and
 * residual, the gated pair's two parts of one width; the units (output
 * rows, a gated pair's one) in *units, or -1 after bad(). */
static int need_parts(Need *n, long *units)
{
    static const char *W[] = {"W0", "W1", "W2", "W3"}, *Y[] = {"y0", "y1", "y2", "y3"},
                      *B[] = {"b0", "b1", "b2", "b3"}, *R[] = {"r0", "r1", "r2", "r3"},
                      *N[] = {"N0", "N1", "N2", "N3"};
    long K = C(n, "K"), P = C(n, "PARTS"), rows = C(n, "ROWS"), gate = C(n, "GATE");
    *units = 0;
    for (int p = 0; p < 4; p++) {
        long np = C(n, N[p]);
        if ((p < P) != (np > 0))
            return bad(n, "the parts' rows must be positive for the parts there are and 0 past them");
        if (p >= P)
            continue;
        need(n, W[p], np * K);
        if (!(gate && p == 1))
            need(n, Y[p], rows * np);
        if (C(n, "BIAS") >> p & 1)
            need(n, B[p], np);
        if (C(n, "RES") >> p & 1)
            need(n, R[p], rows * np);
        *units += gate && p == 1 ? 0 : np;
    }
    need_out(n, "y0");
    if ((C(n, "BIAS") | C(n, "RES")) >> P)
        return bad(n, "a bias or residual bit past the parts");
    if (C(n, "GS"))
        need(n, "gs", rows);
    if (gate && (P < 2 || C(n, "N0") != C(n, "N1")))
        return bad(n, "a gated pair needs two parts of one width");
    return 0;
}

/* A product in tiles (mma, mmh, mmv) quantizes in its epilogue (OQ) one
 * output of whole 32-value blocks; -1 after bad(). */
static int need_oq_output(Need *n)
{
    if (C(n, "OQ") && (C(n, "N0") % 32 || C(n, "PARTS") > 1 + (C(n, "GATE") != 0)))
        return bad(n, "a quantizing epilogue needs one output of whole 32-value blocks");
    return 0;
}

static int need_gemv(Need *n)
{
    long K = C(n, "K"), P = C(n, "PARTS"), rows = C(n, "ROWS"), gate = C(n, "GATE"), tr = C(n, "TR"),
         wr = C(n, "WR"), xq = C(n, "XQ"), xin = C(n, "XIN"), units;
    if (need_parts(n, &units))
        return -1;
    if ((C(n, "WQ") || xq) && K % 32)
        return bad(n, "quantized weights or activations need whole 32-value blocks");
    if (C(n, "NORM") && xin)
        return bad(n, "a norm prologue reads f32 activations");
    if (xin && xq && xin != xq)
        return bad(n, "quantized activations are read in their own format");
    if (C(n, "OQ") && (C(n, "N0") % 32 || wr != 4 || P > 1 + (gate != 0)))
        return bad(n, "a quantizing epilogue needs one output of whole 32-value blocks and 4 rows a warp");
    if (C(n, "ARGMAX") && P > 1 + (gate != 0))
        return bad(n, "the arg-max reads one output");
    if (C(n, "NOUT")) {
        if (!C(n, "NORM"))
            return bad(n, "the normed rows written out with no norm prologue");
        need(n, "xo", rows * K);
    }
    if (C(n, "PRE")) {
        if (!C(n, "NORM") || xin || K % 16 || K > 4096 || C(n, "NOUT") || C(n, "XG"))
            return bad(n, "a sandwich prologue (PRE) comes before a norm prologue, over f32 rows of whole 16-value "
                          "segments, at most 4096 values, not with NOUT or XG");
        need(n, "pw", K);
        need(n, "pr", rows * K);
        if (C(n, "XR"))
            need(n, "xo", rows * K);
    } else if (C(n, "XR")) {
        return bad(n, "XR writes the rows a sandwich prologue (PRE) makes");
    }
    if (C(n, "XG")) {
        long w = C(n, "XGW"), pitch = C(n, "XGP");
        if (C(n, "NORM") || xin || K % 16)
            return bad(n, "a gate prologue reads f32 activations of whole 16-value segments, with no norm");
        if (w % 16 || K % w || C(n, "XGA") + w > pitch || pitch % 4 || C(n, "XGA") % 4)
            return bad(n, "the gate's runs are whole 16-value segments that divide K, each within its pitch, "
                          "at places of whole 4-value words");
        need(n, "xg", rows * (K / w) * pitch);
    }
    need(n, "x", rows * K);
    need_etype(n, "x", act_etype(xin));
    if (C(n, "NW"))
        need(n, "nw", K);
    long g = cdiv(units, 8 * wr), blocks = C(n, "GRID"), pf = C(n, "PF");
    if (blocks > g)
        return bad(n, "GRID is at most the groups of units");
    if (pf && (!C(n, "WQ") || tr != 1 || rows != 1 || P != 1 || gate || C(n, "ARGMAX") || C(n, "NORM") ||
               C(n, "PRE") || C(n, "XG") || C(n, "NOUT") || units % (8 * wr)))
        return bad(n, "a preloading product (PF) reads Q8_0 weights in one part of whole groups, for one row, with no "
                      "norm, gate, arg-max or prologue");
    if (pf && blocks != cdiv(g, pf))
        return bad(n, "a preloading product (PF) takes PF groups a block: GRID is its groups over PF");
    if (C(n, "ARGMAX")) {
        need(n, "next", rows);
        need(n, "part", 2 + 2 * rows * blocks);
    }
    grid(n, blocks, 1, 1);
    long xrow = xq == 0 ? 4 * K : xq * K, red = tr * xrow + (xq ? tr * (K / 32) * 4 : 0);
    n->out->smem = red + 128 + 8 * wr * tr * 4;
    if (pf)   /* PF groups' weight rows, then their scales (gemv.cu's PF_OFF) */
        n->out->smem = cdiv(n->out->smem, 16) * 16 + pf * 8 * wr * (K + K / 16);
    if (n->out->smem > 227 * 1024)
        return bad(n, "the block's shared memory would pass the 227 KB a block may have");
    return 0;
}

static int need_norm(Need *n)
{
    long D = C(n, "D"), R = C(n, "ROWS");
    need(n, "x", R * D);
    if (C(n, "NW"))
        need(n, "w", D);
    if (C(n, "MODE"))
        need(n, "r", R * D);
    need(n, "y", R * D);
    need_out(n, "y");
    if (C(n, "MODE") == 3) {   /* norm_pair: y f32, then its own norm into y2 in format OQ */
        if (C(n, "NW"))
            need(n, "w2", D);
        need(n, "y2", R * D);
        need_out(n, "y2");
        need_etype(n, "y", ET_F32);
        if (C(n, "RPN") != 1 || C(n, "KIND"))
            return bad(n, "a pair of norms (MODE 3) takes RMS norms over whole rows (RPN 1, KIND 0)");
    }
    grid(n, R, 1, 1);
    if (R % C(n, "RPN"))
        return bad(n, "the rows are not a whole number of units of the size");
    if (C(n, "OQ") && D % 32)
        return bad(n, "a quantized output needs rows of whole 32-value blocks");
    return 0;
}

static int need_rope(Need *n)
{
    static const char *X[] = {"x0", "x1", "x2"}, *Y[] = {"y0", "y1", "y2"}, *NW[] = {"nw0", "nw1", "nw2"};
    static const char *H[] = {"H0", "H1", "H2"}, *Wc[] = {"W0", "W1", "W2"}, *XS[] = {"XS0", "XS1", "XS2"},
                      *OP[] = {"OP0", "OP1", "OP2"}, *NO[] = {"NORM0", "NORM1", "NORM2"},
                      *DS[] = {"DST0", "DST1", "DST2"}, *SR[] = {"SROWS0", "SROWS1", "SROWS2"},
                      *HP[] = {"HP0", "HP1", "HP2"}, *XA[] = {"XA0", "XA1", "XA2"}, *YS[] = {"YS0", "YS1", "YS2"},
                      *YA[] = {"YA0", "YA1", "YA2"};
    long P = C(n, "PARTS"), R = C(n, "ROWS"), rot = C(n, "ROT");
    for (int p = 0; p < 3; p++) {
        long h = C(n, H[p]), w = C(n, Wc[p]);
        if ((p < P) != (h > 0 && w > 0))
            return bad(n, "the parts' heads must be positive for the parts there are and 0 past them");
        if (p >= P)
            continue;
        long hp = C(n, HP[p]), xa = C(n, XA[p]), ys = C(n, YS[p]), ya = C(n, YA[p]);
        if (hp < w)
            return bad(n, "a part's heads are closer than its head width (HP below W)");
        if (xa + (h - 1) * hp + w > C(n, XS[p]))
            return bad(n, "a part's heads pass its row stride (XA + (H - 1) HP + W above XS)");
        need(n, X[p], (R - 1) * C(n, XS[p]) + xa + (h - 1) * hp + w);
        if (C(n, NO[p]))
            need(n, NW[p], w);
        if (C(n, DS[p]) && ya + h * w > ys)
            return bad(n, "a part's place passes the state's row (YA + H W above YS)");
        if (!C(n, DS[p]) && (ys != h * w || ya))
            return bad(n, "a part written as a tensor has no place in a row: YS is H W and YA 0");
        need(n, Y[p], C(n, DS[p]) ? C(n, SR[p]) * ys : R * h * w);
        if (C(n, OP[p]) && (rot > w || rot % 2))
            return bad(n, "the rotated width must be even and at most the head width");
    }
    need(n, "freq", rot / 2);
    need(n, "pos", C(n, "POS") == 1 ? R : 1);
    long hmax = C(n, "H0") > C(n, "H1") ? C(n, "H0") : C(n, "H1");
    hmax = hmax > C(n, "H2") ? hmax : C(n, "H2");
    grid(n, R, P, cdiv(hmax, 4));
    return 0;
}

/* A Hopper multiprocessor's shared memory, and what it keeps of it for
 * each resident block. */
enum { SM_SMEM = 228 * 1024, BLOCK_SMEM_RESERVED = 1024 };

/* attend.cu under TC: each warp's tile of 32 keys (16 under TC 2) and values as f16 at
 * pitches of 8 past their widths (over the slots and queries), then the
 * queries' A words (8 a value) and a float. */
static long tc_smem(long hd, long vd, long tc)
{
    return 4 * (tc == 2 ? 16 : 32) * (hd + vd + 16) * 2 + hd * 32 + 16;
}

static int need_attend(Need *n)
{
    long nh = C(n, "NH"), nkv = C(n, "NKV"), hd = C(n, "HD"), vd = C(n, "VD"), R = C(n, "ROWS"),
         ctx = C(n, "NCTX"), split = C(n, "SPLIT"), mode = C(n, "MODE"), hg = C(n, "HG");
    if (nh % nkv)
        return bad(n, "the query heads do not group over the key heads");
    if ((nh / nkv) % hg)
        return bad(n, "a block's query heads (HG) do not divide a key head's");
    if (C(n, "QS") < nh * hd)
        return bad(n, "the query row stride is less than its heads");
    if (split * C(n, "CHUNK") < ctx)
        return bad(n, "the chunks do not cover the rows");
    if (C(n, "BUSY") > split)
        return bad(n, "more busy blocks than chunks");
    if (vd % 2)
        return bad(n, "values are read a pair at a time: the value width must be even");
    if (C(n, "OQ") && vd % 32)
        return bad(n, "a quantized output needs values of whole 32-value blocks");
    if (mode == 2 && ctx > 65536)
        return bad(n, "constant rows are at most 65536");
    /* one row at one position, or a batch's rows (MODE 3) each at its own */
    int step = (mode == 0 && R == 1) || mode == 3;
    if (C(n, "EARLY") && !step)
        return bad(n, "EARLY loads are for one row at one position (MODE 0, ROWS 1) or a batch's rows (MODE 3)");
    if (C(n, "ROPE")) {   /* rope_attend: the queries turned, the newest key and value row appended */
        long rot = C(n, "ROT");
        if (!step)
            return bad(n, "a rope in the attention is for one row at one position (MODE 0, ROWS 1) or a batch's rows "
                       "(MODE 3)");
        if (rot < 2 || rot % 2 || rot > hd || hd > 1024)
            return bad(n, "the rope turns an even number of a head's values, at most the head (of at most 1024)");
        if (hg * (vd + 2) < hd)
            return bad(n, "a rope in the attention turns a head in a warp's shared slots: HD at most HG (VD + 2)");
        need(n, "kx", R * nkv * hd);
        need(n, "vx", R * nkv * vd);
        need(n, "freq", rot / 2);
        if (C(n, "NQ"))
            need(n, "qnw", hd);
        if (C(n, "NK"))
            need(n, "knw", hd);
    } else if (C(n, "ROT") || C(n, "NQ") || C(n, "NK")) {
        return bad(n, "ROT, NQ and NK are the rope's: 0 without ROPE");
    }
    need(n, "q", (R - 1) * C(n, "QS") + nh * hd);
    if (mode == 3) {   /* a batch: row t's position, keys and values in entry t of each table */
        need_table(n, "k", R, ctx * nkv * hd);
        need_table(n, "v", R, ctx * nkv * vd);
        need_table(n, "pos", R, 1);
    } else {
        need(n, "k", ctx * nkv * hd);
        need(n, "v", ctx * nkv * vd);
        if (mode != 2)
            need(n, "pos", mode == 1 ? R : 1);
    }
    if (C(n, "SINKS"))
        need(n, "sinks", nh);
    need(n, "y", R * nh * vd);
    need_out(n, "y");
    if (split > 1) {
        long ps = C(n, "BUSY") ? C(n, "BUSY") : split;   /* attend.cu's PS: a chunk's slot each */
        need(n, "part", R * nkv * ps * (nh / nkv) * (vd + 2));
        need(n, "cnt", R * nkv * (nh / nkv / hg));
    }
    int lr = (mode == 3 || mode == 0) && attend_lr(hd, vd, hg);
    if (C(n, "TC") && !attend_tc(mode, C(n, "KV"), hd, vd, hg))
        return bad(n, "TC (the tensor cores) is for a batch's rows (MODE 3) over f16 caches (KV 2), heads and values "
                   "of whole 32-value blocks up to 128, at most 4 query heads a block (HG)");
    (void)CF;
    grid(n, nkv * (nh / nkv / hg), C(n, "BUSY") ? C(n, "BUSY") : split, R);   /* at most BUSY chunks are busy */
    /* the warps' slots; a batch's (MODE 3) or a step's (MODE 0) with whole 32-value heads its
     * queries (attend.cu's LR); under TC its tiles instead (tc_smem) */
    n->out->smem = C(n, "TC") ? tc_smem(hd, vd, C(n, "TC")) : 4 * hg * (vd + 2) * 4 + (lr ? hg * hd * 4 : 0);
    return 0;
}

int attend_lr(long hd, long vd, long hg)
{
    return hd % 32 == 0 && vd % 32 == 0 && hg <= 4;
}

int attend_tc(long mode, long kv, long hd, long vd, long hg)
{
    return mode == 3 && kv == 2 && attend_lr(hd, vd, hg) && hd <= 128 && vd <= 128;
}

int attend_tc_blocks_per_sm(long hd, long vd, long tc)
{
    long b = SM_SMEM / (tc_smem(hd, vd, tc) + BLOCK_SMEM_RESERVED);
    return b < 4 ? (int)b : 4;   /* attend.cu's launch bounds: at least 3, registers for 4 */
}

/* flash.cu: tiles of 64 query rows (a key head's query heads stacked) by
 * BK key rows (64; 32 where a head or value row passes 128), staged as f16;
 * its opening comment has the layout. */
static int need_flash(Need *n)
{
    long nh = C(n, "NH"), nkv = C(n, "NKV"), hd = C(n, "HD"), vd = C(n, "VD"), R = C(n, "ROWS"),
         ctx = C(n, "NCTX"), bk = hd > 128 || vd > 128 ? 32 : 64;
    if (nh % nkv)
        return bad(n, "the query heads do not group over the key heads");
    if (hd % 16 || vd % 16)
        return bad(n, "the tensor cores take heads and values of whole 16-value steps");
    if (C(n, "QS") < nh * hd || C(n, "QS") % 4)
        return bad(n, "the query row stride is less than its heads, or not whole fours (read four values at a time)");
    if (C(n, "OQ") && vd % 32)
        return bad(n, "a quantized output needs values of whole 32-value blocks");
    need(n, "q", (R - 1) * C(n, "QS") + nh * hd);
    need(n, "k", ctx * nkv * hd);
    need(n, "v", ctx * nkv * vd);
    need(n, "pos", R);
    if (C(n, "SINKS"))
        need(n, "sinks", nh);
    need(n, "y", R * nh * vd);
    need_out(n, "y");
    grid(n, cdiv(R * (nh / nkv), 64), nkv, 1);
    long tiles = 2 * (64 * (hd + 8) + bk * (hd + 8) + vd * (bk + 8)), out = 4 * 16 * 33 * 4;
    n->out->smem = tiles > out ? tiles : out;
    return 0;
}

static int need_argmax(Need *n)
{
    long R = C(n, "ROWS");
    need(n, "x", R * C(n, "V"));
    need(n, "y", R);
    grid(n, R, 1, 1);
    return 0;
}

static int need_elem(Need *n)
{
    long N = C(n, "N"), R = C(n, "ROWS");
    if (N % R)
        return bad(n, "the values are not a whole number of rows");
    need(n, "a", C(n, "AMOD"));
    if (!C(n, "BLIT") && C(n, "OP") <= 3)
        need(n, "b", C(n, "BMOD"));
    need(n, "y", N);
    grid(n, cdiv(N, 256), 1, 1);
    return 0;
}

static int need_copy(Need *n)
{
    long R = C(n, "ROWS"), src = C(n, "SRC"), dst = C(n, "DST");
    if (C(n, "W") + C(n, "XAT") > C(n, "XW") || C(n, "W") + C(n, "YAT") > C(n, "YW"))
        return bad(n, "the copied values lie outside a row");
    if (src == 1 && R != 1)
        return bad(n, "the last row is one row");
    if ((src >= 2 || dst == 1) && src >= 2 && dst == 1)
        return bad(n, "rows are taken by index on one side only");
    need(n, "x", C(n, "XROWS") * C(n, "XW"));
    need(n, "y", C(n, "YROWS") * C(n, "YW"));
    if (src >= 2 || dst == 1)
        need(n, "idx", R);
    grid(n, R, 1, 1);
    return 0;
}

static int need_range(Need *n)
{
    need(n, "start", 1);
    need(n, "y", C(n, "ROWS"));
    grid(n, cdiv(C(n, "ROWS"), 256), 1, 1);
    return 0;
}

/* A row read in place: rows of `stride` values, `width` of them from `at`. */
static int row_read(Need *n, const char *param, long rows, long stride, long at, long width)
{
    if (at + width > stride)
        return bad(n, "a row read lies outside its row");
    need(n, param, (rows - 1) * stride + at + width);
    return 0;
}

static int need_conv(Need *n)
{
    long ch = C(n, "C"), kw = C(n, "KW"), R = C(n, "ROWS");
    if (row_read(n, "x", R, C(n, "XS"), C(n, "XA"), ch) ||
        (C(n, "GIN") && row_read(n, "x2", R, C(n, "X2S"), C(n, "X2A"), ch)) ||
        (C(n, "GOUT") && row_read(n, "g", R, C(n, "GS"), C(n, "GA"), ch)))
        return -1;
    if (C(n, "OQ") && ch % 32)
        return bad(n, "a quantized output needs rows of whole 32-value blocks");
    need(n, "R", (kw - 1) * ch);
    need(n, "w", ch * kw);
    if (C(n, "BIAS"))
        need(n, "b", ch);
    need(n, "y", R * ch);
    need_out(n, "y");
    grid(n, cdiv(ch, 128), 1, 1);
    return 0;
}

static int need_route(Need *n)
{
    long e = C(n, "E"), R = C(n, "ROWS"), g = C(n, "GROUPS");
    if (e % g || C(n, "TG") > g)
        return bad(n, "the experts do not fall in whole groups, or more groups are kept than there are");
    if (C(n, "K") > e / g * C(n, "TG"))
        return bad(n, "more experts kept than the kept groups hold");
    need(n, "x", R * e);
    if (C(n, "BIAS"))
        need(n, "b", e);
    need(n, "y", R * e);
    grid(n, R, 1, 1);
    n->out->block = e <= 256 ? 32 : (int)(32 * cdiv(e, 32));   /* a warp a row, or a thread an expert */
    return 0;
}

static int need_moe(Need *n)
{
    long d = C(n, "D"), ff = C(n, "FF"), e = C(n, "E"), k = C(n, "K"), R = C(n, "ROWS"), sh = C(n, "SH");
    if (k > e)
        return bad(n, "more experts kept than there are");
    if (C(n, "WQ") && (d % 32 || ff % 32))
        return bad(n, "quantized weights need whole 32-value blocks");
    if ((C(n, "XQ") && d % 32) || (C(n, "HQ") && ff % 32))
        return bad(n, "rounded activations need whole 32-value blocks");
    if (sh && C(n, "ACT") == 2)
        return bad(n, "a shared expert takes silu or gelu_tanh");
    if (C(n, "GSH") && !sh)
        return bad(n, "a shared expert's gate with no shared expert");
    if (C(n, "XEARLY") && C(n, "PHASE"))
        return bad(n, "x staged before the wait is the gate and up launch's");
    need(n, "rt", R * e);
    need(n, "h", R * (k + sh) * ff);   /* the kept experts' hidden rows, then the shared expert's segments */
    if (C(n, "PHASE") == 0) {
        need(n, "Wg", e * ff * d);
        need(n, "Wu", e * ff * d);
        need(n, "x", R * d);
        if (C(n, "GB")) {
            need(n, "bg", e * ff);
            need(n, "bu", e * ff);
        }
        if (sh) {
            need(n, "Wsg", sh * ff * d);
            need(n, "Wsu", sh * ff * d);
        }
        if (R > 1)   /* stacked rows the fastest index (moe.cu's RT) */
            grid(n, R, k + sh, cdiv(ff, 32));
        else
            grid(n, cdiv(ff, 32), k + sh, R);   /* x staged: f32, or quantized (Q8_0 experts) */
        long xq = C(n, "WQ") ? C(n, "XQ") : 0;
        n->out->smem = etype_bytes(act_etype(xq), d);
        return 0;
    }
    need(n, "Wd", e * d * ff);
    if (C(n, "DB"))
        need(n, "bd", e * d);
    need(n, "y", R * d);
    if (C(n, "RES"))
        need(n, "r", R * d);
    if (sh)
        need(n, "Wsd", d * sh * ff);
    if (C(n, "GSH"))
        need(n, "gs", R);
    if (R > 1)
        grid(n, R, cdiv(d, 8), 1);
    else
        grid(n, cdiv(d, 8), R, 1);   /* h staged when f32; read where it lies when quantized */
    n->out->smem = C(n, "WQ") && C(n, "HQ") ? 0 : 4 * (k + sh) * ff;
    if (n->out->smem > 227 * 1024)
        return bad(n, "the kept experts' hidden values pass the shared memory of a block");
    return 0;
}
static int need_delta(Need *n)
{
    long nk = C(n, "NK"), nv = C(n, "NV"), dk = C(n, "DK"), dv = C(n, "DV"), R = C(n, "ROWS");
    if (nv % nk || dk % 4)
        return bad(n, "the value heads are not whole groups of the key heads, or the key width is not whole fours");
    if (row_read(n, "q", R, C(n, "QX"), C(n, "QA"), nk * dk) || row_read(n, "k", R, C(n, "KX"), C(n, "KA"), nk * dk) ||
        row_read(n, "v", R, C(n, "VX"), C(n, "VA"), nv * dv))
        return -1;
    need(n, "g", R * nv);
    need(n, "beta", R * nv);
    if (C(n, "GF"))
        need(n, "ga", nv);
    need(n, "S", nv * dk * dv);
    need(n, "y", R * nv * dv);
    grid(n, nv, cdiv(dv, 32), 1);
    return 0;
}

/* mma.cu: tiles of BM (64 or 128) rows by 128 weight rows (64 units under
 * GATE), three stages of 128 values of K (two for a8x2 at BM 64); its
 * opening comment has the layout, and the shared memory here is its INV_AT
 * plus the norm's factors. */
static int need_mma(Need *n)
{
    long K = C(n, "K"), rows = C(n, "ROWS"), gate = C(n, "GATE"), xq = C(n, "XQ"),
         xin = C(n, "XIN"), bm = C(n, "BM"), units;
    if (need_parts(n, &units))
        return -1;
    if (K % 32)
        return bad(n, "the tensor cores take whole 32-value slabs of K");
    if (bm != 64 && bm != 128)
        return bad(n, "a block takes 64 or 128 rows (BM)");
    if (C(n, "NORM") && xin)
        return bad(n, "a norm prologue reads f32 activations");
    if (xin && xin != xq)
        return bad(n, "quantized activations are read in their own format");
    if (need_oq_output(n))
        return -1;
    need(n, "x", rows * K);
    need_etype(n, "x", act_etype(xin));
    if (C(n, "NW"))
        need(n, "nw", K);
    if (cdiv(units, gate ? 64 : 128) > 65535)
        return bad(n, "more than 65535 tiles of weight rows");
    if (C(n, "SK") > cdiv(K, 128))
        return bad(n, "more splits of K (SK) than stages of 128 values");
    grid(n, cdiv(rows, bm), cdiv(units, gate ? 64 : 128), C(n, "SK"));
    long stage = (xq * bm + 128) * 144 + bm * 16 + 128 * 16, tile = bm * 129 * 4, stages = xq == 2 && bm == 64 ? 2 : 3;
    n->out->smem = (stages * stage > tile ? stages * stage : tile) + bm * 4;
    return 0;
}

/* mmh.cu: tiles of 128 rows (256 under TM) by BN weight rows (BN / 2 gate
 * rows and their up rows under GATE), each part's tiles end to end; its
 * opening comment has the layout: the ring of 4 stages (6 at BN 128, 5
 * under TM), the f16 tiles (none under TM), the stages' mbarriers and 1 KB
 * to align. Its tensor maps are the lane's, not the plan's. */
long mmh_tiles(long bn, long gate, const long *np, int parts)
{
    long bp = gate ? bn / 2 : bn, t = 0;
    for (int p = 0; p < parts; p++)
        t += gate && p == 1 ? 0 : cdiv(np[p], bp);
    return t;
}

long mmh_smem(long bn, long xin, long tm, long kper)
{
    if (tm == 64)   /* x resident: 5 stages of W and its scales, x's kper atoms, the mbarriers, the sums' tile */
        return 5 * (cdiv(bn * 64 + bn * 16, 1024) * 1024) + kper * 64 * 128 + cdiv(8 * (5 + kper), 16) * 16 +
               64 * (bn + 1) * 4 + 1024;
    if (tm)   /* W in registers: 5 stages of x's 256 rows (f16), W and its scales; no f16 tiles */
        return 5 * (cdiv(tm * 128 + bn * 64 + bn * 16, 1024) * 1024) + 8 * 5 + 1024;
    long x = xin == 3 ? 128 * 64 * 2 : 128 * 64 + 128 * 16;   /* a stage's x: a8h's f16, or a8's with scales */
    long stages = bn == 256 ? 4 : 6, slot = cdiv(x + bn * 64 + bn * 16, 1024) * 1024;
    return stages * slot + (xin == 3 ? 0 : 2 * 128 * 128) + 2 * bn * 128 + 8 * stages + 1024;
}

/* mmh with x resident (TM 64, mmh.cu's XR): at most 64 rows of x a8h,
 * tiles of 128 weight rows, a cluster of SK (1 to 16) blocks along z a tile (each
 * its K / SK values of x held whole: 256 to 1024, whole 256-value blocks),
 * CY clusters along y taking the tiles in turn. */
static int need_mmh_xr(Need *n, long K, long sk, long cy, long rows, long bn)
{
    if (C(n, "XIN") != 3 || bn != 128)
        return bad(n, "x resident (TM 64) reads x a8h (XIN 3) in tiles of 128 weight rows (BN)");
    if (rows > 64)
        return bad(n, "x resident (TM 64) holds at most 64 rows of x");
    if (C(n, "TAIL"))
        return bad(n, "x resident (TM 64) takes no tail split (TAIL)");
    if (K % (sk * 256) || K / sk > 1024)
        return bad(n, "x resident (TM 64) splits K (SK) into whole 256-value blocks of at most 1024 values");
    if (cy < 1)
        return bad(n, "x resident (TM 64) takes 1 or more clusters along y (CY)");
    need(n, "x", rows * K);
    need_etype(n, "x", act_etype(3));
    grid(n, 1, cy, sk);
    n->out->smem = mmh_smem(bn, 3, 64, K / 64 / sk);
    return 0;
}

static int need_mmh(Need *n)
{
    long K = C(n, "K"), P = C(n, "PARTS"), rows = C(n, "ROWS"), gate = C(n, "GATE"), bn = C(n, "BN"), units;
    long np[4] = {C(n, "N0"), C(n, "N1"), C(n, "N2"), C(n, "N3")};
    if (need_parts(n, &units))
        return -1;
    if (K % 256)
        return bad(n, "the f16 tiles take K in whole 256-value blocks");
    if (bn != 128 && bn != 256)
        return bad(n, "a tile is 128 or 256 weight rows (BN)");
    if (gate && P != 2)
        return bad(n, "a gated pair in f16 tiles has no other parts");
    if (need_oq_output(n))
        return -1;
    if (C(n, "XIN") == 2)
        return bad(n, "the f16 tiles read x a8 (XIN 1) or a8h (XIN 3)");
    long tail = C(n, "TAIL"), tm = C(n, "TM"), bm = tm ? tm : 128, sk = C(n, "SK"), cy = C(n, "CY");
    if (tm == 64)
        return need_mmh_xr(n, K, sk, cy, rows, bn);
    if (sk == 3 || sk > 4)
        return bad(n, "K splits in 1, 2 or 4 (SK)");
    if (cy)
        return bad(n, "clusters along y (CY) only with x resident (TM 64)");
    if (tail && sk > 1)
        return bad(n, "a tail split (TAIL) or clusters (SK), not both");
    if (tm && tm != 256)
        return bad(n, "W in registers takes tiles of 256 rows of x (TM 256) or 64 with x resident (TM 64), or none (TM 0)");
    if (tm && (C(n, "XIN") != 3 || bn != 128))
        return bad(n, "W in registers (TM) reads x a8h (XIN 3) in tiles of 128 weight rows (BN)");
    need(n, "x", rows * K);
    need_etype(n, "x", act_etype(C(n, "XIN")));
    long tiles = mmh_tiles(bn, gate, np, (int)P);
    if (tiles > 65535)
        return bad(n, "more than 65535 tiles of weight rows");
    if (tail > cdiv(rows, bm) * tiles)
        return bad(n, "more tail tiles (TAIL) than tiles");
    if (tail) {   /* each tail tile's two halves' sums, and its count */
        need(n, "part", 2 * tail * bm * bn);
        need(n, "cnt", tail);
    }
    /* under TAIL the second halves' blocks in rows of the grid's own after the tiles' */
    grid(n, cdiv(rows, bm), tiles + (tail ? cdiv(tail, cdiv(rows, bm)) : 0), C(n, "SK"));
    n->out->smem = mmh_smem(bn, C(n, "XIN"), tm, 0);
    return 0;
}

long mmv_smem(long K, long nt, long xq, int xs, int depth)
{
    /* mmv.cu's XP (a staged row's pitch: 8 words past a multiple of 32)
     * and RP (36 floats an activation row's sums, two tiles' in turn) */
    long pitch = K + 4 * ((8 - K / 4 % 32 + 32) % 32), nb = 8 * nt;
    long act = nb * pitch * xq + nb * (K / 32) * 4, slice = nb * xq * 128 + nb * 16, sums = 2 * 8 * nb * 36 * 4;
    return sums + (xs == 1 ? act : 0) + 8L * depth * (32 * 128 + 32 * 8 + (xs == 2 ? slice : 0));
}

/* Is mmv.cu's K split unevenly between its warps? Its 8 computing warps
 * (KS = 4 slices under GATE, 8 else) take steps of 128 values in turn;
 * where the longest slice has a quarter more steps than their mean the
 * others idle that long (Gemma-2-2B's q/k/v at K 2304: 3 steps against
 * 2.25). */
int mmv_uneven(long K, int gated)
{
    long steps = (K + 127) / 128, ks = gated ? 4 : 8, most = (steps + ks - 1) / ks;
    return 4 * most * ks >= 5 * steps;
}

/* mmi.cu: tiles of 128 weight rows (64 gate rows and their up rows under
 * GATE) by at most 64 rows of x (NR: wgmma's N), stages of 256 values of
 * K in a ring of STAGES slots (the weights' two boxes and scales, x's two
 * atoms and scales), the sums' tile (NR x 129 floats), the mbarriers, 1 KB
 * to align; GRID blocks share the tiles' stages (stream-K), each leaving
 * the part of a tile its run begins inside in part (one place a block)
 * and counting it in cnt (one a tile). */
long mmi_smem(long nr, long stages)
{
    long slot = cdiv(cdiv(2 * 128 * 128 + 128 * 16, 1024) * 1024 + 2 * nr * 128 + nr * 32, 1024) * 1024;
    return cdiv(stages * slot + nr * 129 * 4, 16) * 16 + 8 * stages + 1024;
}

static int need_mmi(Need *n)
{
    long K = C(n, "K"), P = C(n, "PARTS"), rows = C(n, "ROWS"), gate = C(n, "GATE"), nr = C(n, "NR"), units;
    long np[4] = {C(n, "N0"), C(n, "N1"), C(n, "N2"), C(n, "N3")};
    if (need_parts(n, &units))
        return -1;
    if (K % 256)
        return bad(n, "int8 wgmma takes K in whole 256-value stages");
    if (nr != 16 && nr != 32 && nr != 64)
        return bad(n, "x's rows a wgmma (NR) are 16, 32 or 64");
    if (rows > nr)
        return bad(n, "more rows of x (ROWS) than a wgmma takes (NR)");
    if (gate && P != 2)
        return bad(n, "a gated pair in int8 tiles has no other parts");
    if (need_oq_output(n))
        return -1;
    long tiles = mmh_tiles(128, gate, np, (int)P), grid_ = C(n, "GRID");   /* mmh's tiles of 128 rows */
    if (grid_ > tiles * (K / 256))
        return bad(n, "GRID is at most the tiles' stages");
    need(n, "x", rows * K);
    need_etype(n, "x", act_etype(1));
    need(n, "part", grid_ * 128 * nr);
    need(n, "cnt", tiles);
    grid(n, grid_, 1, 1);
    n->out->smem = mmi_smem(nr, C(n, "STAGES"));
    if (n->out->smem > 227 * 1024)
        return bad(n, "its ring of STAGES stages passes the shared memory of a block");
    return 0;
}

/* mmv.cu: GRID blocks a pass over tiles of 32 units, passes of 8 NT
 * activation rows already quantized, two tiles' sums in shared memory
 * ([KS][RG][8 NT][36] floats: 8 x 8 NT x 36 a tile). */
static int need_mmv(Need *n)
{
    long K = C(n, "K"), rows = C(n, "ROWS"), nt = C(n, "NT"), units;
    if (need_parts(n, &units))
        return -1;
    if (K % 32)
        return bad(n, "the tensor cores take whole 32-value slabs of K");
    if (need_oq_output(n))
        return -1;
    need(n, "x", rows * K);
    need_etype(n, "x", act_etype(C(n, "XQ")));
    if (C(n, "SQ")) {   /* norm_split's producer: the norm's quants, its sums of squares a 32-value block */
        long n0 = C(n, "N0");
        if (C(n, "PARTS") > 1 || C(n, "GATE") || C(n, "OQ") || n0 % 32)
            return bad(n, "the norm's half (SQ) takes one f32 output of whole 32-value blocks");
        if (C(n, "NW"))
            need(n, "nw", n0);
        need(n, "q", rows * n0);
        need_etype(n, "q", act_etype(C(n, "SQ")));
        need(n, "so", rows * (n0 / 32));
    }
    if (C(n, "RN"))     /* norm_split's reader: the sums its producer left */
        need(n, "ss", rows * (K / 32));
    if (C(n, "GRID") > cdiv(units, 32))
        return bad(n, "GRID is at most the tiles of 32 units");
    grid(n, C(n, "GRID"), cdiv(rows, 8 * nt), 1);
    /* the sums, the pass's activation rows under XS, the warps' rings of
     * DEPTH stages (32 rows' 128 bytes and their scales) */
    n->out->smem = mmv_smem(K, nt, C(n, "XQ"), C(n, "XS"), C(n, "DEPTH"));
    if (n->out->smem > 227 * 1024)
        return bad(n, "its rings of DEPTH stages and its staged rows pass the shared memory of a block");
    return 0;
}

/* What latent and latent_expand both read: the query's two parts, the
 * cache and the expansion's halves; -1 where the shapes do not fit. */
static int need_latent_reads(Need *n)
{
    long nh = C(n, "NH"), nope = C(n, "NOPE"), qw = C(n, "QW"), rope = C(n, "ROPE"), lora = C(n, "LORA"),
         vd = C(n, "VD"), R = C(n, "ROWS");
    if (nope > qw)
        return bad(n, "a query head's unrotated part is wider than the head");
    if ((C(n, "KQ") || C(n, "VQ")) && lora % 32)
        return bad(n, "quantized halves of the expansion need whole 32-value blocks");
    need(n, "qr", R * nh * qw);
    need(n, "qp", R * nh * rope);
    need(n, "kc", C(n, "NCTX") * (lora + rope));
    need(n, "wk", nh * nope * lora);
    need(n, "wv", nh * vd * lora);
    return 0;
}

static int need_latent(Need *n)
{
    long nh = C(n, "NH"), nope = C(n, "NOPE"), lora = C(n, "LORA"), vd = C(n, "VD"), R = C(n, "ROWS"),
         mode = C(n, "MODE");
    if (need_latent_reads(n))
        return -1;
    if (mode != 2)
        need(n, "pos", mode == 1 ? R : 1);
    need(n, "y", R * nh * vd);
    long split = C(n, "SPLIT");
    if (split > 1) {
        need(n, "part", R * nh * split * (lora + 2));
        need(n, "cnt", R * nh);
    }
    grid(n, nh, split, R);
    n->out->smem = 4 * (nope + 2 * lora + 8 * (lora + 2) + 2 * split);
    return 0;
}

static int need_latent_expand(Need *n)
{
    long nh = C(n, "NH"), nope = C(n, "NOPE"), rope = C(n, "ROPE"), vd = C(n, "VD"), R = C(n, "ROWS"),
         ctx = C(n, "NCTX");
    if (need_latent_reads(n))
        return -1;
    need(n, "pos", R);   /* MODE 1, the only one */
    need(n, "k", ctx * nh * (nope + rope));
    need(n, "v", ctx * nh * vd);
    need(n, "q", R * nh * (nope + rope));
    grid(n, cdiv(ctx, 64) + cdiv(R, 16), cdiv(nh * (nope + vd), 128), 1);
    return 0;
}

int gemv_blocks_per_sm(long k, int wq, long slots, long tr, int gated, int xq, int norm, int argmax)
{
    long cv = wq ? 16 : k % 4 == 0 ? 4 : 1, kc = k / cv;   /* gemv.cu's CV and KC: values a chunk, chunks a row */
    int whole = kc % 32 == 0, db = tr == 1 && (whole || (kc > 32 && !(gated && xq == 2)));   /* its WHOLE, DB */
    if (argmax && db && (kc <= 64 || !whole) && !(xq == 2 && !whole))   /* its HEAD3 */
        return 3;
    return db || slots > 4 || tr > 1 || norm ? 2 : 3;   /* its MINB */
}

int kernel_need(int k, const double *c, KNeed *out, char *why, size_t whylen)
{
    static int (*const fns[KN_COUNT])(Need *) = {
        [KN_EMBED] = need_embed, [KN_GEMV] = need_gemv, [KN_NORM] = need_norm, [KN_ROPE] = need_rope,
        [KN_ATTEND] = need_attend, [KN_FLASH] = need_flash, [KN_ARGMAX] = need_argmax, [KN_ELEM] = need_elem, [KN_COPY] = need_copy,
        [KN_RANGE] = need_range, [KN_CONV] = need_conv,
        [KN_ROUTE] = need_route, [KN_MOE] = need_moe,
        [KN_MMA] = need_mma, [KN_MMV] = need_mmv, [KN_MMH] = need_mmh, [KN_MMI] = need_mmi,
        [KN_LATENT] = need_latent, [KN_LATENT_EXPAND] = need_latent_expand,
        [KN_DELTA] = need_delta,
    };
    memset(out, 0, sizeof *out);
    for (int i = 0; i < KMAXP; i++)
        out->count[i] = -1, out->etype[i] = -1;
    out->block = kernel_info(k)->threads;
    why[0] = 0;
    Need n = {k, c, out, why, whylen};
    return fns[k](&n);
}

/* ---- sources ---- */

static const char *file_text(const char *name)
{
    for (int i = 0; kernel_files[i][0]; i++)
        if (strcmp(kernel_files[i][0], name) == 0)
            return kernel_files[i][1];
    BUG("a kernel's file is not embedded");
}

const char *kernel_common(void)
{
    return file_text("common.cuh");
}

/* A constant as C++ source: whole numbers exactly, numbers to float's
 * precision and back. */
void kernel_const_text(const KConst *kc, double v, char *buf, size_t n)
{
    if (kc->isf)
        snprintf(buf, n, "%.9g", v);
    else
        snprintf(buf, n, "%ld", (long)v);
}

/* The bytes of body with each line `#include "NAME"` of an embedded file
 * other than common.cuh (which NVRTC is given as a header) replaced by that
 * file's text, one level deep: how the product kernels share parts.cuh
 * after their constants. */
static size_t body_len(const char *body, char *out)
{
    size_t len = 0;
    for (const char *p = body; *p;) {
        const char *nl = strchr(p, '\n'), *end = nl ? nl + 1 : p + strlen(p);
        char name[64];
        const char *text = NULL;
        if (sscanf(p, "#include \"%63[^\"]\"", name) == 1 && strcmp(name, "common.cuh"))
            text = file_text(name);
        size_t n = text ? strlen(text) : (size_t)(end - p);
        if (out)
            memcpy(out + len, text ? text : p, n);
        len += n;
        p = end;
    }
    return len;
}

int kernel_marks_env(void)
{
    const char *e = getenv("LOGOS_TIMELINE");
    return e && *e && strcmp(e, "0");
}

int plan_kernel_flags(const Plan *pl, int marks)
{
    return (plan_rule(pl, "early_trigger") ? KS_EARLY : 0) | (marks ? KS_MARKS : 0);
}

int kernel_early_safe(int k)
{
    switch (k) {
    case KN_EMBED: case KN_GEMV: case KN_ATTEND: case KN_NORM: case KN_ELEM: case KN_ROPE: case KN_ARGMAX:
    case KN_COPY: case KN_RANGE:
        return 1;
    default:
        return 0;
    }
}

char *kernel_source(int k, const double *c, int flags)
{
    const Kernel *kn = kernel_info(k);
    const char *body = file_text(kn->file);
    size_t blen = body_len(body, NULL), cap = blen + 8192, len = 0;
    char *s = malloc(cap);
    if (!s) {
        diag("out of memory");
        exit(EXIT_SYSTEM);
    }
    if (flags & KS_MARKS)
        len += (size_t)snprintf(s + len, cap - len, "#define LOGOS_TL 1\n");
    if (flags & KS_EARLY)   /* rule early_trigger: kernels/common.cuh's LOGOS_ET */
        len += (size_t)snprintf(s + len, cap - len, "#define LOGOS_ET 1\n");
    len += (size_t)snprintf(s + len, cap - len, "#include \"common.cuh\"\n");
    for (int i = 0; i < kn->nc; i++) {
        char v[64];
        kernel_const_text(&kn->c[i], c[i], v, sizeof v);
        len += (size_t)snprintf(s + len, cap - len, kn->c[i].isf ? "constexpr float %s = (float)%s;\n" : "constexpr long %s = %s;\n",
                                kn->c[i].name, v);
        if (!kn->c[i].isf)   /* for the preprocessor too, where a pragma's form depends on it (#if LOGOS_NT <= 3) */
            len += (size_t)snprintf(s + len, cap - len, "#define LOGOS_%s %s\n", kn->c[i].name, v);
    }
    body_len(body, s + len);
    s[len + blen] = 0;
    return s;
}

char *lane_kernel_source(const char *file, const char *consts)
{
    const char *body = file_text(file);
    size_t n = strlen(body) + strlen(consts) + 64;
    char *s = malloc(n);
    if (!s) {
        diag("out of memory");
        exit(EXIT_SYSTEM);
    }
    snprintf(s, n, "#include \"common.cuh\"\n%s\n%s", consts, body);
    return s;
}
