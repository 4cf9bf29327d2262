/* tok_json.c — a Hugging Face tokenizer.json (jansson) to a Tokenizer: the BPE
 * model (vocab, merges as "a b" strings or [a, b] pairs, unk_token,
 * byte_fallback, fuse_unk, ignore_merges), the added tokens, and the
 * normalizer, pre-tokenizer, post-processor and decoder each family uses
 * (singly or in a Sequence). Anything else is refused by name, with the
 * JSON path where it stands, rather than tokenized differently. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "tok.h"

enum { MAXVOCAB = 1 << 24 };

typedef struct J {
    Tokenizer *t;
    Arena *a;
} J;

static Str jstr(J *j, const json_t *v)
{
    size_t n = json_string_length(v);
    return (Str){arena_strndup(j->a, json_string_value(v), n), n};
}

static const char *type_of(const json_t *o)
{
    const char *s = json_string_value(json_object_get(o, "type"));
    return s ? s : "";
}

/* A boolean member: dflt when absent or null. */
static int jbool(const json_t *o, const char *key, int dflt)
{
    const json_t *v = json_object_get(o, key);
    return json_is_boolean(v) ? json_is_true(v) : dflt;
}

/* A member that must be a string: 0, or a message naming path.key. */
static int need_str(J *j, const json_t *o, const char *path, const char *key, Str *out)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_string(v))
        return tok_fail(j->t, "%s.%s is not a string", path, key);
    *out = jstr(j, v);
    return 0;
}

/* ---- the model ---- */

static int load_vocab(J *j, const json_t *voc)
{
    Tokenizer *t = j->t;
    if (!json_is_object(voc))
        return tok_fail(t, "model.vocab is not an object of pieces and ids");
    const char *key;
    json_t *v;
    int n = 0;
    json_object_foreach((json_t *)voc, key, v) {
        json_int_t id = json_integer_value(v);
        if (!json_is_integer(v) || id < 0 || id >= MAXVOCAB)
            return tok_fail(t, "model.vocab: the id of '%s' is not a whole number from 0 to %d", key, MAXVOCAB - 1);
        n = (int)id + 1 > n ? (int)id + 1 : n;
    }
    t->v.n = n;
    t->v.piece = arena_alloc(j->a, (size_t)(n ? n : 1) * sizeof *t->v.piece);
    json_object_foreach((json_t *)voc, key, v) {
        Str *p = &t->v.piece[json_integer_value(v)];
        if (p->p)
            return tok_fail(t, "model.vocab: id %lld is given to both '%s' and '%s'", (long long)json_integer_value(v),
                            p->p, key);
        size_t len = strlen(key);   /* jansson keys end at a NUL */
        *p = (Str){arena_strndup(j->a, key, len), len};
    }
    return vocab_index(j->a, &t->v, t->file);
}

/* One merge: "a b" or ["a", "b"]. */
static int merge_parts(J *j, const json_t *m, int i, Str *l, Str *r)
{
    if (json_is_string(m)) {
        const char *s = json_string_value(m), *sp = strchr(s, ' ');
        if (sp && !strchr(sp + 1, ' ')) {
            *l = (Str){s, (size_t)(sp - s)};
            *r = (Str){sp + 1, strlen(sp + 1)};
            return 0;
        }
    } else if (json_is_array(m) && json_array_size(m) == 2 && json_is_string(json_array_get(m, 0)) &&
               json_is_string(json_array_get(m, 1))) {
        const json_t *a = json_array_get(m, 0), *b = json_array_get(m, 1);
        *l = (Str){json_string_value(a), json_string_length(a)};
        *r = (Str){json_string_value(b), json_string_length(b)};
        return 0;
    }
    return tok_fail(j->t, "model.merges[%d]: not two pieces (\"a b\" or [\"a\", \"b\"])", i);
}

