// rope.cu — rotary position embedding of up to three parts of a row (the
// queries, the keys, the values), each with its per-head norm, written to
// a tensor or appended to a state's row at the position (the KV cache, or
// a part of its row: DeepSeek-V2's latent row is the normed latent and the
// turned shared key side by side):
//
//   for part p < PARTS, row t < rows (n or ROWS), head h < H_p, i < W_p:
//     v = x_p[t XS_p + XA_p + h HP_p + i]     (a slice read in place: at XA_p,
//                                             heads HP_p values apart)
//     NORM_p:  v = v / sqrt(mean over the head of v^2 + EPS) * (nw_p[i] + OFF)
//     OP_p 1:  the first ROT values turn as NEOX pairs (i, i + ROT/2) by the
//              angle a = (pos(t) - 1) freq[i], taken in f64 down to [-pi, pi]
//              before its sine and cosine:
//                y_i = AF (v_i cos a - v_{i+ROT/2} sin a)
//                y_{i+ROT/2} = AF (v_{i+ROT/2} cos a + v_i sin a)
//     OP_p 0:  v as it is (a value row, or a norm alone)
//     DST_p 0: y_p[(t H_p + h) W_p + i]                          f32
//     DST_p 1, 2: y_p[(pos(t) - 1) YS_p + YA_p + h W_p + i]      a state's row
//              of YS_p values, the part at YA_p in it, f32 or f16 (a
//              position past SROWS_p rows is skipped: logos-run checks first)
//   pos(t): POS 0: *pos   1: pos[t]   2: *pos + t   (a chunk's start)
//
// Shapes: x_p rows of XS_p values (a part may lie inside a wider row); the
// frequencies freq (ROT / 2) f64, computed by logos-run from the rope's
// attributes exactly as the CPU reference computes them.
// Launch: grid (ROWS, PARTS, HB), block 128: block (t, p, b) does heads
// 4b .. 4b + 3 of row t of part p, a warp a head through shared memory
// (heads of at most 1024 values); HB = ceil(max H_p / 4).

constexpr int MAXW = 1024;

DEV long part_c(int p, long a, long b, long c)
{
    return p == 0 ? a : p == 1 ? b : c;
}

extern "C" __global__ void __launch_bounds__(128) rope(const Params p)
{
    KERNEL_OPEN();
    __shared__ float head[4][MAXW];
    pdl_begin();
    int t = blockIdx.x, part = blockIdx.y, lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    if (t >= rows_of(p.a[8], ROWS))
        return;
    const int *pp = (const int *)p.a[7];
    long pos = POS == 1 ? pp[t] : POS == 2 ? pp[0] + t : pp[0];
    long H = part_c(part, H0, H1, H2), Wd = part_c(part, W0, W1, W2), XS = part_c(part, XS0, XS1, XS2);
    long HP = part_c(part, HP0, HP1, HP2), XA = part_c(part, XA0, XA1, XA2);
    long YS = part_c(part, YS0, YS1, YS2), YA = part_c(part, YA0, YA1, YA2);
    int op = (int)part_c(part, OP0, OP1, OP2), nrm = (int)part_c(part, NORM0, NORM1, NORM2);
    int dst = (int)part_c(part, DST0, DST1, DST2);
    long srows = part_c(part, SROWS0, SROWS1, SROWS2);
    // the part's parameters by selection (a run-time index into the
    // parameters would copy them to local memory)
    const float *x = (const float *)(part == 0 ? p.a[0] : part == 1 ? p.a[1] : p.a[2]) + (long)t * XS + XA;
    const float *nw = (const float *)(part == 0 ? p.a[3] : part == 1 ? p.a[4] : p.a[5]);
    const double *freq = (const double *)p.a[6];
    void *y = part == 0 ? p.a[9] : part == 1 ? p.a[10] : p.a[11];
    if (dst && (pos < 1 || pos > srows))
        return;
    float *hv = head[w];
    for (long h = 4L * blockIdx.z + w; h < H && h < 4L * blockIdx.z + 4; h += 4) {
        float ss = 0.0f;
        for (long i = lane; i < Wd; i += 32) {
            float v = x[h * HP + i];
            hv[i] = v;
            ss += v * v;
        }
        ss = warp_sum(ss);
        float inv = 1.0f / sqrtf(ss / (float)Wd + EPS);
        __syncwarp();
        if (nrm)
            for (long i = lane; i < Wd; i += 32)
                hv[i] = hv[i] * inv * (nw[i] + OFF);
        __syncwarp();
        long at = dst ? (pos - 1) * YS + YA + h * Wd : ((long)t * H + h) * Wd;
        for (long i = lane; i < Wd; i += 32) {
            float v = hv[i];
            if (op && i < ROT) {
                long half = ROT / 2, k = i < half ? i : i - half;
                double a = (double)(pos - 1) * freq[k];
                float r = (float)(a - 6.283185307179586 * rint(a * 0.15915494309189535)), sf, cf;
                __sincosf(r, &sf, &cf);
                double c = (double)cf * (double)AF, s = (double)sf * (double)AF;
                v = i < half ? (float)((double)hv[i] * c - (double)hv[i + half] * s)
                             : (float)((double)hv[i] * c + (double)hv[i - half] * s);
            }
            if (dst == 2)
                ((u16 *)y)[at + i] = f2h(v);
            else
                ((float *)y)[at + i] = v;
        }
        __syncwarp();
    }
}
