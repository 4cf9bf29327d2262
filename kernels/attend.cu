// attend.cu — attention of query rows over rows of keys and values, in
// chunks of key rows that are merged at the end (split attention):
//
//   for row t < rows (n or ROWS) and head h < NH, its key head g = h / (NH / NKV):
//     hi = MODE 0: *pos   1: pos[t]   2: NCTX   3: *pos[t]   (at most NCTX)
//     lo = WINDOW and hi > WINDOW ? hi - WINDOW : 0
//     s_j = SCALE q[t, h, :] . K[j, g, :]   (CAP > 0: CAP tanh(s_j / CAP))    lo <= j < hi
//     y[t, h, :] = sum_j e^(s_j - m) V[j, g, :] / (sum_j e^(s_j - m) [+ e^(sinks[h] - m)])
//
// Shapes: q (rows, NH, HD) f32 at row stride QS; K (NCTX, NKV, HD) and V
// (NCTX, NKV, VD) f32, or f16 (KV 2); y (rows, NH, VD) in format OQ.
// MODE 3 (a batch of decode steps, row t its sequence t's): pos, K and V
// are tables of ROWS addresses, row t reading its position at pos[t] and
// its own cache K[t], V[t] (the lane writes the tables once, at load). Values
// are read in place from an even place at an even pitch, a pair at a time
// or two pairs (VD even). Where HD and VD are whole 32-value blocks (CONT),
// a lane holds HD/32 consecutive key values and VD/32 consecutive values of
// a row, read as 16-byte (or 8-, 4-byte) words; otherwise lane i holds
// values i, i + 32, ... of a key and pairs 2i, 2i + 64, ... of a value row.
// EARLY (a decode step, or a batch's, whose positions the host wrote): the
// first round's key and value rows but the newest are loaded before the
// wait for the launch before, which appends only that row.
// ROPE (rule rope_attend, a decode step or a batch's, MODE 3): q, kx
// (rows, NKV, HD) and vx (rows, NKV, VD) are the rows as the products made
// them, and the attention does the rope's work (rope.cu's
// math): each warp turns its block's G query heads (NQ: each first divided
// by its root mean square and times qnw + ROFF), the first ROT values as
// NEOX pairs (i, i + ROT/2) by the angle (pos - 1) freq[i] taken in f64
// down to [-pi, pi], times AF; and the block of the newest row turns key
// head g of row t of kx (NK: under knw) and appends it with value head g of
// row t of vx at row pos - 1 of row t's K and V before any row is read.
// Launch: grid (NKV GB, BUSY or else SPLIT, ROWS), block 128 (4 warps), GB
// = (NH / NKV) / HG. Block (u, c, t) takes chunk c of the rows [lo, hi)
// (chunks of the larger of CHUNK rows and (hi - lo) / BUSY, so that a short
// context keeps BUSY blocks busy and no more) for the G = HG query heads
// HG (u % GB) .. + HG of key head g = u / GB (HG below NH / NKV where a
// group's heads would not fit a thread's registers: the group's key and
// value rows are then read by GB blocks, each appending the newest under
// ROPE, the same values; a decode step's too where fewer heads leave room
// for a chunk's rows in one round, R below), and returns at once when
// they are none of them (so a short context keeps few blocks busy, and
// those few finish soon); its
// warps take the rows in turn, R a round each (their keys and values loaded
// before any is used), each keeping a running maximum, sum and weighted
// values per head, then merge in shared memory. When a row's keys span
// several chunks, each busy block leaves (m, l, o[VD]) per head in part
// (PS slots a row and head group: BUSY, or SPLIT where BUSY is 0), and the
// last of them to finish (cnt counts them) merges them into y and sets its
// count back to 0: each row its own part and count (a batch's sequences
// never share them).
// LR (a batch's attention, MODE 3, or a decode step's, MODE 0, in chunks of
// at least LRR rows; heads of whole 32-value blocks, at most 4 a block;
// decided at run time under MODE 0, the other way's rows' registers live
// on its side alone): a warp takes its rows 32 at a time, a row a lane for the
// scores (the whole dot product of each query head, the block's queries
// read from shared memory: no warp sum a row, each exponential once),
// then each lane its VD/32 values of every row, the row's weights from
// its lane.
// TC (LR over f16 caches, KV 2, heads and values of at most 128): each
// warp's tiles of 32 rows (TC 1; 16 rows under TC 2) on the tensor cores
// instead (tc_rows), at least three blocks a multiprocessor (four where
// their shared memory allows: TC 2's tiles leave room for four with heads
// of 128, so that a batch's 512 head blocks are one wave of 132 x 4).
// Shared memory: 4 G (VD + 2) floats, then under LR the G query heads
// (G HD floats); under TC over them the warps' tiles (4 x BKT (HD + VD +
// 16) halves), then the queries' A words (8 HD) and their scale's inverse.

