// elem.cu — one elementwise op with broadcasting:
//
//   y[i] = f(a[(i / ADIV) % AMOD], b[(i / BDIV) % BMOD])   (b = BVAL when BLIT)
//   f by OP: 0 a+b, 1 a-b, 2 a*b, 3 a/b, 4 -a, 5 silu(a), 6 gelu_tanh(a),
//   7 sigmoid(a), 8 softplus(a), 9 exp(a), 10 tanh(a), 11 P0 tanh(a / P0)
//   (softcap), 12 min(max(a, P0), P1) (clamp), 13 a (a copy)
//
// Shapes: y has N values, or n * N / ROWS when the size n is given (a
// stacked tensor's rows); a holds AMOD values, b BMOD.
// Launch: grid ceil(N / 256), block 256: a thread a value.

DEV float op(float a, float b)
{
    switch (OP) {
    case 0: return a + b;
    case 1: return a - b;
    case 2: return a * b;
    case 3: return a / b;
    case 4: return -a;
    case 5: return silu(a);
    case 6: return gelu_tanh(a);
    case 7: return sigmoid(a);
    case 8: return a > 20.0f ? a : log1pf(expf(a));
    case 9: return expf(a);
    case 10: return tanhf(a);
    case 11: return P0 * tanhf(a / P0);
    case 12: return fminf(fmaxf(a, P0), P1);
    default: return a;
    }
}

extern "C" __global__ void __launch_bounds__(256) elem(const Params p)
{
    KERNEL_OPEN();
    pdl_begin();
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    long count = p.a[2] ? (long)*(const int *)p.a[2] * (N / ROWS) : N;
    if (i >= count)
        return;
    float a = ((const float *)p.a[0])[(i / ADIV) % AMOD];
    float b = BLIT || OP > 3 ? BVAL : ((const float *)p.a[1])[(i / BDIV) % BMOD];
    ((float *)p.a[3])[i] = op(a, b);
}
