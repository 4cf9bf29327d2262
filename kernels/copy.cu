// copy.cu — rows moved between tensors and states:
//
//   y[dr * YW + YAT + i] = x[sr * XW + XAT + i]      i < W
//   source row sr:  SRC 0: t   1: the last (n - 1, or XROWS - 1)
//                 2: idx[t] (a gather)   3: idx[t] - 1 (a state's rows by position)
//   target row dr:  DST 0: t   1: idx[t] - 1 (a state's rows by position)
//   x, y in f32 or f16 (XT, YT 1); t < rows (n * RPN, or ROWS; 1 under SRC 1:
//   RPN rows a unit of the runtime size, as a slice of [T, H, W] has H);
//   rows past XROWS or YROWS are skipped (logos-run checks positions first)
//
// Launch: grid ROWS, block 256: block t moves row t.

extern "C" __global__ void __launch_bounds__(256) copy(const Params p)
{
    KERNEL_OPEN();
    pdl_begin();
    long t = blockIdx.x;
    const int *idx = (const int *)p.a[1];
    long rows = SRC == 1 ? 1 : p.a[2] ? (long)*(const int *)p.a[2] * RPN : ROWS;
    if (t >= rows)
        return;
    long sr = SRC == 0 ? t : SRC == 1 ? rows_of(p.a[2], XROWS) - 1 : SRC == 2 ? idx[t] : idx[t] - 1;
    long dr = DST == 0 ? t : idx[t] - 1;
    if (sr < 0 || sr >= XROWS || dr < 0 || dr >= YROWS)
        return;
    for (long i = threadIdx.x; i < W; i += blockDim.x) {
        long xi = sr * XW + XAT + i, yi = dr * YW + YAT + i;
        float v = XT ? h2f(((const u16 *)p.a[0])[xi]) : ((const float *)p.a[0])[xi];
        if (YT)
            ((u16 *)p.a[3])[yi] = f2h(v);
        else
            ((float *)p.a[3])[yi] = v;
    }
}