constexpr int GG = NH / NKV;                        // query heads a key head
constexpr int G = HG;                               // query heads a block
constexpr int GB = GG / HG;                         // blocks a key head
constexpr int CONT = HD % 32 == 0 && VD % 32 == 0;
constexpr int QP = (HD + 31) / 32;                  // key values a lane holds
constexpr int VN = CONT ? VD / 32 : 2 * ((VD + 63) / 64);   // values a lane holds
constexpr int SLOT = VD + 2;                        // m, l, then the values
constexpr int PS = BUSY ? BUSY : SPLIT;             // chunks' slots a row and head group in part
// Key rows a warp loads together: as many as the registers left by the
// heads' queries and sums hold with a score a head each (88 values in
// all; 80 with the heads' running maxima and sums counted when the rope's
// turning needs registers of its own; 12 fewer for a batch's rows, MODE 3,
// whose row and its caches' addresses stay live), 2 to 8 (1 to 8 under
// MODE 3: heads of 256 values leave room for one row a round).
constexpr int RW = ((ROPE ? 80 - G * (QP + VN + 2) : 88 - G * (QP + VN)) - (MODE == 3 ? 12 : 0)) / (QP + VN + G);
constexpr int RMIN = MODE == 3 ? 1 : 2;
constexpr int R = RW > 8 ? 8 : RW < RMIN ? RMIN : RW;
constexpr int LR = (MODE == 3 || MODE == 0) && CONT && G <= 4;   // a row a lane may be taken (7-8 heads spill)
constexpr long LRR = 64;                            // MODE 0: a chunk's rows from which it is taken
constexpr int QS_AT = 4 * G * SLOT;                 // LR: the queries, after the slots (floats)
constexpr int KW = KV == 2 ? 8 : 4;                 // LR: key values a 16-byte load
constexpr int KB = HD / KW < 8 ? HD / KW : 8;        // LR: a lane's key loads in flight (128 bytes)
constexpr int VBY = VN * (KV == 2 ? 2 : 4);         // LR: bytes of a row's values a lane holds
constexpr int VW = (VBY + 3) / 4;                   // LR: their words
constexpr int VB = 32 / VW < 32 ? 32 / VW : 32;     // LR: value rows in flight (32 words a lane)
// TC (a batch's attention under LR with f16 caches, heads and values of at
// most 128): the tiles' products on the tensor cores (see tc_rows)
constexpr int BKT = TC == 2 ? 16 : 32;              // TC: keys a warp's tile
constexpr int KPT = HD + 8, VPT = VD + 8;           // TC: halves a staged key, value row
constexpr int TC_WARP = BKT * (KPT + VPT) / 2;      // TC: floats a warp's tile (the tiles from 0)
constexpr int QF_AT = 4 * TC_WARP;                  // TC: the queries' A words, then 1 / their scale
constexpr float PSC = 16384.0f;                     // TC: the weights' scale in the values' product

// Lane l's key value i and value i: their places in a row.
DEV int kat(int l, int i)
{
    return CONT ? l * QP + i : l + 32 * i;
}

DEV int vat(int l, int i)
{
    return CONT ? l * VN + i : 2 * l + 64 * (i / 2) + (i & 1);
}

// BYTES bytes at p (aligned to the largest word that divides BYTES) into
// words w, unconverted: the loads of a round all in flight before any
// value is used.
template <int BYTES>
DEV void ldraw(const void *p, u32 *w)
{
    if (BYTES % 16 == 0) {
#pragma unroll
        for (int j = 0; j < BYTES / 16; j++) {
            uint4 v = ((const uint4 *)p)[j];
            w[4 * j] = v.x, w[4 * j + 1] = v.y, w[4 * j + 2] = v.z, w[4 * j + 3] = v.w;
        }
    } else if (BYTES % 8 == 0) {
#pragma unroll
        for (int j = 0; j < BYTES / 8; j++) {
            uint2 v = ((const uint2 *)p)[j];
            w[2 * j] = v.x, w[2 * j + 1] = v.y;
        }
    } else if (BYTES % 4 == 0) {
#pragma unroll
        for (int j = 0; j < BYTES / 4; j++)
            w[j] = ((const u32 *)p)[j];
    } else {
        w[0] = *(const u16 *)p;
    }
}

// N values (f32, or f16 when HALF) from the words ldraw loaded.
template <int N, int HALF>
DEV void unraw(const u32 *w, float *out)
{
#pragma unroll
    for (int i = 0; i < N; i++)
        out[i] = HALF ? h2f((u16)(i & 1 ? w[i / 2] >> 16 : w[i / 2] & 0xffff)) : __int_as_float(w[i]);
}

// N consecutive values (f32, or f16 when HALF) from element e, e a
// multiple of N, into out: in words of 16 bytes where N allows, else 8, 4
// or (an odd number of f16 values) a value at a time.
template <int N, int HALF>
DEV void loadv(const void *base, long e, float *out)
{
    if (HALF && N % 2) {
#pragma unroll
        for (int j = 0; j < N; j++)
            out[j] = h2f(((const u16 *)base)[e + j]);
        return;
    }
    constexpr int BYTES = N * (HALF ? 2 : 4);
    u32 w[(BYTES + 3) / 4];
    ldraw<BYTES>((const char *)base + e * (HALF ? 2 : 4), w);
    unraw<N, HALF>(w, out);
}

DEV float key(const void *K, long i)
{
    return KV == 2 ? h2f(((const u16 *)K)[i]) : ((const float *)K)[i];
}

DEV void val2(const void *Vb, long i, float &a, float &b)
{
    if (KV == 2) {
        u32 two = *(const u32 *)((const u16 *)Vb + i);
        a = h2f((u16)(two & 0xffff));
        b = h2f((u16)(two >> 16));
    } else {
        float2 two = *(const float2 *)((const float *)Vb + i);
        a = two.x;
        b = two.y;
    }
}

