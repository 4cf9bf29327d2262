/* bench_report.c — logos-bench's figures printed: a table a person reads,
 * CSV and JSON for scripts, and an SVG roofline (each launch's FLOPs a byte
 * against its achieved FLOP rate, under the read ceiling's roof). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "logos.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double sorted_median(const double *s, int n)
{
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return sorted_median(v, n);
}

/* The median and the 10th and 90th percentiles (nearest rank) of the step
 * times, from one sorted copy (the times stay in the order taken). */
void bench_summarize(BenchPos *b)
{
    int n = b->reps;
    double *s = malloc(sizeof *s * (size_t)n);
    if (!s)
        return;
    memcpy(s, b->ms, sizeof *s * (size_t)n);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    b->med = sorted_median(s, n);
    b->p10 = s[(int)floor(0.1 * (n - 1) + 0.5)];
    b->p90 = s[(int)floor(0.9 * (n - 1) + 0.5)];
    free(s);
}

/* ---- what every format shares ---- */

/* Where run b ran: a chunk's launches compute its rows. */
static BenchAt at_of(const BenchHead *h, const BenchPos *b)
{
    return bench_at(b->pos, h->form == BF_PREFILL ? b->rows : 0);
}

static const char *form_of(const BenchRun *r)
{
    return r->st->progs[r->prog]->form;
}

static double gb_per_s(double bytes, double ms)
{
    return bytes / (ms * 1e-3) / 1e9;
}

static double top_per_s(double ops, double ms)
{
    return ops / (ms * 1e-3) / 1e12;
}

/* ---- the table ---- */

typedef struct Row {
    int k, i;            /* the first launch of its kind: program, launch */
    char brief[96];
    int count;
    double ms, bytes, ops;
} Row;

