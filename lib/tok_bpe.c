/* tok_bpe.c — the BPE model: the pieces of one pre-tokenized word. A word
 * starts as its characters (a byte-level vocabulary's: GPT-2's character
 * of each byte), each its id, or its <0xNN> byte tokens (byte fallback), or
 * the unknown token (consecutive ones fused); then the lowest-ranked merge
 * of two neighbours is applied, leftmost first, until none applies, as
 * tokenizers' Word::merge_all does (a heap of candidate merges, stale ones
 * skipped). A GGUF's SentencePiece vocabulary merges by score instead, as
 * llama.cpp does: the neighbours whose concatenation is the normal piece
 * of highest score (SentencePiece merges into no control, byte or unused
 * piece), and characters left outside the vocabulary become bytes. */
#include <stdlib.h>
#include <string.h>

#include "tok.h"

uint16_t bytelevel_cp[256];
static int16_t byte_of[324];

void bytelevel_init(void)
{
    if (bytelevel_cp['!'])
        return;
    int k = 0;
    for (int b = 0; b < 256; b++) {
        int printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        bytelevel_cp[b] = (uint16_t)(printable ? b : 256 + k++);
    }
    for (int c = 0; c < 324; c++)
        byte_of[c] = -1;
    for (int b = 0; b < 256; b++)
        byte_of[bytelevel_cp[b]] = (int16_t)b;
}

int bytelevel_byte(uint32_t cp)
{
    return cp < 324 ? byte_of[cp] : -1;
}

/* ---- the merges' table ---- */

static uint64_t mix(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return k;
}

static Merge *merge_slot(const Model *m, uint64_t key)
{
    for (uint32_t i = (uint32_t)mix(key) & m->mmask;; i = (i + 1) & m->mmask)
        if (m->merge[i].rank < 0 || m->merge[i].key == key)
            return &m->merge[i];
}

static const Merge *merge_get(const Model *m, int l, int r)
{
    if (!m->merge)
        return NULL;
    const Merge *g = merge_slot(m, (uint64_t)(uint32_t)l << 32 | (uint32_t)r);
    return g->rank < 0 ? NULL : g;
}

int merge_add(Arena *a, Model *m, int l, int r, int id, int rank, int *cap)
{
    if (2 * (rank + 1) >= *cap) {   /* grow (ranks come in order 0, 1, ...) */
        Merge *old = m->merge;
        int ocap = *cap;
        *cap = *cap ? *cap * 2 : 1024;
        m->merge = arena_alloc(a, (size_t)*cap * sizeof *m->merge);
        m->mmask = (uint32_t)*cap - 1;
        for (int i = 0; i < *cap; i++)
            m->merge[i].rank = -1;
        for (int i = 0; i < ocap; i++)
            if (old[i].rank >= 0)
                *merge_slot(m, old[i].key) = old[i];
    }
    uint64_t key = (uint64_t)(uint32_t)l << 32 | (uint32_t)r;
    *merge_slot(m, key) = (Merge){key, rank, id};   /* a pair given twice keeps its last rank */
    return 0;
}

/* ---- scratch shared by the calls (the tools are single-threaded) ---- */

typedef struct BSym {
    int32_t id, prev, next;
    uint32_t at, n;        /* by_score: the symbol's bytes in the word */
} BSym;
typedef struct Cand {
    int32_t rank, pos, id;  /* by_score: rank is -score order, id the right symbol */
    float score;
    uint32_t size;
} Cand;
static BSym *sym;
static Cand *heap;
static int csym, cheap, nheap;

static void *grow(void *p, int *cap, int need, size_t elem)
{
    if (need <= *cap)
        return p;
    *cap = need * 2;
    p = realloc(p, (size_t)*cap * elem);
    if (!p) {
        diag("out of memory");
        exit(EXIT_SYSTEM);
    }
    return p;
}

/* BPE's order: lower rank first, then the leftmost. */
static int cand_less(const Cand *a, const Cand *b)
{
    return a->rank != b->rank ? a->rank < b->rank : a->pos < b->pos;
}

/* llama.cpp's order: higher score first, then the leftmost. */
static int score_less(const Cand *a, const Cand *b)
{
    return a->score != b->score ? a->score > b->score : a->pos < b->pos;
}

static void heap_push(Cand c, int (*less)(const Cand *, const Cand *))
{
    heap = grow(heap, &cheap, nheap + 1, sizeof *heap);
    int i = nheap++;
    while (i > 0 && less(&c, &heap[(i - 1) / 2])) {
        heap[i] = heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    heap[i] = c;
}

static Cand heap_pop(int (*less)(const Cand *, const Cand *))
{
    Cand top = heap[0], last = heap[--nheap];
    int i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= nheap)
            break;
        if (c + 1 < nheap && less(&heap[c + 1], &heap[c]))
            c++;
        if (!less(&heap[c], &last))
            break;
        heap[i] = heap[c];
        i = c;
    }
    if (nheap)
        heap[i] = last;
    return top;
}

/* ---- tokenizers' BPE ---- */

static int add_sym(int n, int32_t id)
{
    sym = grow(sym, &csym, n + 1, sizeof *sym);
    sym[n] = (BSym){.id = id, .prev = n - 1, .next = n + 1};
    return n + 1;
}

/* The initial symbols of a word: each character's id, or its byte tokens,
 * or the unknown token (pending, fused with the next unknown one when
 * fuse_unk, added when a known character or the end comes). */