// A head of HD values at x, as lane `lane` holds them (kat): under NORM
// divided by its root mean square and times nw + ROFF, then its first ROT
// values turned by the angles' sines and cosines (scr: HD floats of the
// warp's shared memory).
// The sine and cosine of the angle of each value lane `lane` holds at
// position pos (rope.cu's math): known before the wait, since the position
// and the frequencies do not depend on the launch before.
DEV void angles(const Params &p, long pos, float *sn, float *cs)
{
    int lane = threadIdx.x & 31;
    const double *freq = (const double *)p.a[13];
#pragma unroll
    for (int i = 0; i < QP; i++) {
        int d = kat(lane, i), half = ROT / 2, k = d < half ? d : d - half;
        sn[i] = 0.0f, cs[i] = 1.0f;
        if (d >= ROT || d >= HD)
            continue;
        double a = (double)(pos - 1) * freq[k];
        __sincosf((float)(a - 6.283185307179586 * rint(a * 0.15915494309189535)), &sn[i], &cs[i]);
    }
}

// A head's values as lane `lane` holds them (kat).
DEV void head_vals(const float *x, float *out)
{
    int lane = threadIdx.x & 31;
#pragma unroll
    for (int i = 0; i < QP; i++)
        out[i] = kat(lane, i) < HD ? x[kat(lane, i)] : 0.0f;
}

// Turns a head whose values out already holds (head_vals), in place.
DEV void turn_vals(const float *nw, int norm, const float *sn, const float *cs, float *out, float *scr)
{
    int lane = threadIdx.x & 31;
    float ss = 0.0f;
#pragma unroll
    for (int i = 0; i < QP; i++)
        ss += out[i] * out[i];
    if (norm) {
        float inv = 1.0f / sqrtf(warp_sum(ss) / (float)HD + REPS);
#pragma unroll
        for (int i = 0; i < QP; i++)
            if (kat(lane, i) < HD)
                out[i] = out[i] * inv * (nw[kat(lane, i)] + ROFF);
    }
    __syncwarp();
#pragma unroll
    for (int i = 0; i < QP; i++)
        if (kat(lane, i) < HD)
            scr[kat(lane, i)] = out[i];
    __syncwarp();
#pragma unroll
    for (int i = 0; i < QP; i++) {
        int d = kat(lane, i), half = ROT / 2;
        if (d >= ROT || d >= HD)
            continue;
        double c = (double)cs[i] * (double)AF, s = (double)sn[i] * (double)AF;
        out[i] = d < half ? (float)((double)scr[d] * c - (double)scr[d + half] * s)
                          : (float)((double)scr[d] * c + (double)scr[d - half] * s);
    }
    __syncwarp();
}

DEV void turn_head(const float *x, const float *nw, int norm, const float *sn, const float *cs, float *out, float *scr)
{
    head_vals(x, out);
    turn_vals(nw, norm, sn, cs, out, scr);
}

// The newest row (pos - 1) of key head g of row t of kx, turned, and of
// value head g of row t of vx, appended to K and V (row t's) by warp 0
// (rope_attend).
DEV void append_row(const Params &p, void *K, void *V, long t, int g, long pos, const float *sn, const float *cs,
                    float *scr)
{
    int lane = threadIdx.x & 31;
    if (pos < 1 || pos > NCTX)
        return;
    float kv[QP];
    turn_head((const float *)p.a[9] + (t * NKV + g) * (long)HD, (const float *)p.a[12], NK, sn, cs, kv, scr);
    long kb = ((pos - 1) * NKV + g) * (long)HD, vb = ((pos - 1) * NKV + g) * (long)VD;
#pragma unroll
    for (int i = 0; i < QP; i++)
        if (kat(lane, i) < HD) {
            if (KV == 2)
                ((u16 *)K)[kb + kat(lane, i)] = f2h(kv[i]);
            else
                ((float *)K)[kb + kat(lane, i)] = kv[i];
        }
    const float *vx = (const float *)p.a[10] + (t * NKV + g) * (long)VD;
    for (int e = lane; e < VD; e += 32) {
        if (KV == 2)
            ((u16 *)V)[vb + e] = f2h(vx[e]);
        else
            ((float *)V)[vb + e] = vx[e];
    }
}

// Key row j (kr) and value row j (vr) of head group g of K and V, as lane
// l holds them.
DEV void load_row(const void *K, const void *V, long j, int g, int l, float *kr, float *vr)
{
    long kb = (j * NKV + g) * (long)HD, vb = (j * NKV + g) * (long)VD;
    if (CONT) {
        loadv<QP, KV == 2>(K, kb + (long)l * QP, kr);
        loadv<VN, KV == 2>(V, vb + (long)l * VN, vr);
        return;
    }
#pragma unroll
    for (int i = 0; i < QP; i++)
        kr[i] = kat(l, i) < HD ? key(K, kb + kat(l, i)) : 0.0f;
#pragma unroll
    for (int i = 0; i < VN; i += 2) {
        vr[i] = vr[i + 1] = 0.0f;
        if (vat(l, i) < VD)
            val2(V, vb + vat(l, i), vr[i], vr[i + 1]);
    }
}

// Row t's keys (i 1) or values (i 2): MODE 3's address read again from
// shared memory where it is used (a volatile read), not held in registers
// across the rounds; else the parameter's.
DEV void *cache(const Params &p, void *const *rc, int i)
{
    return MODE == 3 ? ((void *const volatile *)rc)[i - 1] : p.a[i];
}

