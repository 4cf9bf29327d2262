// attend.cu — attention of query rows over rows of keys and values, in
// chunks of key rows that are merged at the end (split attention):
//
//   for row t < rows (n or ROWS) and head h < NH, its key head g = h / (NH / NKV):
//     hi = MODE 0: *pos   1: pos[t]   2: NCTX            (at most NCTX)
//     lo = WINDOW and hi > WINDOW ? hi - WINDOW : 0
//     s_j = SCALE q[t, h, :] . K[j, g, :]   (CAP > 0: CAP tanh(s_j / CAP))    lo <= j < hi
//     y[t, h, :] = sum_j e^(s_j - m) V[j, g, :] / (sum_j e^(s_j - m) [+ e^(sinks[h] - m)])
//
// Shapes: q (rows, NH, HD) f32 at row stride QS; K (NCTX, NKV, HD) and V
// (NCTX, NKV, VD) f32, or f16 (KV 2); y (rows, NH, VD) in format OQ. Values
// are read in place a pair at a time (VD even).
// Launch: grid (NKV, SPLIT, ROWS), block 128 (4 warps). Block (g, c, t)
// takes chunk c of the rows [lo, hi) (chunks of the larger of CHUNK rows and
// (hi - lo) / BUSY, so that a short context keeps BUSY blocks busy and no
// more) for the G = NH / NKV
// heads of group g, and returns at once when they are none of them (so a
// short context keeps few blocks busy, and those few finish soon); its
// warps take R rows in turn (their keys and values loaded before any is
// used), each keeping a running maximum, sum and weighted values per head,
// then merge in shared memory. When a row's keys span
// several chunks, each busy block leaves (m, l, o[VD]) per head in part,
// and the last of them to finish (cnt counts them) merges them into y and
// sets its count back to 0. Shared memory: 4 G (VD + 2) floats.

constexpr int G = NH / NKV;
constexpr int QP = (HD + 31) / 32;          // query values a lane holds, per head
constexpr int VP = (VD + 63) / 64;          // value pairs a lane holds, per head
constexpr int SLOT = VD + 2;                // m, l, then the values
constexpr int R = G * (QP + 2 * VP) > 48 ? 2 : 4;   // key rows a warp loads together

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