static int by_time(const void *a, const void *b)
{
    double x = ((const Row *)a)->ms, y = ((const Row *)b)->ms;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* Launches of one kind (the same kernel and constants) summed. */
static int rows_of(const BenchRun *r, const BenchPos *b, BenchAt at, Row *rows, int cap)
{
    int n = 0;
    for (int j = 0; j < b->nlaunch; j++) {
        const Plan *pl = r->st->plans[b->lk[j]];
        const PLaunch *l = &pl->ls[b->li[j]];
        int found = -1;
        for (int q = 0; q < n && found < 0; q++) {
            const PLaunch *m = &r->st->plans[rows[q].k]->ls[rows[q].i];
            if (m->kernel == l->kernel && !memcmp(m->c, l->c, sizeof m->c))
                found = q;
        }
        if (found < 0 && n < cap) {
            found = n++;
            rows[found] = (Row){.k = b->lk[j], .i = b->li[j]};
            launch_brief(pl, b->li[j], rows[found].brief, sizeof rows[found].brief);
        }
        if (found < 0)
            continue;
        rows[found].count++;
        rows[found].ms += b->launch_ms[j];
        rows[found].bytes += launch_bytes(pl, b->li[j], at);
        rows[found].ops += launch_ops(pl, b->li[j], at);
    }
    qsort(rows, (size_t)n, sizeof *rows, by_time);
    return n;
}

/* "12.3%" of a rate, or "-" without one. */
static const char *share_of(char *buf, size_t n, double v, double rate)
{
    if (rate > 0)
        snprintf(buf, n, "%.1f%%", 100 * v / rate);
    else
        snprintf(buf, n, "-");
    return buf;
}

static void launch_table(FILE *f, const BenchRun *r, const BenchPos *b, const BenchHead *h)
{
    Row rows[512];
    int n = rows_of(r, b, at_of(h, b), rows, 512), wide = h->form != BF_STEP;
    double sum = 0;
    for (int j = 0; j < b->nlaunch; j++)
        sum += b->launch_ms[j];
    fprintf(f, "\nlaunches at position %ld, each alone (the median of %d), by time:\n", b->pos, b->launch_reps);
    fprintf(f, "%5s  %-36s %9s %7s %14s %9s %8s", "count", "kernel", "ms", "share", "bytes", "GB/s", "ceiling");
    fprintf(f, wide ? " %16s %9s %8s\n" : "\n", "ops", "TOP/s", "tensor");
    for (int q = 0; q < n; q++) {
        double gbs = gb_per_s(rows[q].bytes, rows[q].ms), tops = top_per_s(rows[q].ops, rows[q].ms);
        char frac[16];
        fprintf(f, "%5d  %-36s %9.4f %6.1f%% %14.0f %9.1f %7.1f%%", rows[q].count, rows[q].brief, rows[q].ms,
                100 * rows[q].ms / b->med, rows[q].bytes, gbs, 100 * gbs / h->ceiling);
        if (wide)
            fprintf(f, " %16.0f %9.3f %8s", rows[q].ops, tops, share_of(frac, sizeof frac, tops, h->tensor));
        fputc('\n', f);
    }
    fprintf(f, "launches alone: %.4f ms; the step: %.4f ms; gap (between and around launches): %.4f ms\n", sum,
            b->med, b->med - sum);
}

static void device_line(FILE *f, const BenchHead *h)
{
    if (!h->gpu) {
        fprintf(f, "device: none: the CPU reference's time, no GPU figures were taken\n");
        return;
    }
    fprintf(f, "device: %s (%d multiprocessors); read ceiling %.1f GB/s (a streaming read of %.1f GB)", h->gpu,
            h->sms, h->ceiling, h->buffer_gb);
    if (h->form != BF_STEP)
        fprintf(f, "; tensor cores %.1f TOP/s (int8 mma.sync)", h->tensor);
    fputc('\n', f);
    if (h->marks)
        fprintf(f, "(timed with --timeline's marks in every kernel)\n");
}

static void pos_table(FILE *f, const BenchRun *r, const BenchHead *h)
{
    int wide = h->form != BF_STEP;
    fprintf(f, "%6s %14s %9s %19s %9s %9s %8s", "pos", "bytes", h->form == BF_PREFILL ? "ms/chunk" : "ms/step",
            "(p10-p90)", "tok/s", "GB/s", "ceiling");
    fprintf(f, wide ? " %6s %16s %9s %8s\n" : "\n", "rows", "ops", "TOP/s", "tensor");
    for (int p = 0; p < r->nps; p++) {
        const BenchPos *b = &r->ps[p];
        double gbs = gb_per_s(b->bytes, b->med), tops = top_per_s(b->ops, b->med);
        char spread[40], frac[16], tfrac[16];
        snprintf(spread, sizeof spread, "(%.4f-%.4f)", b->p10, b->p90);
        fprintf(f, "%6ld %14.0f %9.4f %19s %9.1f %9.1f %8s", b->pos, b->bytes, b->med, spread,
                (double)b->rows * 1e3 / b->med, gbs, share_of(frac, sizeof frac, gbs, h->ceiling));
        if (wide)
            fprintf(f, " %6ld %16.0f %9.3f %8s", b->rows, b->ops, tops, share_of(tfrac, sizeof tfrac, tops, h->tensor));
        fputc('\n', f);
    }
}

void bench_table(FILE *f, const BenchRun *r, int nr, const BenchHead *h)
{
    device_line(f, h);
    for (int i = 0; i < nr; i++) {
        fprintf(f, "%s%s: %s %s, numerics %s%s\n", i ? "\n" : "", r[i].label, r[i].st->progs[0]->model, form_of(&r[i]),
                numerics_name(r[i].numerics), r[i].fuse_quant ? ", fuse_quant" : "");
        pos_table(f, &r[i], h);
        for (int p = 0; h->gpu && p < r[i].nps; p++)
            launch_table(f, &r[i], &r[i].ps[p], h);
    }
    if (nr == 2)
        for (int p = 0; p < r[0].nps && p < r[1].nps; p++)
            fprintf(f, "\nat position %ld, %s takes %.3f times the time of %s\n", r[0].ps[p].pos, r[1].label,
                    r[1].ps[p].med / r[0].ps[p].med, r[0].label);
}

/* ---- CSV and JSON ---- */

/* A chunk's or a batch's columns after the step's: rows, ops, TOP/s and
 * its fraction of the tensor rate (empty without one). */
static void csv_wide(FILE *f, const BenchHead *h, double rows, double ops, double ms)
{
    if (h->form == BF_STEP)
        return;
    double tops = top_per_s(ops, ms);
    fprintf(f, ",%.0f,%.0f,%.4f,", rows, ops, tops);
    if (h->tensor > 0)
        fprintf(f, "%.5f", tops / h->tensor);
}

void bench_csv(FILE *f, const BenchRun *r, int nr, const BenchHead *h)
{
    fprintf(f, "what,plan,model,form,pos,launch,kernel,count,ms,ms_p10,ms_p90,bytes,gb_per_s,fraction_of_ceiling,share%s\n",
            h->form == BF_STEP ? "" : ",rows,ops,top_per_s,fraction_of_tensor_rate");
    for (int i = 0; i < nr; i++)
        for (int p = 0; p < r[i].nps; p++) {
            const BenchPos *b = &r[i].ps[p];
            BenchAt at = at_of(h, b);
            double gbs = gb_per_s(b->bytes, b->med);
            fprintf(f, "step,%s,%s,%s,%ld,,,1,%.6f,%.6f,%.6f,%.0f,%.3f,", r[i].label, r[i].st->progs[0]->model,
                    form_of(&r[i]), b->pos, b->med, b->p10, b->p90, b->bytes, gbs);
            if (h->ceiling > 0)
                fprintf(f, "%.4f", gbs / h->ceiling);
            fprintf(f, ",1");
            csv_wide(f, h, (double)b->rows, b->ops, b->med);
            fputc('\n', f);
            for (int j = 0; j < b->nlaunch; j++) {
                const Plan *pl = r[i].st->plans[b->lk[j]];
                char brief[96];
                launch_brief(pl, b->li[j], brief, sizeof brief);
                double by = launch_bytes(pl, b->li[j], at), lg = gb_per_s(by, b->launch_ms[j]);
                fprintf(f, "launch,%s,%s,%s,%ld,%d,%s,1,%.6f,,,%.0f,%.3f,%.4f,%.4f", r[i].label,
                        r[i].st->progs[0]->model, form_of(&r[i]), b->pos, pl->ls[b->li[j]].line, brief,
                        b->launch_ms[j], by, lg, h->ceiling > 0 ? lg / h->ceiling : 0, b->launch_ms[j] / b->med);
                csv_wide(f, h, launch_rows(pl, b->li[j], at), launch_ops(pl, b->li[j], at), b->launch_ms[j]);
                fputc('\n', f);
            }
        }
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++)
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 32)
            fprintf(f, "\\u%04x", *s);
        else
            fputc(*s, f);
    fputc('"', f);
}