// LR: warp w's rows j0 + 32 (w + 4 k) + lane before j1 into its running
// maxima m, sums l and values o (load_row's layout), 32 rows a tile: lane
// i scores row i of the tile against the G queries qs (HD floats each),
// the tile's maximum a head from the lanes, then every lane adds each
// row's values (its VN of them) times the row's weight from its lane.
DEV void lane_rows(const Params &p, void *const *rc, long j0, long j1, int g, const float *qs, float *m, float *l,
                   float (*o)[VN])
{
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    float lp[G];   // this lane's rows' share of each head's sum
#pragma unroll
    for (int h = 0; h < G; h++)
        lp[h] = 0.0f;
    for (long jt = j0 + 32L * w; jt < j1; jt += 128) {
        long jr = jt + lane;
        bool ok = jr < j1;
        const void *K = cache(p, rc, 1);
        long kb = ((ok ? jr : j0) * NKV + g) * (long)HD;
        float s[G];
#pragma unroll
        for (int h = 0; h < G; h++)
            s[h] = 0.0f;
        for (int d0 = 0; d0 < HD; d0 += KW * KB) {   // KB 16-byte loads in flight, then their sums
            u32 kw[KB][4];
#pragma unroll
            for (int b = 0; b < KB; b++)
                if (d0 + KW * b < HD)
                    ldraw<16>((const char *)K + (kb + d0 + KW * b) * (KV == 2 ? 2 : 4), kw[b]);
#pragma unroll
            for (int b = 0; b < KB; b++) {
                if (d0 + KW * b >= HD)
                    break;
                float kv[KW];
                unraw<KW, KV == 2>(kw[b], kv);
#pragma unroll
                for (int h = 0; h < G; h++)
#pragma unroll
                    for (int e = 0; e < KW; e += 4) {
                        float4 qv = *(const float4 *)(qs + h * HD + d0 + KW * b + e);
                        s[h] += qv.x * kv[e] + qv.y * kv[e + 1] + qv.z * kv[e + 2] + qv.w * kv[e + 3];
                    }
            }
        }
        float pw[G];
#pragma unroll
        for (int h = 0; h < G; h++) {
            float v = s[h] * SCALE;
            if (CAP > 0.0f)
                v = CAP * tanhf(v / CAP);
            v = ok ? v : NEG_INF;
            float mn = fmaxf(m[h], warp_max(v));   // lane 0's row is in every tile: finite
            float corr = m[h] == NEG_INF ? 0.0f : expf(m[h] - mn);
            pw[h] = ok ? expf(v - mn) : 0.0f;
            lp[h] = lp[h] * corr + pw[h];
#pragma unroll
            for (int i = 0; i < VN; i++)
                o[h][i] *= corr;
            m[h] = mn;
        }
        const void *V = cache(p, rc, 2);
        int nr = j1 - jt < 32 ? (int)(j1 - jt) : 32;
        for (int r0 = 0; r0 < nr; r0 += VB) {   // VB rows' values in flight, then their sums
            u32 vw[VB][VW];
#pragma unroll
            for (int b = 0; b < VB; b++)
                ldraw<VBY>((const char *)V + (((jt + (r0 + b < nr ? r0 + b : 0)) * NKV + g) * (long)VD + (long)lane * VN) *
                                                 (KV == 2 ? 2 : 4),
                           vw[b]);
#pragma unroll
            for (int b = 0; b < VB; b++) {
                float vv[VN];
                unraw<VN, KV == 2>(vw[b], vv);
#pragma unroll
                for (int h = 0; h < G; h++) {
                    float pr = __shfl_sync(0xffffffffu, pw[h], r0 + b);   // 0 past the tile's rows
#pragma unroll
                    for (int i = 0; i < VN; i++)
                        o[h][i] += pr * vv[i];
                }
            }
        }
    }
#pragma unroll
    for (int h = 0; h < G; h++)
        l[h] = warp_sum(lp[h]);
}

// TC: hi = f16 of (a, b) (pack), lo = f16 of what hi leaves of them: hi +
// lo holds a and b to some 22 bits, so that two f16 products hold an f32 one.
DEV void split2(float a, float b, u32 &hi, u32 &lo)
{
    hi = pack(a, b);
    lo = pack(a - h2f((u16)hi), b - h2f((u16)(hi >> 16)));
}

// TC: the block's queries qs (G HD floats) as the A words of each lane
// (gi, ti) and 16-value step ks: qf[(4 ks + k) 32 + lane], k: hi a0, hi a2,
// lo a0, lo a2 (a1, a3 are rows 8 and past: 0); the queries times 2^e,
// their largest in [2^14, 2^15), so that the lo words stay clear of f16's
// subnormals, and 2^-e after them for the scores. Warp 0 writes them.
DEV void tc_queries(const float *qs, float *sl)
{
    int lane = threadIdx.x & 31, gi = lane >> 2, ti = lane & 3;
    u32 *qf = (u32 *)(sl + QF_AT);
    float qa = 0.0f;
    for (int ks = 0; ks < HD / 16; ks++)
#pragma unroll
        for (int e = 0; e < 4; e++)
            qa = fmaxf(qa, gi < G ? fabsf(qs[gi * HD + 16 * ks + 2 * ti + (e & 1) + 8 * (e >> 1)]) : 0.0f);
    qa = warp_max(qa * SCALE);
    int ex = 0;
    frexpf(qa, &ex);
    float qsc = qa > 0.0f ? ldexpf(1.0f, 15 - ex) : 1.0f;
    for (int ks = 0; ks < HD / 16; ks++) {
        const float *q = qs + (gi < G ? gi : 0) * HD + 16 * ks + 2 * ti;
        float z = gi < G ? SCALE * qsc : 0.0f;
        u32 *f = qf + 4 * ks * 32 + lane;
        split2(q[0] * z, q[1] * z, f[0], f[64]);
        split2(q[8] * z, q[9] * z, f[32], f[96]);
    }
    if (lane == 0)
        sl[QF_AT + 8 * HD] = 1.0f / qsc;
}