extern "C" __global__ void __launch_bounds__(128) attend(const Params p)
{
    extern __shared__ __align__(16) float sl[];   // [4 warps][G][SLOT]
    pdl_begin();
    int g = blockIdx.x, c = blockIdx.y, t = blockIdx.z, lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    if (t >= rows_of(p.a[4], ROWS))
        return;
    const int *pp = (const int *)p.a[3];
    long hi = MODE == 0 ? pp[0] : MODE == 1 ? pp[t] : NCTX;
    hi = hi > NCTX ? NCTX : hi;
    long lo = WINDOW && hi > WINDOW ? hi - WINDOW : 0;
    // the rows' chunks: at least CHUNK rows, and few enough that at most
    // BUSY blocks of a head group are busy (BUSY 0: chunks of CHUNK rows)
    long len = hi - lo, chunk = BUSY && (len + BUSY - 1) / BUSY > CHUNK ? (len + BUSY - 1) / BUSY : CHUNK;
    long fc = 0, lc = len > 0 ? (len - 1) / chunk : 0, busy = lc + 1;
    if (c > lc)
        return;
    long j0 = lo + (long)c * chunk, j1 = j0 + chunk < hi ? j0 + chunk : hi;
    const float *q = (const float *)p.a[0] + (long)t * QS;
    float qr[G][QP], m[G], l[G], o[G][VP][2];
    for (int h = 0; h < G; h++) {
        for (int i = 0; i < QP; i++) {
            int e = lane + 32 * i;
            qr[h][i] = e < HD ? q[(g * G + h) * (long)HD + e] : 0.0f;
        }
        m[h] = NEG_INF;
        l[h] = 0.0f;
        for (int i = 0; i < VP; i++)
            o[h][i][0] = o[h][i][1] = 0.0f;
    }
    for (long j = j0 + (long)w * R; j < j1; j += 4L * R) {   // R rows a warp a round, all loaded first
        float kr[R][QP], vr[R][VP][2];
#pragma unroll
        for (int r = 0; r < R; r++) {
            long jr = j + r < j1 ? j + r : j;
            long kb = (jr * NKV + g) * (long)HD, vb = (jr * NKV + g) * (long)VD;
#pragma unroll
            for (int i = 0; i < QP; i++)
                kr[r][i] = lane + 32 * i < HD ? key(p.a[1], kb + lane + 32 * i) : 0.0f;
#pragma unroll
            for (int i = 0; i < VP; i++) {
                int e = 2 * lane + 64 * i;
                vr[r][i][0] = vr[r][i][1] = 0.0f;
                if (e < VD)
                    val2(p.a[2], vb + e, vr[r][i][0], vr[r][i][1]);
            }
        }
#pragma unroll
        for (int r = 0; r < R; r++) {
            if (j + r >= j1)
                break;
#pragma unroll
            for (int h = 0; h < G; h++) {
                float s = 0.0f;
#pragma unroll
                for (int i = 0; i < QP; i++)
                    s += qr[h][i] * kr[r][i];
                s = warp_sum(s) * SCALE;
                if (CAP > 0.0f)
                    s = CAP * tanhf(s / CAP);
                float mn = fmaxf(m[h], s), corr = m[h] == NEG_INF ? 0.0f : expf(m[h] - mn), e = expf(s - mn);
                l[h] = l[h] * corr + e;
#pragma unroll
                for (int i = 0; i < VP; i++) {
                    o[h][i][0] = o[h][i][0] * corr + e * vr[r][i][0];
                    o[h][i][1] = o[h][i][1] * corr + e * vr[r][i][1];
                }
                m[h] = mn;
            }
        }
    }
    // the block's warps into slot 0
    for (int h = 0; h < G; h++) {
        float *s = sl + ((long)w * G + h) * SLOT;
        if (lane == 0)
            s[0] = m[h], s[1] = l[h];
        for (int i = 0; i < VP; i++) {
            int e = 2 * lane + 64 * i;
            if (e < VD)
                s[2 + e] = o[h][i][0], s[3 + e] = o[h][i][1];
        }
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
            write_head(p, t, g * G + h, sl + (long)h * SLOT);
        return;
    }
    float *part = (float *)p.a[7] + (((long)t * NKV + g) * SPLIT + c) * G * SLOT;
    for (long i = threadIdx.x; i < (long)G * SLOT; i += blockDim.x)
        part[i] = sl[i];
    __threadfence();
    __syncthreads();
    __shared__ int last;
    int *cnt = (int *)p.a[8] + (long)t * NKV + g;
    if (threadIdx.x == 0)
        last = atomicAdd(cnt, 1) == busy - 1;
    __syncthreads();
    if (!last)
        return;
    __threadfence();
    // every busy chunk's slot, read past the L1 (other blocks wrote them):
    // the largest maximum M first, then each chunk weighted by e^(m - M), its
    // loads independent of each other
    const float *all = (const float *)p.a[7] + ((long)t * NKV + g) * SPLIT * G * SLOT;
    for (int h = w; h < G; h += 4) {
        float M = NEG_INF, L = 0.0f, acc[(VD + 31) / 32];
        for (long k = fc + lane; k <= lc; k += 32)
            M = fmaxf(M, ldcg(all + (k * G + h) * SLOT));
        M = warp_max(M);
#pragma unroll
        for (int i = 0; i < (VD + 31) / 32; i++)
            acc[i] = 0.0f;
        for (long kb = fc; kb <= lc; kb += 32) {
            long k = kb + lane;
            float ck = 0.0f;
            if (k <= lc) {
                float mk = ldcg(all + (k * G + h) * SLOT);
                ck = mk == NEG_INF ? 0.0f : expf(mk - M);
                L += ck * ldcg(all + (k * G + h) * SLOT + 1);
            }
            int nk = lc - kb + 1 < 32 ? (int)(lc - kb + 1) : 32;
#pragma unroll 4
            for (int kk = 0; kk < nk; kk++) {
                float c = __shfl_sync(0xffffffffu, ck, kk);
                const float *ob = all + ((kb + kk) * G + h) * SLOT + 2;
#pragma unroll
                for (int i = 0; i < (VD + 31) / 32; i++)
                    if (lane + 32 * i < VD)
                        acc[i] += c * ldcg(ob + lane + 32 * i);
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
        write_head(p, t, g * G + h, s);
    }
    if (threadIdx.x == 0)
        *cnt = 0;
}
