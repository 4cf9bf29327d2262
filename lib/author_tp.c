/* author_tp.c — how the tensor-parallel forms split a layer over e->chips
 * chips (man5/logos-placement.5): attention by heads (the query rows of a
 * chip's heads; the key and value rows of its kv heads, one kv head on
 * neighbouring chips when the chips outnumber the kv heads; the output
 * product's columns), the dense FFN by its hidden columns (the gate and up
 * rows, the down product's columns), each split closed by an allreduce of
 * the partial products. The embedding, the norms and the head stay whole on
 * every chip: the replicated spine. When a form is not split (chips 0)
 * every helper gives the single-chip text. Also the manifest of each chip's
 * part of every whole weight file. */
#include "author.h"

long tp_part(Em *e, long n)
{
    return e->chips ? n / e->chips : n;
}

const char *tp_rows(Em *e, long parts)
{
    return e->chips ? arena_printf(e->a, " split(rows, %ld)", parts) : "";
}

const char *tp_cols(Em *e)
{
    return e->chips ? arena_printf(e->a, " split(cols, %d)", e->chips) : "";
}

const char *tp_close(Em *e, const char *y)
{
    return e->chips ? arena_printf(e->a, "allreduce(%s)", y) : y;
}

/* A chip holds heads/chips query heads and the kv heads they read: kv/chips
 * of them, or one when the chips outnumber the kv heads (spec_tp_block
 * guarantees that one count divides the other). */
Split tp_heads(Em *e, const AttnSpec *A)
{
    Split h = {A->heads, A->kv_heads, "", "", ""};
    if (!e->chips)
        return h;
    long kvparts = A->kv_heads < e->chips ? A->kv_heads : e->chips;
    ASSERT(A->heads % e->chips == 0 && (A->kv_heads % e->chips == 0 || e->chips % A->kv_heads == 0));
    h.nh = A->heads / e->chips;
    h.nkv = A->kv_heads / kvparts;
    h.q = tp_rows(e, e->chips);
    h.kv = tp_rows(e, kvparts);
    h.cols = tp_cols(e);
    return h;
}

/* One manifest line: RANK NAME FORMAT COUNT SHAPE PART FILE [FILE], the
 * shape the whole files hold and the part of it the chip reads. */
static void manifest_line(Arena *a, const Decl *w, int chips, int rank, FILE *out)
{
    long count, dims[LOGOS_MAXRANK];
    ASSERT(decl_count(w, &count) == 0);
    place_whole(w, dims);
    fprintf(out, "%d %s %s %ld ", rank, w->name, w->base == T_Q8 ? "q8" : "f32", count);
    for (int k = 0; k < w->rank; k++)
        fprintf(out, "%s%ld", k ? "x" : "", dims[k]);
    fprintf(out, " %s", place_part_text(a, w, chips, rank));
    if (w->base == T_Q8)
        fprintf(out, " %s.q %s.s\n", w->name, w->name);
    else
        fprintf(out, " %s.f\n", w->name);
}

void tp_manifest(Arena *a, Prog *const *progs, int n, int chips, FILE *out)
{
    int nw;
    const Decl **w = prog_weights(a, progs, n, &nw);
    for (int r = 0; r < chips; r++)
        for (int i = 0; i < nw; i++)
            manifest_line(a, w[i], chips, r, out);
}