static int load_merges(J *j, const json_t *ms)
{
    Tokenizer *t = j->t;
    if (ms && !json_is_array(ms))
        return tok_fail(t, "model.merges is not an array");
    int cap = 0;
    static Buf8 both;
    for (size_t i = 0; i < json_array_size(ms); i++) {
        Str l = {"", 0}, r = {"", 0};
        if (merge_parts(j, json_array_get(ms, i), (int)i, &l, &r))
            return EXIT_INPUT;
        both.n = 0;
        buf8_put(&both, l.p, l.n);
        buf8_put(&both, r.p, r.n);
        int a = vocab_find(&t->v, l.p, l.n), b = vocab_find(&t->v, r.p, r.n);
        int ab = vocab_find(&t->v, both.p, both.n);
        if (a < 0 || b < 0)
            return tok_fail(t, "model.merges[%d]: '%.*s' is not in the vocabulary", (int)i, a < 0 ? (int)l.n : (int)r.n,
                            a < 0 ? l.p : r.p);
        if (ab < 0)
            return tok_fail(t, "model.merges[%d]: their piece '%.*s' is not in the vocabulary", (int)i, (int)both.n,
                            both.p);
        merge_add(j->a, &t->m, a, b, ab, (int)i, &cap);
    }
    return 0;
}

static int load_model(J *j, const json_t *m)
{
    Tokenizer *t = j->t;
    if (!json_is_object(m))
        return tok_fail(t, "no \"model\" object");
    const char *type = type_of(m);
    if (*type && strcmp(type, "BPE"))
        return tok_fail(t, "model type '%s' is not read (logos-tok reads BPE)", type);
    if (!*type && !json_object_get(m, "merges"))
        return tok_fail(t, "model: no \"type\" and no \"merges\": not a BPE model");
    static const char *unsupported[] = {"continuing_subword_prefix", "end_of_word_suffix"};
    for (int i = 0; i < 2; i++)
        if (json_is_string(json_object_get(m, unsupported[i])) && json_string_length(json_object_get(m, unsupported[i])))
            return tok_fail(t, "model.%s is not supported", unsupported[i]);
    const json_t *drop = json_object_get(m, "dropout");
    if (json_is_number(drop) && json_number_value(drop) != 0)
        return tok_fail(t, "model.dropout is %g: logos-tok encodes without dropout", json_number_value(drop));
    t->m.byte_fallback = jbool(m, "byte_fallback", 0);
    t->m.fuse_unk = jbool(m, "fuse_unk", 0);
    t->m.ignore_merges = jbool(m, "ignore_merges", 0);
    if (load_vocab(j, json_object_get(m, "vocab")) || load_merges(j, json_object_get(m, "merges")))
        return EXIT_INPUT;
    const json_t *unk = json_object_get(m, "unk_token");
    if (json_is_string(unk)) {
        t->m.unk = vocab_find(&t->v, json_string_value(unk), json_string_length(unk));
        if (t->m.unk < 0)
            return tok_fail(t, "model.unk_token '%s' is not in the vocabulary", json_string_value(unk));
    }
    return 0;
}

/* ---- added tokens ---- */

static int load_added(J *j, const json_t *arr)
{
    Tokenizer *t = j->t;
    if (arr && !json_is_array(arr))
        return tok_fail(t, "added_tokens is not an array");
    int cap = 0;
    for (size_t i = 0; i < json_array_size(arr); i++) {
        const json_t *o = json_array_get(arr, i), *id = json_object_get(o, "id");
        const char *path = arena_printf(j->a, "added_tokens[%d]", (int)i);
        Added ad = {0};
        if (!json_is_integer(id) || json_integer_value(id) < 0 || json_integer_value(id) >= MAXVOCAB)
            return tok_fail(t, "%s.id is not a whole number from 0 to %d", path, MAXVOCAB - 1);
        if (need_str(j, o, path, "content", &ad.text))
            return EXIT_INPUT;
        ad.id = (int)json_integer_value(id);
        ad.special = jbool(o, "special", 0);
        ad.lstrip = jbool(o, "lstrip", 0);
        ad.rstrip = jbool(o, "rstrip", 0);
        ad.single_word = jbool(o, "single_word", 0);
        ad.normalized = jbool(o, "normalized", !ad.special);
        *VEC_PUSH(j->a, t->added, t->nadded, cap) = ad;
    }
    return 0;
}

/* Normalized added tokens are matched in normalized text: their content
 * is normalized too. */