// TC: lane_rows on the tensor cores (mma.sync m16n8k16, f16 operands, f32
// sums), writing warp w's slots itself. Warp w takes the tiles of BKT
// keys j0 + BKT (w + 4 k) before j1, each staged in its own shared memory
// (keys and values as rows, cp.async). With lane = 4 gi + ti:
//   S (16 x BKT) = Q (16 x HD) . K^T: row gi the query head gi (rows G and
//     past zero), a fragment's A words the head's SCALE q split hi + lo
//     (two mmas a step: the scores as f32 products give them), B words a
//     staged key row's; the lane holds S[gi][8 n + 2 ti, + 1], n < BKT / 8
//   (q times a power of two that puts the block's largest at 2^14 or
//   more, S times its inverse after: the lo words clear of f16's
//   subnormals); the running maximum and sum of head gi over its 4 lanes,
//   as lane_rows; P = e^(S - m) (0 past j1), times PSC (likewise)
//   O^T (VD x 8) += V^T . P^T: A the staged values transposed (ldmatrix
//     .trans), B the lane's own P words split hi + lo; the lane holds
//     O^T[16 mt + gi (+ 8)][heads 2 ti, + 1], rescaled by those heads'
//     corrections from lanes 8 ti and 8 ti + 4
// The keys and values are f16 in the caches, so only q and P are split:
// the sums stand within f32's rounding of lane_rows' (no reference of its
// own). A tile's keys past j1 stage row j0 and weigh 0.
DEV void tc_rows(const Params &p, void *const *rc, long j0, long j1, int g, float *sl)
{
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5, gi = lane >> 2, ti = lane & 3;
    const u16 *K = (const u16 *)cache(p, rc, 1), *V = (const u16 *)cache(p, rc, 2);
    u16 *kt = (u16 *)(sl + (long)w * TC_WARP), *vt = kt + BKT * KPT;
    float *slots = sl + (long)w * G * SLOT;
    const u32 *qf = (const u32 *)(sl + QF_AT);
    float iqs = sl[QF_AT + 8 * HD];
    float m = NEG_INF, l = 0.0f, o[VD / 16][4];
#pragma unroll
    for (int mt = 0; mt < VD / 16; mt++)
        o[mt][0] = o[mt][1] = o[mt][2] = o[mt][3] = 0.0f;
    for (long jt = j0 + (long)BKT * w; jt < j1; jt += 4L * BKT) {
        for (int i = lane; i < BKT * (HD / 8); i += 32) {
            int r = i / (HD / 8), c = i % (HD / 8);
            long j = jt + r < j1 ? jt + r : j0;
            cp16(kt + r * KPT + 8 * c, K + (j * NKV + g) * (long)HD + 8 * c, 16);
        }
        for (int i = lane; i < BKT * (VD / 8); i += 32) {
            int r = i / (VD / 8), c = i % (VD / 8);
            long j = jt + r < j1 ? jt + r : j0;
            cp16(vt + r * VPT + 8 * c, V + (j * NKV + g) * (long)VD + 8 * c, 16);
        }
        cp_commit();
        cp_wait_all();
        __syncwarp();
        float sc[BKT / 8][4];
#pragma unroll
        for (int n = 0; n < BKT / 8; n++)
            sc[n][0] = sc[n][1] = sc[n][2] = sc[n][3] = 0.0f;
#pragma unroll
        for (int ks = 0; ks < HD / 16; ks++) {
            const u32 *f = qf + 4 * ks * 32 + lane;
            u32 ah[4] = {f[0], 0u, f[32], 0u}, al[4] = {f[64], 0u, f[96], 0u};
#pragma unroll
            for (int n = 0; n < BKT / 8; n++) {
                const u16 *kr = kt + (8 * n + gi) * KPT + 2 * ti + 16 * ks;
                u32 b[2] = {*(const u32 *)kr, *(const u32 *)(kr + 8)};
                mma16(sc[n], ah, b);
                mma16(sc[n], al, b);
            }
        }
        float mx = NEG_INF;
#pragma unroll
        for (int n = 0; n < BKT / 8; n++)
#pragma unroll
            for (int e = 0; e < 2; e++) {
                float v = sc[n][e] * iqs;
                if (CAP > 0.0f)
                    v = CAP * tanhf(v / CAP);
                v = jt + 8 * n + 2 * ti + e < j1 ? v : NEG_INF;
                sc[n][e] = v;
                mx = fmaxf(mx, v);
            }
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        float mn = fmaxf(m, mx);   // the tile's first key is before j1: finite
        float corr = m == NEG_INF ? 0.0f : expf(m - mn);
        u32 ph[BKT / 16][2], pl[BKT / 16][2];
        float ls = 0.0f;
#pragma unroll
        for (int n = 0; n < BKT / 8; n++) {
            float e0 = sc[n][0] == NEG_INF ? 0.0f : expf(sc[n][0] - mn);
            float e1 = sc[n][1] == NEG_INF ? 0.0f : expf(sc[n][1] - mn);
            ls += e0 + e1;
            split2(e0 * PSC, e1 * PSC, ph[n / 2][n & 1], pl[n / 2][n & 1]);
        }
        l = l * corr + ls;
        m = mn;
        float ca = __shfl_sync(0xffffffffu, corr, 8 * ti), cb = __shfl_sync(0xffffffffu, corr, 8 * ti + 4);
#pragma unroll
        for (int mt = 0; mt < VD / 16; mt++) {
            o[mt][0] *= ca, o[mt][1] *= cb, o[mt][2] *= ca, o[mt][3] *= cb;
#pragma unroll
            for (int kk = 0; kk < BKT / 16; kk++) {
                // matrix i: keys 16 kk + 8 (i / 2) .., values 16 mt + 8 (i % 2) ..: a0 .. a3
                int i = lane >> 3;
                u32 a[4];
                ldsm4t(a, smem_addr(vt + (16 * kk + 8 * (i >> 1) + (lane & 7)) * VPT + 16 * mt + 8 * (i & 1)));
                mma16(o[mt], a, ph[kk]);
                mma16(o[mt], a, pl[kk]);
            }
        }
        __syncwarp();
    }
    l += __shfl_xor_sync(0xffffffffu, l, 1);
    l += __shfl_xor_sync(0xffffffffu, l, 2);
    __syncthreads();   // the slots lie over warp 0's tile
    if (gi < G && ti == 0)
        slots[(long)gi * SLOT] = m, slots[(long)gi * SLOT + 1] = l;
#pragma unroll
    for (int e = 0; e < 2; e++) {
        int h = 2 * ti + e;
        if (h < G)
#pragma unroll
            for (int mt = 0; mt < VD / 16; mt++) {
                slots[(long)h * SLOT + 2 + 16 * mt + gi] = o[mt][e] * (1.0f / PSC);
                slots[(long)h * SLOT + 2 + 16 * mt + gi + 8] = o[mt][2 + e] * (1.0f / PSC);
            }
    }
}

