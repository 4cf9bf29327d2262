// range.cu — the positions of a chunk's rows:
//
//   y[i] = start + i        i < rows (n or ROWS)
//
// Launch: grid ceil(ROWS / 256), block 256: a thread a position.

extern "C" __global__ void __launch_bounds__(256) range(const Params p)
{
    KERNEL_OPEN();
    pdl_begin();
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows_of(p.a[1], ROWS))
        ((int *)p.a[2])[i] = *(const int *)p.a[0] + (int)i;
}
