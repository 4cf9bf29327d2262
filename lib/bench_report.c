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

/* ---- the table ---- */

typedef struct Row {
    int k, i;            /* the first launch of its kind: program, launch */
    char brief[96];
    int count;
    double ms, bytes;
} Row;

static int by_time(const void *a, const void *b)
{
    double x = ((const Row *)a)->ms, y = ((const Row *)b)->ms;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* Launches of one kind (the same kernel and constants) summed. */
static int rows_of(const BenchRun *r, const BenchPos *b, Row *rows, int cap)
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
        rows[found].bytes += launch_bytes(pl, b->li[j], b->pos);
    }
    qsort(rows, (size_t)n, sizeof *rows, by_time);
    return n;
}

static void launch_table(FILE *f, const BenchRun *r, const BenchPos *b, double ceiling)
{
    Row rows[512];
    int n = rows_of(r, b, rows, 512);
    double sum = 0;
    for (int j = 0; j < b->nlaunch; j++)
        sum += b->launch_ms[j];
    fprintf(f, "\nlaunches at position %ld, each alone (the median of %d), by time:\n", b->pos, b->launch_reps);
    fprintf(f, "%5s  %-36s %9s %7s %14s %9s %8s\n", "count", "kernel", "ms", "share", "bytes", "GB/s", "ceiling");
    for (int q = 0; q < n; q++) {
        double gbs = rows[q].bytes / (rows[q].ms * 1e-3) / 1e9;
        fprintf(f, "%5d  %-36s %9.4f %6.1f%% %14.0f %9.1f %7.1f%%\n", rows[q].count, rows[q].brief, rows[q].ms,
                100 * rows[q].ms / b->med, rows[q].bytes, gbs, 100 * gbs / ceiling);
    }
    fprintf(f, "launches alone: %.4f ms; the step: %.4f ms; gap (between and around launches): %.4f ms\n", sum,
            b->med, b->med - sum);
}

void bench_table(FILE *f, const BenchRun *r, int nr, const BenchHead *h)
{
    if (h->gpu)
        fprintf(f, "device: %s (%d multiprocessors); read ceiling %.1f GB/s (a streaming read of %.1f GB)\n",
                h->gpu, h->sms, h->ceiling, h->buffer_gb);
    else
        fprintf(f, "device: none: the CPU reference's time, no GPU figures were taken\n");
    for (int i = 0; i < nr; i++) {
        fprintf(f, "%s%s: %s %s, numerics %s%s\n", i ? "\n" : "", r[i].label, r[i].st->progs[0]->model,
                r[i].st->progs[0]->form, numerics_name(r[i].numerics), r[i].fuse_quant ? ", fuse_quant" : "");
        fprintf(f, "%6s %14s %9s %19s %9s %9s %8s\n", "pos", "bytes", "ms/step", "(p10-p90)", "tok/s", "GB/s", "ceiling");
        for (int p = 0; p < r[i].nps; p++) {
            const BenchPos *b = &r[i].ps[p];
            double gbs = b->bytes / (b->med * 1e-3) / 1e9;
            char spread[40], frac[16] = "-";
            snprintf(spread, sizeof spread, "(%.4f-%.4f)", b->p10, b->p90);
            if (h->ceiling > 0)
                snprintf(frac, sizeof frac, "%.1f%%", 100 * gbs / h->ceiling);
            fprintf(f, "%6ld %14.0f %9.4f %19s %9.1f %9.1f %8s\n", b->pos, b->bytes, b->med, spread, 1e3 / b->med,
                    gbs, frac);
        }
        for (int p = 0; h->gpu && p < r[i].nps; p++)
            launch_table(f, &r[i], &r[i].ps[p], h->ceiling);
    }
    if (nr == 2)
        for (int p = 0; p < r[0].nps && p < r[1].nps; p++)
            fprintf(f, "\nat position %ld, %s takes %.3f times the time of %s\n", r[0].ps[p].pos, r[1].label,
                    r[1].ps[p].med / r[0].ps[p].med, r[0].label);
}

/* ---- CSV and JSON ---- */