// Merges slot b into slot a (both m, l, o[VD]).
DEV void merge(float *a, const float *b, int from, int step)
{
    float m = fmaxf(a[0], b[0]);
    float ca = a[0] == NEG_INF ? 0.0f : expf(a[0] - m), cb = b[0] == NEG_INF ? 0.0f : expf(b[0] - m);
    for (int v = from; v < VD; v += step)
        a[2 + v] = a[2 + v] * ca + b[2 + v] * cb;
    __syncwarp();
    if (from == 0) {
        a[1] = a[1] * ca + b[1] * cb;
        a[0] = m;
    }
}

// Writes head h's merged slot to y (through the quantizer under OQ); a sink
// joins the denominator.
DEV void write_head(const Params &p, long t, int h, const float *slot)
{
    int lane = threadIdx.x & 31;
    float m = slot[0], scale = 1.0f, denom = slot[1];
    if (SINKS) {
        float sk = ((const float *)p.a[5])[h], mm = fmaxf(m, sk);
        scale = m == NEG_INF ? 0.0f : expf(m - mm);
        denom = denom * scale + expf(sk - mm);
    }
    float f = denom > 0.0f ? scale / denom : 0.0f;
    long at = (t * NH + h) * (long)VD;
    if (OQ == 0) {
        for (int v = lane; v < VD; v += 32)
            ((float *)p.a[6])[at + v] = slot[2 + v] * f;
        return;
    }
    for (int b = 0; b < VD / 32; b++)
        warp_quant(slot[2 + b * 32 + lane] * f, p.a[6], (long)ROWS * NH * VD, (at >> 5) + b, OQ);
}

// acc += the values of chunks kb .. kb + 31 (at most lc) of head h, each
// weighted by its lane's ck: sixteen chunks' loads in flight.
DEV void add_chunks(const float *all, long kb, long lc, int h, float ck, float *acc)
{
    int lane = threadIdx.x & 31;
    int nk = lc - kb + 1 < 32 ? (int)(lc - kb + 1) : 32;
#pragma unroll 16
    for (int kk = 0; kk < nk; kk++) {
        float c = __shfl_sync(0xffffffffu, ck, kk);
        const float *ob = all + ((kb + kk) * G + h) * SLOT + 2;
#pragma unroll
        for (int i = 0; i < (VD + 31) / 32; i++)
            if (lane + 32 * i < VD)
                acc[i] += c * ldcg(ob + lane + 32 * i);
    }
}

