// argmax.cu — the index of each row's largest value:
//
//   y[t] = argmax_j x[t, j]   (the lowest j among equal maxima)   j < V, t < rows
//
// Shapes: x (rows, V) f32, rows = n or ROWS; y (rows) i32.
// Launch: grid ROWS, block 1024: block t reduces row t.

extern "C" __global__ void __launch_bounds__(1024) argmax(const Params p)
{
    __shared__ float bv[32];
    __shared__ int bi[32];
    pdl_begin();
    int t = blockIdx.x;
    if (t >= rows_of(p.a[1], ROWS))
        return;
    const float *x = (const float *)p.a[0] + (long)t * V;
    float best = NEG_INF;
    int at = 0x7fffffff;
    for (long j = threadIdx.x; j < V; j += blockDim.x)
        if (x[j] > best)
            best = x[j], at = (int)j;
    arg_reduce(best, at);
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    if (lane == 0)
        bv[w] = best, bi[w] = at;
    __syncthreads();
    if (w == 0) {
        best = lane < (int)(blockDim.x >> 5) ? bv[lane] : NEG_INF;
        at = lane < (int)(blockDim.x >> 5) ? bi[lane] : 0x7fffffff;
        arg_reduce(best, at);
        if (lane == 0)
            ((int *)p.a[2])[t] = at == 0x7fffffff ? 0 : at;
    }
}