static int normalize_added(Tokenizer *t)
{
    Buf8 b = {0};
    for (int i = 0; i < t->nadded; i++) {
        Added *ad = &t->added[i];
        if (!ad->normalized || !t->nnorm)
            continue;
        if (norm_apply(t->norm, t->nnorm, ad->text.p, ad->text.n, &b))
            return EXIT_SYSTEM;
        ad->text = (Str){arena_strndup(t->a, b.p, b.n), b.n};
    }
    buf8_free(&b);
    return 0;
}

/* ---- normalizers ---- */

static int pattern(J *j, const json_t *o, const char *path, Str *lit, pcre2_code **re)
{
    const json_t *p = json_object_get(o, "pattern");
    const json_t *s = json_object_get(p, "String"), *r = json_object_get(p, "Regex");
    if (json_is_string(s)) {
        *lit = jstr(j, s);
        return 0;
    }
    if (!json_is_string(r) || !re)
        return tok_fail(j->t, "%s.pattern is not {\"String\": ...}%s", path, re ? " or {\"Regex\": ...}" : "");
    const char *why;
    *re = split_compile(json_string_value(r), json_string_length(r), 0, &why);
    if (!*re)
        return tok_fail(j->t, "%s.pattern: the regex does not compile: %s", path, why);
    return 0;
}

static int load_norm(J *j, const json_t *o, const char *path, int *cap)
{
    Tokenizer *t = j->t;
    static const struct { const char *name; int kind; } forms[] = {
        {"NFC", NORM_NFC}, {"NFD", NORM_NFD}, {"NFKC", NORM_NFKC}, {"NFKD", NORM_NFKD}};
    const char *type = type_of(o);
    if (!strcmp(type, "Sequence")) {
        const json_t *arr = json_object_get(o, "normalizers");
        for (size_t i = 0; i < json_array_size(arr); i++)
            if (load_norm(j, json_array_get(arr, i), arena_printf(j->a, "%s.normalizers[%d]", path, (int)i), cap))
                return EXIT_INPUT;
        return 0;
    }
    Norm nm = {0};
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++)
        if (!strcmp(type, forms[i].name)) {
            nm.kind = forms[i].kind;
            *VEC_PUSH(j->a, t->norm, t->nnorm, *cap) = nm;
            return 0;
        }
    if (!strcmp(type, "Replace")) {
        nm.kind = NORM_REPLACE;
        if (need_str(j, o, path, "content", &nm.rep) || pattern(j, o, path, &nm.pat, &nm.re))
            return EXIT_INPUT;
    } else if (!strcmp(type, "Prepend")) {
        nm.kind = NORM_PREPEND;
        if (need_str(j, o, path, "prepend", &nm.rep))
            return EXIT_INPUT;
    } else {
        return tok_fail(t, "%s: type '%s' is not supported (known: NFC NFD NFKC NFKD Replace Prepend "
                        "Sequence)", path, type);
    }
    *VEC_PUSH(j->a, t->norm, t->nnorm, *cap) = nm;
    return 0;
}

/* ---- pre-tokenizers ---- */

static int prepend_scheme(J *j, const json_t *o, const char *path, int *out)
{
    const char *s = json_string_value(json_object_get(o, "prepend_scheme"));
    if (!s) {   /* the older spelling */
        *out = jbool(o, "add_prefix_space", 1) ? PREP_ALWAYS : PREP_NEVER;
        return 0;
    }
    *out = !strcmp(s, "always") ? PREP_ALWAYS : !strcmp(s, "first") ? PREP_FIRST : !strcmp(s, "never") ? PREP_NEVER : -1;
    if (*out < 0)
        return tok_fail(j->t, "%s.prepend_scheme is '%s' (known: always first never)", path, s);
    return 0;
}

static int split_behavior(J *j, const json_t *o, const char *path, int *out)
{
    static const char *names[] = {"Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"};
    const char *s = json_string_value(json_object_get(o, "behavior"));
    for (int i = 0; s && i < 5; i++)
        if (!strcmp(s, names[i])) {
            *out = i;
            return 0;
        }
    return tok_fail(j->t, "%s.behavior is '%s' (known: Removed Isolated MergedWithPrevious MergedWithNext "
                    "Contiguous)", path, s ? s : "");
}

