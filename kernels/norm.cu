// norm.cu — rownorm: a norm over each row's last axis, its weight and a residual:
//
//   u[t] = KIND 0: x[t] / sqrt(mean(x[t]^2) + EPS)    (RMS)
//          KIND 1: x[t] / sqrt(sum(x[t]^2) + EPS)     (L2)
//   y[t] = MODE 0: u[t] * (w + OFFSET)
//          MODE 1: r[t] + u[t] * (w + OFFSET)          (a sandwich norm's residual)
//   (w + OFFSET is 1 without a weight, NW 0)
//
// Shapes: x, r (rows, D) f32, rows = n * RPN or ROWS (a per-head norm has
// RPN heads a row of its size); w (D); y (rows, D) in format OQ.
// Launch: grid ROWS, block 256: block t normalizes row t.

extern "C" __global__ void __launch_bounds__(256) rownorm(const Params p)
{
    __shared__ float red[32];
    pdl_begin();
    long t = blockIdx.x;
    long rows = p.a[3] ? (long)*(const int *)p.a[3] * RPN : ROWS;
    if (t >= rows)
        return;
    const float *x = (const float *)p.a[0] + t * D, *w = (const float *)p.a[1];
    const float *r = (const float *)p.a[2] + t * D;
    float ss = 0.0f;
    for (long i = threadIdx.x; i < D; i += blockDim.x)
        ss += x[i] * x[i];
    ss = block_sum(ss, red);
    float inv = 1.0f / sqrtf(KIND == 0 ? ss / (float)D + EPS : ss + EPS);
    if (OQ == 0) {
        for (long i = threadIdx.x; i < D; i += blockDim.x) {
            float v = x[i] * inv * (NW ? w[i] + OFFSET : 1.0f);
            ((float *)p.a[4])[t * D + i] = MODE ? r[i] + v : v;
        }
        return;
    }
    int lane = threadIdx.x & 31, wp = threadIdx.x >> 5;
    for (long b = wp; b < D / 32; b += blockDim.x >> 5) {
        long i = b * 32 + lane;
        float v = x[i] * inv * (NW ? w[i] + OFFSET : 1.0f);
        warp_quant(MODE ? r[i] + v : v, p.a[4], (long)ROWS * D, (t * D + i) >> 5, OQ);
    }
}
