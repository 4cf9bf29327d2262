/* spec_check.c — the seed's check_tp: can a loaded spec split over tp chips
 * (man5/logos-spec.5, "Splitting over chips")? Every layer must be an
 * unbiased, sinkless attention with a dense FFN whose heads, kv heads,
 * hidden width and q8 blocks divide over the chips. */
#include "logos.h"

/* Why attention layer l does not split over tp chips, or NULL. */
static const char *attn_tp_block(Arena *a, const Spec *s, int l, int tp)
{
    const AttnSpec *t = &spec_layer(s, l)->attn;
    const int bias[] = {t->q_bias, t->k_bias, t->v_bias, t->o_bias};
    for (int i = 0; i < 4; i++)
        if (bias[i])
            return arena_printf(a, "layer %d: attention has a %c bias", l, "qkvo"[i]);
    if (t->sinks)
        return arena_printf(a, "layer %d: attention has sinks", l);
    if (t->heads % tp)
        return arena_printf(a, "layer %d: %d heads do not split over %d chips", l, t->heads, tp);
    if (t->kv_heads % tp && tp % t->kv_heads)
        return arena_printf(a, "layer %d: %d kv heads neither split over nor replicate across "
                            "%d chips", l, t->kv_heads, tp);
    long o = (long)t->heads / tp * t->value_dim;
    if (s->fmt[WC_ATTN] == FMT_Q8 && o % 32)
        return arena_printf(a, "layer %d: attention output columns per chip %ld are not whole "
                            "32-value blocks (formats.attn is q8)", l, o);
    return NULL;
}

static const char *ffn_tp_block(Arena *a, const Spec *s, int l, int tp)
{
    const LayerSpec *L = spec_layer(s, l);
    if (L->ffn == FFN_MOE)
        return arena_printf(a, "layer %d: a mixture of experts does not split yet", l);
    if (L->dense.hidden % tp)
        return arena_printf(a, "layer %d: ffn hidden %d does not split over %d chips", l,
                            L->dense.hidden, tp);
    if (s->fmt[WC_FFN] == FMT_Q8 && L->dense.hidden / tp % 32)
        return arena_printf(a, "layer %d: ffn hidden per chip %d is not whole 32-value blocks "
                            "(formats.ffn is q8)", l, L->dense.hidden / tp);
    return NULL;
}

const char *spec_tp_block(Arena *a, const Spec *s, int tp)
{
    static const char *const mixer[] = {"attention", "latent", "delta", "conv"};
    if (tp < 1)
        return arena_printf(a, "tp %d is not a number of chips", tp);
    for (int l = 0; l < s->nlayers; l++) {
        const LayerSpec *L = spec_layer(s, l);
        if (L->mixer != MIX_ATTN)
            return arena_printf(a, "layer %d: a %s mixer does not split yet", l, mixer[L->mixer]);
        const char *why = attn_tp_block(a, s, l, tp);
        if (!why)
            why = ffn_tp_block(a, s, l, tp);
        if (why)
            return why;
    }
    return NULL;
}
