// parts.cuh — what the products of one activation in parts (gemv.cu,
// mma.cu, mmv.cu) share: their units, a part's weights, and the epilogue.
// The builder of a kernel's source (lib/kernels.c) puts this file where
// the kernel includes it, after the constants: it reads N0 .. N3, GATE,
// BIAS, CAP, GS, RES and OQ, and the kernel's Y_AT, B_AT, R_AT and GS_AT
// (the indices of y0, b0, r0 and gs in its parameters; the parts' follow
// each).
//
// Units: the parts' output rows end to end (N0, N1, N2, N3), or under GATE
// the gate's rows, each standing for its up row too (N0, N2, N3).

constexpr int GATED = GATE ? 1 : 0;
constexpr long UNITS = GATED ? N0 + N2 + N3 : N0 + N1 + N2 + N3;

struct Unit {
    int part;
    int row;   // below 2^31: a weight's rows
};

DEV Unit unit_of(long u)
{
    Unit r;
    long n0 = N0, n1 = GATED ? 0 : N1;
    if (u < n0)
        r = Unit{0, (int)u};
    else if (u < n0 + n1)
        r = Unit{1, (int)(u - n0)};
    else if (u < n0 + n1 + N2)
        r = Unit{2, (int)(u - n0 - n1)};
    else
        r = Unit{3, (int)(u - n0 - n1 - N2)};
    return r;
}

// Part p's output rows.
DEV long rows_in(int p)
{
    return p == 0 ? N0 : p == 1 ? N1 : p == 2 ? N2 : N3;
}

// Part p's weights, by selection (a run-time index into the parameters
// would put them in local memory).
DEV const char *part_w(const Params &p, int part)
{
    return (const char *)(part == 0 ? p.a[0] : part == 1 ? p.a[1] : part == 2 ? p.a[2] : p.a[3]);
}

// The parameter of part q at index at, at + 1, at + 2 or at + 3.
DEV void *part_arg(const Params &p, int at, int q)
{
    return q == 0 ? p.a[at] : q == 1 ? p.a[at + 1] : q == 2 ? p.a[at + 2] : p.a[at + 3];
}

// The epilogue of one unit's value v at activation row t (v1: the up
// product under GATE), in the order the kernels' opening comments give;
// returns the value (part 0's is what OQ quantizes and ARGMAX compares).
DEV float epilogue(const Params &p, Unit u, long t, float v, float v1)
{
    int q = u.part;
    const float *b = (const float *)part_arg(p, B_AT, q), *r = (const float *)part_arg(p, R_AT, q);
    float *y = (float *)part_arg(p, Y_AT, q);
    if (BIAS & (1 << q))
        v += b[u.row];
    if (GATED && q == 0) {
        if (BIAS & 2)
            v1 += ((const float *)p.a[B_AT + 1])[u.row];
        v = (GATE == 1 ? silu(v) : gelu_tanh(v)) * v1;
    }
    if (CAP > 0.0f && q == 0)
        v = CAP * tanhf(v / CAP);
    if (GS && q == 0)   // the row's gate: a scalar's sigmoid
        v *= sigmoid(((const float *)p.a[GS_AT])[t]);
    long at = t * rows_in(q) + u.row;
    if (RES & (1 << q))
        v += r[at];
    if (!(OQ && q == 0))
        y[at] = v;
    return v;
}

// The epilogue's loads of one unit at activation row t (its biases, the
// up row's under GATE, its row's gate under GS, its residual), and the
// epilogue given them: the same values as epilogue's, for a kernel that
// runs many units' epilogues in turn and loads several units' first, so
// that their trips to memory overlap (mmi.cu). epilogue above stays as
// written: made of these two, the Llama-3-8B decode step's gated GEMV
// spilled 36 bytes, where it spills none.
struct Pre {
    float b, b1, g, r;
};

DEV Pre epilogue_loads(const Params &p, Unit u, long t)
{
    int q = u.part;
    Pre e = {0.0f, 0.0f, 0.0f, 0.0f};
    if (BIAS & (1 << q))
        e.b = ((const float *)part_arg(p, B_AT, q))[u.row];
    if (GATED && q == 0 && (BIAS & 2))
        e.b1 = ((const float *)p.a[B_AT + 1])[u.row];
    if (GS && q == 0)
        e.g = ((const float *)p.a[GS_AT])[t];
    if (RES & (1 << q))
        e.r = ((const float *)part_arg(p, R_AT, q))[t * rows_in(q) + u.row];
    return e;
}

DEV float epilogue_with(const Params &p, Unit u, long t, float v, float v1, Pre e)
{
    int q = u.part;
    if (BIAS & (1 << q))
        v += e.b;
    if (GATED && q == 0)
        v = (GATE == 1 ? silu(v) : gelu_tanh(v)) * (v1 + e.b1);
    if (CAP > 0.0f && q == 0)
        v = CAP * tanhf(v / CAP);
    if (GS && q == 0)
        v *= sigmoid(e.g);
    if (RES & (1 << q))
        v += e.r;
    if (!(OQ && q == 0))
        ((float *)part_arg(p, Y_AT, q))[t * rows_in(q) + u.row] = v;
    return v;
}
