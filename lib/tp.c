/* tp.c — a split program (man5/logos-placement.5) run on the CPU as its N
 * chips: one thread a chip, each with its own env (its part of the weights,
 * its states, its inputs and outputs), the collectives as sums and gathers
 * across them. A collective is two barriers: every chip posts its values,
 * every chip reads them all in rank order (so the chips' results are the
 * same to the bit), and no chip goes on until all have read. A chip that
 * stops on an input error wakes the others, which stop quietly. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "logos.h"

typedef struct Chips {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int n;
    int arrived, gen;      /* the barrier: chips arrived, its generation */
    int stopped;           /* a chip stopped on an input error */
    const float **x;       /* each chip's posted values */
    long *rows, *cols;
} Chips;

typedef struct Chip {
    Chips *all;
    int rank, rc;
    const Prog *p;
    Env *env;
    RefColl coll;
} Chip;

/* Waits until every chip has arrived (0) or one has stopped (-1); holds mu. */
static int barrier(Chips *c)
{
    int gen = c->gen;
    if (++c->arrived == c->n) {
        c->arrived = 0;
        c->gen++;
        pthread_cond_broadcast(&c->cv);
        return 0;
    }
    while (gen == c->gen && !c->stopped)
        pthread_cond_wait(&c->cv, &c->mu);
    return gen == c->gen ? -1 : 0;
}

static int sync_all(Chips *c)
{
    pthread_mutex_lock(&c->mu);
    int rc = c->stopped ? -1 : barrier(c);
    pthread_mutex_unlock(&c->mu);
    return rc;
}

/* out: the sum of the chips' values, accumulated in f64 in rank order. */
static void reduce(const Chips *c, long n, float *out)
{
    for (long i = 0; i < n; i++) {
        double s = 0;
        for (int k = 0; k < c->n; k++)
            s += c->x[k][i];
        out[i] = (float)s;
    }
}

/* out: each row the chips' rows joined in rank order. */
static void gather(const Chips *c, long rows, long cols, float *out)
{
    for (long t = 0; t < rows; t++)
        for (int k = 0; k < c->n; k++)
            for (long j = 0; j < cols; j++)
                out[(t * c->n + k) * cols + j] = c->x[k][t * cols + j];
}

static int join(void *ctx, int op, const float *x, long rows, long cols, float *out)
{
    Chip *me = ctx;
    Chips *c = me->all;
    c->x[me->rank] = x;
    c->rows[me->rank] = rows;
    c->cols[me->rank] = cols;
    if (sync_all(c))
        return -1;
    for (int k = 0; k < c->n; k++)   /* the chips run one program: its shapes are theirs */
        ASSERT(c->rows[k] == rows && c->cols[k] == cols);
    if (op == OP_ALLREDUCE)
        reduce(c, rows * cols, out);
    else
        gather(c, rows, cols, out);
    return sync_all(c);   /* the posted values stay until every chip has read them */
}

static int stop(void *ctx)
{
    Chips *c = ((Chip *)ctx)->all;
    pthread_mutex_lock(&c->mu);
    int first = !c->stopped;
    c->stopped = 1;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    return first;
}

static void *chip_main(void *arg)
{
    Chip *me = arg;
    me->rc = ref_run_coll(me->p, me->env, &me->coll);
    return NULL;
}

int tp_run(const Prog *p, Env **envs)
{
    int n = p->chips ? p->chips : 1;
    Chips c = {.n = n};
    pthread_mutex_init(&c.mu, NULL);
    pthread_cond_init(&c.cv, NULL);
    c.x = calloc((size_t)n, sizeof *c.x);
    c.rows = calloc((size_t)n, sizeof *c.rows);
    c.cols = calloc((size_t)n, sizeof *c.cols);
    Chip *chips = calloc((size_t)n, sizeof *chips);
    pthread_t *th = calloc((size_t)n, sizeof *th);
    if (!c.x || !c.rows || !c.cols || !chips || !th)
        BUG("out of memory");
    int started = 0, rc = 0;
    for (; started < n; started++) {
        Chip *ch = &chips[started];
        *ch = (Chip){&c, started, 0, p, envs[started], {join, stop, NULL, n}};
        ch->coll.ctx = ch;
        int err = pthread_create(&th[started], NULL, chip_main, ch);
        if (err) {   /* the chips started stop at their first collective */
            diag("cannot start chip %d of %d: %s", started, n, strerror(err));
            stop(ch);
            rc = EXIT_SYSTEM;
            break;
        }
    }
    for (int r = 0; r < started; r++) {
        pthread_join(th[r], NULL);
        if (chips[r].rc && !rc)
            rc = chips[r].rc;
    }
    pthread_cond_destroy(&c.cv);
    pthread_mutex_destroy(&c.mu);
    free(c.x);
    free(c.rows);
    free(c.cols);
    free(chips);
    free(th);
    return rc;
}