/* v over rate, or null without a rate. */
static void json_ratio(FILE *f, const char *fmt, double v, double rate)
{
    if (rate > 0)
        fprintf(f, fmt, v / rate);
    else
        fputs("null", f);
}

/* A rate, or null when there is none (0). */
static void json_rate(FILE *f, double rate)
{
    if (rate > 0)
        fprintf(f, "%.3f", rate);
    else
        fputs("null", f);
}

static void json_launches(FILE *f, const BenchRun *r, const BenchPos *b, const BenchHead *h)
{
    BenchAt at = at_of(h, b);
    fputs(", \"launches\": [", f);
    for (int j = 0; j < b->nlaunch; j++) {
        const Plan *pl = r->st->plans[b->lk[j]];
        char brief[96];
        launch_brief(pl, b->li[j], brief, sizeof brief);
        fprintf(f, "%s{\"line\": %d, \"kernel\": ", j ? ", " : "", pl->ls[b->li[j]].line);
        json_str(f, brief);
        fprintf(f, ", \"ms\": %.6f, \"bytes\": %.0f, \"flops\": %.0f", b->launch_ms[j], launch_bytes(pl, b->li[j], at),
                launch_flops(pl, b->li[j], at));
        if (h->form != BF_STEP)
            fprintf(f, ", \"rows\": %.0f, \"ops\": %.0f", launch_rows(pl, b->li[j], at), launch_ops(pl, b->li[j], at));
        fputc('}', f);
    }
    fputc(']', f);
}