static int load_pre(J *j, const json_t *o, const char *path, int *cap)
{
    Tokenizer *t = j->t;
    const char *type = type_of(o);
    if (!strcmp(type, "Sequence")) {
        const json_t *arr = json_object_get(o, "pretokenizers");
        for (size_t i = 0; i < json_array_size(arr); i++)
            if (load_pre(j, json_array_get(arr, i), arena_printf(j->a, "%s.pretokenizers[%d]", path, (int)i), cap))
                return EXIT_INPUT;
        return 0;
    }
    if (t->m.bytelevel)
        return tok_fail(t, "%s: a pre-tokenizer after ByteLevel is not supported", path);
    Pre p = {0};
    const char *why;
    if (!strcmp(type, "Split")) {
        Str lit = {0};
        p.kind = PRE_SPLIT;
        p.invert = jbool(o, "invert", 0);
        if (split_behavior(j, o, path, &p.behavior) || pattern(j, o, path, &lit, &p.re))
            return EXIT_INPUT;
        if (!p.re && !(p.re = split_compile(lit.p, lit.n, 1, &why)))
            return tok_fail(t, "%s.pattern: %s", path, why);
    } else if (!strcmp(type, "ByteLevel")) {
        p.kind = PRE_BYTELEVEL;
        p.prefix_space = jbool(o, "add_prefix_space", 1);
        if (jbool(o, "use_regex", 1) && !(p.re = split_compile(split_gpt2, strlen(split_gpt2), 0, &why)))
            BUG("GPT-2's pattern does not compile");
        t->m.bytelevel = 1;
    } else if (!strcmp(type, "Metaspace")) {
        p.kind = PRE_METASPACE;
        p.split = jbool(o, "split", 1);
        if (need_str(j, o, path, "replacement", &p.repl) || prepend_scheme(j, o, path, &p.prepend))
            return EXIT_INPUT;
    } else {
        return tok_fail(t, "%s: type '%s' is not supported (known: Split ByteLevel Metaspace Sequence)",
                        path, type);
    }
    *VEC_PUSH(j->a, t->pre, t->npre, *cap) = p;
    return 0;
}

/* ---- the post-processor's template ---- */

static int template_ids(J *j, const json_t *o, const char *path, const json_t *item, int after)
{
    Tokenizer *t = j->t;
    const json_t *sp = json_object_get(item, "SpecialToken");
    const char *name = json_string_value(json_object_get(sp, "id"));
    const json_t *ids = json_object_get(json_object_get(json_object_get(o, "special_tokens"), name ? name : ""), "ids");
    if (!name || !json_is_array(ids))
        return tok_fail(t, "%s.single: the special token '%s' has no ids in special_tokens", path, name ? name : "");
    for (size_t i = 0; i < json_array_size(ids); i++) {
        int32_t **v = after ? &t->tail : &t->head;
        int *n = after ? &t->ntail : &t->nhead;
        json_int_t id = json_integer_value(json_array_get(ids, i));
        if (id < 0 || id >= MAXVOCAB)
            return tok_fail(t, "%s.special_tokens: '%s' has a bad id", path, name);
        int cap = *n ? *n : 0;
        *v = vec_grow(j->a, *v, &cap, sizeof **v);
        (*v)[(*n)++] = (int32_t)id;
    }
    return 0;
}

static int load_post(J *j, const json_t *o, const char *path)
{
    const char *type = type_of(o);
    if (!strcmp(type, "Sequence")) {
        const json_t *arr = json_object_get(o, "processors");
        for (size_t i = 0; i < json_array_size(arr); i++)
            if (load_post(j, json_array_get(arr, i), arena_printf(j->a, "%s.processors[%d]", path, (int)i)))
                return EXIT_INPUT;
        return 0;
    }
    if (!strcmp(type, "ByteLevel"))
        return 0;   /* it only trims offsets */
    if (strcmp(type, "TemplateProcessing"))
        return tok_fail(j->t, "%s: type '%s' is not supported (known: TemplateProcessing ByteLevel "
                        "Sequence)", path, type);
    const json_t *single = json_object_get(o, "single");
    int after = 0;
    for (size_t i = 0; i < json_array_size(single); i++) {
        const json_t *item = json_array_get(single, i);
        if (json_object_get(item, "Sequence"))
            after = 1;
        else if (template_ids(j, o, path, item, after))
            return EXIT_INPUT;
    }
    return 0;
}

/* ---- decoders ---- */