static int initial(const Model *m, const Vocab *v, const char *s, size_t n)
{
    int ns = 0, unk = 0;
    char mapped[4];
    for (size_t i = 0; i < n;) {
        const char *c = s + i;
        size_t len;
        if (m->bytelevel) {
            unsigned char b = (unsigned char)s[i];
            i++;
            if (m->byte_sym[b] >= 0) {
                if (unk)
                    ns = add_sym(ns, m->unk);
                unk = 0;
                ns = add_sym(ns, m->byte_sym[b]);
                continue;
            }
            c = mapped;
            len = (size_t)utf8_put(mapped, bytelevel_cp[b]);
        } else {
            uint32_t cp;
            int k = utf8_len((const unsigned char *)c, n - i, &cp);
            len = k ? (size_t)k : 1;
            i += len;
            int id = vocab_find(v, c, len);
            if (id >= 0) {
                if (unk)
                    ns = add_sym(ns, m->unk);
                unk = 0;
                ns = add_sym(ns, id);
                continue;
            }
        }
        int all = m->byte_fallback;
        for (size_t k = 0; all && k < len; k++)
            all = m->byte_tok[(unsigned char)c[k]] >= 0;
        if (all) {
            for (size_t k = 0; k < len; k++)
                ns = add_sym(ns, m->byte_tok[(unsigned char)c[k]]);
            continue;
        }
        if (m->unk >= 0) {
            if (unk && !m->fuse_unk)
                ns = add_sym(ns, m->unk);
            unk = 1;
        }
    }
    if (unk)
        ns = add_sym(ns, m->unk);
    return ns;
}

static void push_pair(const Model *m, int pos)
{
    int nx = sym[pos].next;
    const Merge *g = merge_get(m, sym[pos].id, sym[nx].id);
    if (g)
        heap_push((Cand){.rank = g->rank, .pos = pos, .id = g->id}, cand_less);
}

static void merge_all(const Model *m, int ns)
{
    nheap = 0;
    for (int i = 0; i + 1 < ns; i++)
        push_pair(m, i);
    while (nheap) {
        Cand top = heap_pop(cand_less);
        BSym *s = &sym[top.pos];
        if (s->id < 0 || s->next >= ns)
            continue;
        const Merge *g = merge_get(m, s->id, sym[s->next].id);
        if (!g || g->id != top.id)
            continue;
        BSym *r = &sym[s->next];
        s->id = top.id;
        r->id = -1;
        s->next = r->next;
        if (r->next < ns)
            sym[r->next].prev = top.pos;
        if (s->prev >= 0)
            push_pair(m, s->prev);
        if (s->next < ns)
            push_pair(m, top.pos);
    }
}

/* ---- llama.cpp's SentencePiece merging by score ---- */

static void score_pair(const Model *m, const Vocab *v, const char *w, int l)
{
    if (l < 0 || sym[l].next < 0)
        return;
    const BSym *a = &sym[l], *b = &sym[a->next];
    int id = vocab_find(v, w + a->at, a->n + b->n);
    if (id >= 0 && m->mergeable[id])
        heap_push((Cand){.pos = l, .id = a->next, .score = m->score[id], .size = a->n + b->n}, score_less);
}

static void by_score(const Model *m, const Vocab *v, const char *s, size_t n, Ids *out)
{
    int ns = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        int k = utf8_len((const unsigned char *)s + i, n - i, &cp);
        sym = grow(sym, &csym, ns + 1, sizeof *sym);
        sym[ns] = (BSym){.prev = ns - 1, .next = i + (size_t)(k ? k : 1) < n ? ns + 1 : -1, .at = (uint32_t)i,
                        .n = (uint32_t)(k ? k : 1)};
        i += sym[ns++].n;
    }
    nheap = 0;
    for (int i = 0; i + 1 < ns; i++)
        score_pair(m, v, s, i);
    while (nheap) {
        Cand c = heap_pop(score_less);
        BSym *a = &sym[c.pos], *b = &sym[c.id];
        if (!a->n || !b->n || a->n + b->n != c.size || a->next != c.id)
            continue;
        a->n += b->n;
        b->n = 0;
        a->next = b->next;
        if (b->next >= 0)
            sym[b->next].prev = c.pos;
        score_pair(m, v, s, a->prev);
        score_pair(m, v, s, c.pos);
    }
    for (int i = 0; i >= 0 && ns; i = sym[i].next) {
        int id = vocab_find(v, s + sym[i].at, sym[i].n);
        if (id >= 0) {
            ids_push(out, id);
            continue;
        }
        for (uint32_t k = 0; k < sym[i].n; k++) {
            int b = m->byte_tok[(unsigned char)s[sym[i].at + k]];
            if (b >= 0 || m->unk >= 0)
                ids_push(out, b >= 0 ? b : m->unk);
        }
    }
}

void bpe_word(const Model *m, const Vocab *v, const char *s, size_t n, Ids *out)
{
    if (n == 0)
        return;
    if (m->by_score) {
        by_score(m, v, s, n, out);
        return;
    }
    if (m->ignore_merges) {
        int id = -1;
        if (!m->bytelevel) {
            id = vocab_find(v, s, n);
        } else {
            static Buf8 w;
            w.n = 0;
            for (size_t i = 0; i < n; i++) {
                char c[4];
                buf8_put(&w, c, (size_t)utf8_put(c, bytelevel_cp[(unsigned char)s[i]]));
            }
            id = vocab_find(v, w.p, w.n);
        }
        if (id >= 0) {
            ids_push(out, id);
            return;
        }
    }
    int ns = initial(m, v, s, n);
    merge_all(m, ns);
    for (int i = 0; i < ns; i++)
        if (sym[i].id >= 0)
            ids_push(out, sym[i].id);
}
