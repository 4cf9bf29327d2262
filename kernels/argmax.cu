// argmax.cu — the index of each row's largest value:
//
//   y[t] = argmax_j x[t, j]   (the lowest j among equal maxima)   j < V, t < rows
//
// Shapes: x (rows, V) f32, rows = n or ROWS; y (rows) i32.
// Launch: grid ROWS, block 1024: block t reduces row t, where V is whole
// fours in 16-byte loads, four of them in flight a thread.

extern "C" __global__ void __launch_bounds__(1024) argmax(const Params p)
{
    KERNEL_OPEN();
    __shared__ float bv[32];
    __shared__ int bi[32];
    pdl_begin();
    int t = blockIdx.x;
    if (t >= rows_of(p.a[1], ROWS))
        return;
    const float *x = (const float *)p.a[0] + (long)t * V;
    float best = NEG_INF;
    int at = 0x7fffffff;
    if (V % 4 == 0) {   // each thread's fours in order: the lowest j among its equal maxima stays
#pragma unroll 4
        for (long i = threadIdx.x; i < V / 4; i += blockDim.x) {
            float4 v = ((const float4 *)x)[i];
            float e[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
            for (int k = 0; k < 4; k++)
                if (e[k] > best)
                    best = e[k], at = (int)(4 * i + k);
        }
    } else {
        for (long j = threadIdx.x; j < V; j += blockDim.x)
            if (x[j] > best)
                best = x[j], at = (int)j;
    }
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