static void json_steps(FILE *f, const BenchRun *r, const BenchHead *h)
{
    for (int p = 0; p < r->nps; p++) {
        const BenchPos *b = &r->ps[p];
        double gbs = gb_per_s(b->bytes, b->med), tops = top_per_s(b->ops, b->med);
        fprintf(f, "%s{\"pos\": %ld, \"bytes\": %.0f, \"ms\": %.6f, \"ms_p10\": %.6f, \"ms_p90\": %.6f, "
                   "\"tokens_per_s\": %.3f, \"gb_per_s\": %.3f, \"fraction_of_ceiling\": ",
                p ? ", " : "", b->pos, b->bytes, b->med, b->p10, b->p90, (double)b->rows * 1e3 / b->med, gbs);
        json_ratio(f, "%.5f", gbs, h->ceiling);
        json_launches(f, r, b, h);
        if (h->form != BF_STEP) {
            fprintf(f, ", \"rows\": %ld, \"ops\": %.0f, \"top_per_s\": %.6f, \"fraction_of_tensor_rate\": ", b->rows,
                    b->ops, tops);
            json_ratio(f, "%.5f", tops, h->tensor);
        }
        fputc('}', f);
    }
}

void bench_json(FILE *f, const BenchRun *r, int nr, const BenchHead *h)
{
    fprintf(f, "{\"device\": ");
    if (h->gpu)
        json_str(f, h->gpu);
    else
        fputs("null", f);
    fprintf(f, ", \"ceiling_gb_per_s\": ");
    json_rate(f, h->ceiling);
    fputs(", \"plans\": [", f);
    for (int i = 0; i < nr; i++) {
        fprintf(f, "%s{\"plan\": ", i ? ", " : "");
        json_str(f, r[i].label);
        fputs(", \"model\": ", f);
        json_str(f, r[i].st->progs[0]->model);
        fprintf(f, ", \"numerics\": \"%s\", \"fuse_quant\": %d, \"steps\": [", numerics_name(r[i].numerics),
                r[i].fuse_quant);
        json_steps(f, &r[i], h);
        fputs("]}", f);
    }
    fputc(']', f);
    if (h->form != BF_STEP) {
        fprintf(f, ", \"form\": \"%s\", \"tensor_top_per_s\": ", bench_form_word(h->form));
        json_rate(f, h->tensor);
    }
    fputs("}\n", f);
}

/* ---- the roofline ---- */

static double lx(double v, double lo, double hi, double w)
{
    return 60 + (log10(v) - log10(lo)) / (log10(hi) - log10(lo)) * w;
}

static double ly(double v, double lo, double hi, double h)
{
    return 20 + h - (log10(v) - log10(lo)) / (log10(hi) - log10(lo)) * h;
}

/* The tensor cores' roof: their rate, from where the memory roof meets it. */
static void tensor_roof(FILE *f, const BenchHead *h, double xlo, double xhi, double ylo, double yhi, double W,
                        double H)
{
    double y = h->tensor * 1e3, x0 = h->ceiling > 0 && y / h->ceiling > xlo ? y / h->ceiling : xlo;
    if (y < ylo || y > yhi || x0 >= xhi)
        return;
    double at = ly(y, ylo, yhi, H);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#c60\"/>\n<text x=\"%.1f\" y=\"%.1f\" "
               "fill=\"#c60\" text-anchor=\"end\">tensor cores %.0f TOP/s</text>\n",
            lx(x0, xlo, xhi, W), at, lx(xhi, xlo, xhi, W), at, 55 + W, at - 4, h->tensor);
}