void bench_csv(FILE *f, const BenchRun *r, int nr, const BenchHead *h)
{
    fprintf(f, "what,plan,model,form,pos,launch,kernel,count,ms,ms_p10,ms_p90,bytes,gb_per_s,fraction_of_ceiling,share\n");
    for (int i = 0; i < nr; i++)
        for (int p = 0; p < r[i].nps; p++) {
            const BenchPos *b = &r[i].ps[p];
            double gbs = b->bytes / (b->med * 1e-3) / 1e9;
            fprintf(f, "step,%s,%s,%s,%ld,,,1,%.6f,%.6f,%.6f,%.0f,%.3f,", r[i].label, r[i].st->progs[0]->model,
                    r[i].st->progs[0]->form, b->pos, b->med, b->p10, b->p90, b->bytes, gbs);
            if (h->ceiling > 0)
                fprintf(f, "%.4f", gbs / h->ceiling);
            fprintf(f, ",1\n");
            for (int j = 0; j < b->nlaunch; j++) {
                const Plan *pl = r[i].st->plans[b->lk[j]];
                char brief[96];
                launch_brief(pl, b->li[j], brief, sizeof brief);
                double by = launch_bytes(pl, b->li[j], b->pos), lg = by / (b->launch_ms[j] * 1e-3) / 1e9;
                fprintf(f, "launch,%s,%s,%s,%ld,%d,%s,1,%.6f,,,%.0f,%.3f,%.4f,%.4f\n", r[i].label,
                        r[i].st->progs[0]->model, r[i].st->progs[0]->form, b->pos, pl->ls[b->li[j]].line, brief,
                        b->launch_ms[j], by, lg, h->ceiling > 0 ? lg / h->ceiling : 0, b->launch_ms[j] / b->med);
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

void bench_json(FILE *f, const BenchRun *r, int nr, const BenchHead *h)
{
    fprintf(f, "{\"device\": ");
    if (h->gpu)
        json_str(f, h->gpu);
    else
        fputs("null", f);
    fprintf(f, ", \"ceiling_gb_per_s\": ");
    if (h->ceiling > 0)
        fprintf(f, "%.3f", h->ceiling);
    else
        fputs("null", f);
    fputs(", \"plans\": [", f);
    for (int i = 0; i < nr; i++) {
        fprintf(f, "%s{\"plan\": ", i ? ", " : "");
        json_str(f, r[i].label);
        fputs(", \"model\": ", f);
        json_str(f, r[i].st->progs[0]->model);
        fprintf(f, ", \"numerics\": \"%s\", \"fuse_quant\": %d, \"steps\": [", numerics_name(r[i].numerics),
                r[i].fuse_quant);
        for (int p = 0; p < r[i].nps; p++) {
            const BenchPos *b = &r[i].ps[p];
            double gbs = b->bytes / (b->med * 1e-3) / 1e9;
            fprintf(f, "%s{\"pos\": %ld, \"bytes\": %.0f, \"ms\": %.6f, \"ms_p10\": %.6f, \"ms_p90\": %.6f, "
                       "\"tokens_per_s\": %.3f, \"gb_per_s\": %.3f, \"fraction_of_ceiling\": ",
                    p ? ", " : "", b->pos, b->bytes, b->med, b->p10, b->p90, 1e3 / b->med, gbs);
            if (h->ceiling > 0)
                fprintf(f, "%.5f", gbs / h->ceiling);
            else
                fputs("null", f);
            fputs(", \"launches\": [", f);
            for (int j = 0; j < b->nlaunch; j++) {
                const Plan *pl = r[i].st->plans[b->lk[j]];
                char brief[96];
                launch_brief(pl, b->li[j], brief, sizeof brief);
                fprintf(f, "%s{\"line\": %d, \"kernel\": ", j ? ", " : "", pl->ls[b->li[j]].line);
                json_str(f, brief);
                fprintf(f, ", \"ms\": %.6f, \"bytes\": %.0f, \"flops\": %.0f}", b->launch_ms[j],
                        launch_bytes(pl, b->li[j], b->pos), launch_flops(pl, b->li[j], b->pos));
            }
            fputs("]}", f);
        }
        fputs("]}", f);
    }
    fputs("]}\n", f);
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

void bench_svg(FILE *f, const BenchRun *r, int nr, const BenchHead *h)
{
    const double W = 700, H = 420, xlo = 0.01, xhi = 1000, ylo = 1, yhi = 1e6;   /* FLOP/byte, GFLOP/s */
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
    static const char *colors[] = {"#1f77b4", "#2ca02c"};
    for (int i = 0; i < nr; i++)
        for (int p = 0; p < r[i].nps && p < 1; p++) {
            const BenchPos *b = &r[i].ps[p];
            for (int j = 0; j < b->nlaunch; j++) {
                const Plan *pl = r[i].st->plans[b->lk[j]];
                double by = launch_bytes(pl, b->li[j], b->pos), fl = launch_flops(pl, b->li[j], b->pos);
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