static int load_dec(J *j, const json_t *o, const char *path, int *cap)
{
    Tokenizer *t = j->t;
    const char *type = type_of(o);
    if (!strcmp(type, "Sequence")) {
        const json_t *arr = json_object_get(o, "decoders");
        for (size_t i = 0; i < json_array_size(arr); i++)
            if (load_dec(j, json_array_get(arr, i), arena_printf(j->a, "%s.decoders[%d]", path, (int)i), cap))
                return EXIT_INPUT;
        return 0;
    }
    Dec d = {0};
    if (!strcmp(type, "ByteLevel")) {
        d.kind = DEC_BYTELEVEL;
    } else if (!strcmp(type, "Replace")) {
        d.kind = DEC_REPLACE;
        if (pattern(j, o, path, &d.pat, NULL) || need_str(j, o, path, "content", &d.rep))
            return EXIT_INPUT;
    } else if (!strcmp(type, "ByteFallback") || !strcmp(type, "Fuse")) {
        d.kind = type[0] == 'B' ? DEC_BYTEFALLBACK : DEC_FUSE;
    } else if (!strcmp(type, "Strip")) {
        d.kind = DEC_STRIP;
        d.start = (int)json_integer_value(json_object_get(o, "start"));
        if (need_str(j, o, path, "content", &d.content))
            return EXIT_INPUT;
        if (json_integer_value(json_object_get(o, "stop")) != 0)
            return tok_fail(t, "%s: Strip with stop %lld is not supported (only leading characters)", path,
                            (long long)json_integer_value(json_object_get(o, "stop")));
    } else if (!strcmp(type, "Metaspace")) {
        d.kind = DEC_METASPACE;
        if (prepend_scheme(j, o, path, &d.prepend))
            return EXIT_INPUT;
    } else {
        return tok_fail(t, "%s: type '%s' is not supported (known: ByteLevel Replace ByteFallback Fuse Strip "
                        "Metaspace Sequence)", path, type);
    }
    if ((d.kind == DEC_BYTELEVEL && t->ndec) || (t->ndec && t->dec[0].kind == DEC_BYTELEVEL))
        return tok_fail(t, "%s: ByteLevel with other decoders is not supported", path);
    *VEC_PUSH(j->a, t->dec, t->ndec, *cap) = d;
    return 0;
}

/* ---- the file ---- */

static int load_stages(J *j, const json_t *root)
{
    int cn = 0, cp = 0, cd = 0;
    const json_t *n = json_object_get(root, "normalizer"), *p = json_object_get(root, "pre_tokenizer");
    const json_t *post = json_object_get(root, "post_processor"), *d = json_object_get(root, "decoder");
    if (json_is_object(n) && load_norm(j, n, "normalizer", &cn))
        return EXIT_INPUT;
    if (json_is_object(p) && load_pre(j, p, "pre_tokenizer", &cp))
        return EXIT_INPUT;
    if (json_is_object(post) && load_post(j, post, "post_processor"))
        return EXIT_INPUT;
    if (json_is_object(d) && load_dec(j, d, "decoder", &cd))
        return EXIT_INPUT;
    if (j->t->ndec > 16)
        return tok_fail(j->t, "decoder: more than 16 decoders");
    return 0;
}

int tok_from_json(Tokenizer *t, const char *path)
{
    json_error_t err;
    json_t *root = json_load_file(path, JSON_ALLOW_NUL, &err);
    if (!root) {
        if (err.line < 0)
            return tok_fail(t, "%s", err.text);
        diag_file(arena_printf(t->a, "%s:%d:%d", path, err.line, err.column), "not JSON: %s", err.text);
        return EXIT_INPUT;
    }
    J j = {t, t->a};
    int st = json_is_object(root) ? 0 : tok_fail(t, "not a tokenizer: the JSON is not an object");
    if (!st)
        st = load_stages(&j, root);
    if (!st)
        st = load_model(&j, json_object_get(root, "model"));
    if (!st)
        st = load_added(&j, json_object_get(root, "added_tokens"));
    if (!st)
        st = normalize_added(t);
    json_decref(root);
    t->kind = t->m.bytelevel ? "byte-level BPE" : t->m.byte_fallback ? "SentencePiece-style BPE" : "BPE";
    return st;
}