void bench_svg(FILE *f, const BenchRun *r, int nr, const BenchHead *h)
{
    /* FLOP/byte, GFLOP/s: a chunk's or a batch's products reach past 10^6 */
    const double W = 700, H = 420, xlo = 0.01, xhi = 1000, ylo = 1, yhi = h->form == BF_STEP ? 1e6 : 1e7;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
               "height=\"%.0f\" font-family=\"sans-serif\" font-size=\"11\">\n", W + 80, H + 60);
    fprintf(f, "<rect x=\"60\" y=\"20\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" stroke=\"#444\"/>\n", W, H);
    for (double x = xlo; x <= xhi * 1.01; x *= 10)
        fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%g</text>\n", lx(x, xlo, xhi, W), H + 35, x);
    for (double y = ylo; y <= yhi * 1.01; y *= 10)
        fprintf(f, "<text x=\"55\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", ly(y, ylo, yhi, H) + 4, y);
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">FLOPs a byte</text>\n", 60 + W / 2, H + 52);
    fprintf(f, "<text x=\"14\" y=\"%.0f\" transform=\"rotate(-90 14 %.0f)\" text-anchor=\"middle\">GFLOP/s</text>\n",
            20 + H / 2, 20 + H / 2);
    if (h->ceiling > 0)   /* the memory roof: GFLOP/s = ceiling GB/s times FLOPs a byte */
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#c00\"/>\n<text x=\"%.1f\" y=\"%.1f\" "
                   "fill=\"#c00\">read ceiling %.0f GB/s</text>\n",
                lx(ylo / h->ceiling > xlo ? ylo / h->ceiling : xlo, xlo, xhi, W),
                ly(h->ceiling * (ylo / h->ceiling > xlo ? ylo / h->ceiling : xlo), ylo, yhi, H),
                lx(yhi / h->ceiling < xhi ? yhi / h->ceiling : xhi, xlo, xhi, W),
                ly(h->ceiling * (yhi / h->ceiling < xhi ? yhi / h->ceiling : xhi), ylo, yhi, H), 70.0, 35.0, h->ceiling);
    if (h->tensor > 0)
        tensor_roof(f, h, xlo, xhi, ylo, yhi, W, H);
    static const char *colors[] = {"#1f77b4", "#2ca02c"};
    for (int i = 0; i < nr; i++)
        for (int p = 0; p < r[i].nps && p < 1; p++) {
            const BenchPos *b = &r[i].ps[p];
            BenchAt at = at_of(h, b);
            for (int j = 0; j < b->nlaunch; j++) {
                const Plan *pl = r[i].st->plans[b->lk[j]];
                double by = launch_bytes(pl, b->li[j], at), fl = launch_flops(pl, b->li[j], at);
                double x = fl / (by > 0 ? by : 1), y = fl / (b->launch_ms[j] * 1e-3) / 1e9;
                if (x < xlo || x > xhi || y < ylo || y > yhi)
                    continue;
                char brief[96];
                launch_brief(pl, b->li[j], brief, sizeof brief);
                fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\" fill-opacity=\"0.6\"><title>%s: %.4f ms"
                           "</title></circle>\n", lx(x, xlo, xhi, W), ly(y, ylo, yhi, H), colors[i % 2], brief,
                        b->launch_ms[j]);
            }
            fprintf(f, "<text x=\"70\" y=\"%d\" fill=\"%s\">%s</text>\n", 50 + 14 * i, colors[i % 2], r[i].label);
        }
    fputs("</svg>\n", f);
}
