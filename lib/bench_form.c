/* bench_form.c — the forms logos-bench times: a decode step, a prefill
 * chunk of T rows, a batch of B decode steps. Which phase of a stream each
 * is, whether a stream holds it (the message naming the file and what it
 * holds when not), whether its rows and positions fit the stream, the
 * inputs of each timed run (the tokens change from run to run, so no cache
 * is flattered) and the CPU reference's times. */
#include <stdlib.h>
#include <string.h>

#include "logos.h"

static const char *words[] = {"step", "prefill", "decode_batch"};
static const char *timed[] = {"decode steps", "a prefill chunk", "a batch of decode steps"};
static const int phases[] = {PH_STEP, PH_CHUNK, PH_BATCH};

const char *bench_form_word(int form)
{
    return words[form];
}

int bench_phase(int form)
{
    return phases[form];
}

/* What the stream holds, each phase with the form that times it. */
static const char *holds(const Stream *st)
{
    static const int order[] = {BF_PREFILL, BF_STEP, BF_BATCH};
    const char *s = "";
    for (int i = 0; i < 3; i++) {
        int f = order[i];
        if (!st->has[phases[f]])
            continue;
        const char *what = f == BF_BATCH ? arena_printf(st->a, "a batch of %d decode steps", st->batch) : timed[f];
        s = arena_printf(st->a, "%s%s%s (--form %s)", s, *s ? " and " : "", what, words[f]);
    }
    return s;
}

int bench_holds(const Stream *st, int form)
{
    if (st->has[phases[form]])
        return 0;
    diag_file(st->src, "--form %s times %s: the stream holds %s", words[form], timed[form], holds(st));
    return EXIT_INPUT;
}

/* A chunk's rows: asked for (each chunk plan must hold them), or the
 * fewest any chunk plan holds (dflt when none has a plan). */
static int chunk_fits(const Stream *st, BenchForm *f, long dflt)
{
    long least = 0;
    for (int k = 0; k < st->nprogs; k++) {
        const Plan *pl = st->plans[k];
        if (!pl || !phase_is(st, k, PH_CHUNK))
            continue;
        if (f->rows > pl->rows) {
            diag_file(st->src, "a chunk of %ld rows: the plan's chunks hold at most %d (logos-fuse --rows %ld)",
                      f->rows, pl->rows, f->rows);
            return EXIT_INPUT;
        }
        least = !least || pl->rows < least ? pl->rows : least;
    }
    if (!f->rows)
        f->rows = least ? least : dflt;
    return 0;
}

int bench_fits(const Stream *st, BenchForm *f, long dflt)
{
    switch (f->form) {
    case BF_PREFILL:
        return chunk_fits(st, f, dflt);
    case BF_BATCH:
        if (f->rows && f->rows != st->batch) {
            diag_file(st->src, "--batch %ld: the stream steps %d sequences together, not %ld (logos-author "
                               "decode_batch --batch %ld writes a batch of %ld)", f->rows, st->batch, f->rows, f->rows,
                      f->rows);
            return EXIT_INPUT;
        }
        f->rows = st->batch;
        return 0;
    default:
        f->rows = 1;
        return 0;
    }
}

int bench_pos_fits(const Stream *st, const BenchForm *f, long pos)
{
    long last = f->form == BF_PREFILL ? pos + f->rows - 1 : pos;
    if (st->ctx <= 0 || last <= st->ctx)
        return 0;
    if (f->form == BF_PREFILL)
        diag("a chunk of %ld rows at position %ld reaches position %ld, past the %ld positions the states hold",
             f->rows, pos, last, st->ctx);
    else
        diag("position %ld is past the %ld positions the states hold", pos, st->ctx);
    return EXIT_INPUT;
}

int bench_inputs(Stream *st, const BenchForm *f, long pos, int run)
{
    long vocab = st->vocab > 0 ? st->vocab : 2, n = f->form == BF_STEP ? 1 : f->rows;
    int32_t *toks = malloc(sizeof *toks * (size_t)n), *at = malloc(sizeof *at * (size_t)n);
    if (!toks || !at) {
        free(toks);
        free(at);
        diag("out of memory");
        return EXIT_SYSTEM;
    }
    for (long j = 0; j < n; j++) {
        toks[j] = (int32_t)((((long)run * n + j) * 7919 + 1) % vocab);
        at[j] = (int32_t)pos;   /* every sequence of a batch at pos */
    }
    int s = f->form == BF_PREFILL ? chunk_inputs(st, toks, (int)n, (int32_t)pos)
          : f->form == BF_BATCH   ? batch_step_inputs(st, toks, at)
                                  : step_inputs(st, toks[0], (int32_t)pos);
    free(toks);
    free(at);
    return s;
}

int bench_cpu_times(Stream *st, const BenchForm *f, long pos, int reps, double *ms)
{
    for (int i = 0; i < reps; i++) {
        double t0 = mono_s();
        int s = bench_inputs(st, f, pos, i);
        if (!s)
            s = run_phase(st, bench_phase(f->form));
        if (s)
            return s;
        ms[i] = (mono_s() - t0) * 1e3;
    }
    return 0;
}