extern "C" __global__ void __launch_bounds__(128, TC == 1 ? 3 : 4) attend(const Params p)
{
    KERNEL_OPEN();
    extern __shared__ __align__(16) float sl[];   // [4 warps][G][SLOT]
    int u = blockIdx.x, g = u / GB, c = blockIdx.y, t = blockIdx.z, lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    int h0 = g * GG + (u % GB) * G;   // the block's first query head
    if (!EARLY)
        pdl_begin();
    if (t >= rows_of(p.a[4], ROWS)) {
        if (EARLY)
            pdl_begin();
        return;
    }
    // row t's position and caches: MODE 3's from entry t of the tables, the
    // caches' addresses kept in shared memory (rc)
    __shared__ void *rc[2];
    if (MODE == 3) {
        if (threadIdx.x == 0)
            rc[0] = ((void *const *)p.a[1])[t], rc[1] = ((void *const *)p.a[2])[t];
        __syncthreads();
    }
    const int *pp = MODE == 3 ? ((const int *const *)p.a[3])[t] : (const int *)p.a[3];
    long hi = MODE == 0 || MODE == 3 ? pp[0] : MODE == 1 ? pp[t] : NCTX;
    hi = hi > NCTX ? NCTX : hi;
    long lo = WINDOW && hi > WINDOW ? hi - WINDOW : 0;
    // the rows' chunks: at least CHUNK rows, and few enough that at most
    // BUSY blocks of a head group are busy (BUSY 0: chunks of CHUNK rows)
    long len = hi - lo, chunk = BUSY && (len + BUSY - 1) / BUSY > CHUNK ? (len + BUSY - 1) / BUSY : CHUNK;
    long fc = 0, lc = len > 0 ? (len - 1) / chunk : 0, busy = lc + 1;
    if (c > lc) {
        if (EARLY)
            pdl_begin();
        return;
    }
    long j0 = lo + (long)c * chunk, j1 = j0 + chunk < hi ? j0 + chunk : hi;
    const bool lr = LR && (MODE == 3 || j1 - j0 >= LRR);   // a row a lane: a batch's rows, or a step's long chunks
    float kr[R][QP], vr[R][VN];
    long j = j0 + w;   // a round's rows: j, j + 4, ..., j + 4 (R - 1): the warps take turns
    float asn[QP], acs[QP];
    if (ROPE)
        angles(p, pp[0], asn, acs);
    if (EARLY) {   // the first round's rows but the newest, before the wait
#pragma unroll
        for (int r = 0; r < R && !lr; r++) {
            long jr = j + 4L * r < j1 ? j + 4L * r : j0;
            if (jr < hi - 1)
                load_row(cache(p, rc, 1), cache(p, rc, 2), jr, g, lane, kr[r], vr[r]);
        }
        pdl_begin();
    }
    const float *q = (const float *)p.a[0] + (long)t * QS;
    float qr[G][QP], m[G], l[G], o[G][VN];
    if (ROPE)   // every head's values loaded before any is turned: one wait, not G
#pragma unroll
        for (int h = 0; h < G; h++)
            head_vals(q + (long)(h0 + h) * HD, qr[h]);
    if (ROPE && c == lc) {   // the newest row, before any warp reads it
        if (w == 0)
            append_row(p, cache(p, rc, 1), cache(p, rc, 2), MODE == 3 ? t : 0, g, pp[0], asn, acs, sl);
        __syncthreads();
    }
#pragma unroll
    for (int h = 0; h < G; h++) {
        if (ROPE) {
            turn_vals((const float *)p.a[11], NQ, asn, acs, qr[h], sl + (long)w * HD);
        } else if (CONT) {
            loadv<QP, 0>(q, (long)(h0 + h) * HD + (long)lane * QP, qr[h]);
        } else {
            for (int i = 0; i < QP; i++)
                qr[h][i] = kat(lane, i) < HD ? q[(h0 + h) * (long)HD + kat(lane, i)] : 0.0f;
        }
        m[h] = NEG_INF;
        l[h] = 0.0f;
        for (int i = 0; i < VN; i++)
            o[h][i] = 0.0f;
    }
    // the turning's scratch (a warp's HD floats) lies under other warps'
    // slots: every warp done with it before any writes its slot
    if (ROPE)
        __syncthreads();
    if (lr) {   // the block's queries (every warp holds the same) into shared memory, then the rows a lane each
        float *qs = sl + QS_AT;
        if (w == 0)
#pragma unroll
            for (int h = 0; h < G; h++)
#pragma unroll
                for (int i = 0; i < QP; i++)
                    qs[h * HD + kat(lane, i)] = qr[h][i];
        __syncthreads();
        if (TC) {   // the queries' A words from qs, which the tiles then cover
            if (w == 0)
                tc_queries(qs, sl);
            __syncthreads();
            tc_rows(p, rc, j0, j1, g, sl);
        } else
            lane_rows(p, rc, j0, j1, g, qs, m, l, o);
    } else   // (the rows' registers live on this side alone)
        for (int first = 1; j < j1; j += 4L * R, first = 0) {   // R rows a warp a round, all loaded first
#pragma unroll
            for (int r = 0; r < R; r++) {
                long jr = j + 4L * r < j1 ? j + 4L * r : j0;
                if (!EARLY || !first || jr >= hi - 1)
                    load_row(cache(p, rc, 1), cache(p, rc, 2), jr, g, lane, kr[r], vr[r]);
            }
            // the round's scores first, then each head's maximum, one
            // rescaling of its sums a round, and the rows' weights
            float sc[R][G];
#pragma unroll
            for (int r = 0; r < R; r++)
#pragma unroll
                for (int h = 0; h < G; h++) {
                    float s = 0.0f;
#pragma unroll
                    for (int i = 0; i < QP; i++)
                        s += qr[h][i] * kr[r][i];
                    s = warp_sum(s) * SCALE;
                    if (CAP > 0.0f)
                        s = CAP * tanhf(s / CAP);
                    sc[r][h] = j + 4L * r < j1 ? s : NEG_INF;
                }
#pragma unroll
            for (int h = 0; h < G; h++) {
                float mn = m[h];
#pragma unroll
                for (int r = 0; r < R; r++)
                    mn = fmaxf(mn, sc[r][h]);   // row 0 is in every round: finite
                float corr = m[h] == NEG_INF ? 0.0f : expf(m[h] - mn);
                l[h] *= corr;
#pragma unroll
                for (int i = 0; i < VN; i++)
                    o[h][i] *= corr;
#pragma unroll
                for (int r = 0; r < R; r++) {
                    float e = sc[r][h] == NEG_INF ? 0.0f : expf(sc[r][h] - mn);
                    l[h] += e;
#pragma unroll
                    for (int i = 0; i < VN; i++)
                        o[h][i] += e * vr[r][i];
                }
                m[h] = mn;
            }
        }
    // the block's warps into slot 0
    for (int h = 0; h < G && !TC; h++) {
        float *s = sl + ((long)w * G + h) * SLOT;
        if (lane == 0)
            s[0] = m[h], s[1] = l[h];
        for (int i = 0; i < VN; i++)
            if (vat(lane, i) < VD)
                s[2 + vat(lane, i)] = o[h][i];
    }
    __syncthreads();
    for (int h = w; h < G; h += 4)
        for (int k = 1; k < 4; k++) {
            merge(sl + (long)h * SLOT, sl + ((long)k * G + h) * SLOT, lane, 32);
            __syncwarp();
        }
    __syncthreads();
    if (busy == 1) {
        for (int h = w; h < G; h += 4)
            write_head(p, t, h0 + h, sl + (long)h * SLOT);
        return;
    }
    float *part = (float *)p.a[7] + (((long)t * NKV * GB + u) * PS + c) * G * SLOT;
    for (long i = threadIdx.x; i < (long)G * SLOT; i += blockDim.x)
        part[i] = sl[i];
    // each thread's partials before the count (a release fence, not a
    // sequentially consistent one: that costs a round of the whole chip)
    fence_gpu();
    __syncthreads();
    __shared__ int last;
    int *cnt = (int *)p.a[8] + (long)t * NKV * GB + u;
    if (threadIdx.x == 0) {
        last = atomicAdd(cnt, 1) == busy - 1;
        if (last)
            fence_gpu();   // every block's partials after the count
    }
    __syncthreads();
    if (!last)
        return;
    // every busy chunk's slot, read past the L1 (other blocks wrote them):
    // each lane's chunks' maxima and sums first (MC a lane at most), the
    // largest maximum M, then each chunk weighted by e^(m - M), its loads
    // independent of each other, sixteen chunks' in flight (a warp a head:
    // with many heads, warps that split a head's chunks would wait on each
    // other a head at a time)
    const float *all = (const float *)p.a[7] + ((long)t * NKV * GB + u) * PS * G * SLOT;
    constexpr int MC = BUSY && BUSY <= 64 ? (BUSY + 31) / 32 : 0;
    for (int h = w; h < G; h += 4) {
        float M = NEG_INF, L = 0.0f, acc[(VD + 31) / 32];
#pragma unroll
        for (int i = 0; i < (VD + 31) / 32; i++)
            acc[i] = 0.0f;
        if (MC) {   // at most 64 chunks: their maxima and sums in registers, one load each
            float mk[MC ? MC : 1], lk[MC ? MC : 1];
#pragma unroll
            for (int i = 0; i < MC; i++) {
                long k = fc + lane + 32 * i;
                mk[i] = k <= lc ? ldcg(all + (k * G + h) * SLOT) : NEG_INF;
                lk[i] = k <= lc ? ldcg(all + (k * G + h) * SLOT + 1) : 0.0f;
                M = fmaxf(M, mk[i]);
            }
            M = warp_max(M);
#pragma unroll 1
            for (int i = 0; i < MC; i++) {
                long kb = fc + 32 * i;
                if (kb > lc)
                    break;
                float mi = mk[0], li = lk[0];   // entry i by selects: an index would put the arrays in local memory
#pragma unroll
                for (int k = 1; k < MC; k++)
                    if (i == k)
                        mi = mk[k], li = lk[k];
                float ck = mi == NEG_INF ? 0.0f : expf(mi - M);
                L += ck * li;
                add_chunks(all, kb, lc, h, ck, acc);
            }
        } else {
            for (long k = fc + lane; k <= lc; k += 32)
                M = fmaxf(M, ldcg(all + (k * G + h) * SLOT));
            M = warp_max(M);
            for (long kb = fc; kb <= lc; kb += 32) {
                long k = kb + lane;
                float ck = 0.0f;
                if (k <= lc) {
                    float mk = ldcg(all + (k * G + h) * SLOT);
                    ck = mk == NEG_INF ? 0.0f : expf(mk - M);
                    L += ck * ldcg(all + (k * G + h) * SLOT + 1);
                }
                add_chunks(all, kb, lc, h, ck, acc);
            }
        }
        L = warp_sum(L);
        float *s = sl + (long)h * SLOT;
#pragma unroll
        for (int i = 0; i < (VD + 31) / 32; i++)
            if (lane + 32 * i < VD)
                s[2 + lane + 32 * i] = acc[i];
        if (lane == 0)
            s[0] = M, s[1] = L;
        __syncwarp();
        write_head(p, t, h0 + h, s);
    }
    if (threadIdx.x == 0)
        *cnt = 0;
}
