/* spec_yaml.c — reads a ModelSpec's YAML with libyaml's event API into a
 * small tree of scalars, sequences and mappings, refusing aliases, anchors,
 * tags and nesting deeper than MAX_DEPTH; every rejection is one located
 * message. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "spec.h"

/* Report one located message; returns -1 for the caller to pass up. */
int spec_fail(P *p, const Node *at, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    diag_at(p->src, at ? at->line : 1, at ? at->col : 1, "%s", msg);
    return -1;
}

/* A value as a message shows it: a scalar quoted (cut at SHOW_MAX), or its kind. */
const char *spec_show(P *p, const Node *v)
{
    if (v->kind == N_MAP)
        return "a mapping";
    if (v->kind == N_SEQ)
        return "a sequence";
    if (v->len > SHOW_MAX)
        return arena_printf(p->a, "'%.*s...'", SHOW_MAX, v->s);
    return arena_printf(p->a, "'%s'", v->s);
}

static Node *node_new(P *p, int kind, yaml_mark_t m)
{
    Node *n = arena_alloc(p->a, sizeof *n);
    n->kind = kind;
    n->line = (int)m.line + 1;
    n->col = (int)m.column + 1;
    return n;
}

typedef struct Reader {
    Node *stack[MAX_DEPTH];
    int depth, docs;
    Node *root;
} Reader;

static int reject_decorations(P *p, const Node *at, const yaml_char_t *anchor,
                              const yaml_char_t *tag)
{
    if (anchor)
        return spec_fail(p, at, "anchors are not supported");
    if (tag)
        return spec_fail(p, at, "tags are not supported");
    return 0;
}

/* Hang n on the open collection, or make it the root. */
static void attach(P *p, Reader *r, Node *n)
{
    if (r->depth == 0) {
        r->root = n;
        return;
    }
    Node *up = r->stack[r->depth - 1];
    *VEC_PUSH(p->a, up->kids, up->n, up->cap) = n;
}

static int on_scalar(P *p, Reader *r, yaml_event_t *ev)
{
    Node *n = node_new(p, N_SCALAR, ev->start_mark);
    if (reject_decorations(p, n, ev->data.scalar.anchor, ev->data.scalar.tag))
        return -1;
    n->len = ev->data.scalar.length;
    n->s = arena_strndup(p->a, (const char *)ev->data.scalar.value, n->len);
    n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    attach(p, r, n);
    return 0;
}

static int on_open(P *p, Reader *r, yaml_event_t *ev, int kind)
{
    Node *n = node_new(p, kind, ev->start_mark);
    int bad = kind == N_MAP
        ? reject_decorations(p, n, ev->data.mapping_start.anchor, ev->data.mapping_start.tag)
        : reject_decorations(p, n, ev->data.sequence_start.anchor, ev->data.sequence_start.tag);
    if (bad)
        return -1;
    if (r->depth == MAX_DEPTH)
        return spec_fail(p, n, "nesting deeper than %d levels", MAX_DEPTH);
    attach(p, r, n);
    r->stack[r->depth++] = n;
    return 0;
}

static int on_event(P *p, Reader *r, yaml_event_t *ev)
{
    switch (ev->type) {
    case YAML_DOCUMENT_START_EVENT:
        if (++r->docs > 1)
            return spec_fail(p, node_new(p, N_SCALAR, ev->start_mark),
                        "a spec is one YAML document; a second one starts here");
        return 0;
    case YAML_ALIAS_EVENT:
        return spec_fail(p, node_new(p, N_SCALAR, ev->start_mark), "aliases are not supported");
    case YAML_SCALAR_EVENT:
        return on_scalar(p, r, ev);
    case YAML_SEQUENCE_START_EVENT:
        return on_open(p, r, ev, N_SEQ);
    case YAML_MAPPING_START_EVENT:
        return on_open(p, r, ev, N_MAP);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        r->depth--;
        return 0;
    default:
        return 0;
    }
}

/* libyaml's own complaint, at its mark (a reader error gives a byte offset). */
static void yaml_problem(P *p, const yaml_parser_t *y)
{
    Node at = {.line = (int)y->problem_mark.line + 1, .col = (int)y->problem_mark.column + 1};
    if (y->error == YAML_READER_ERROR) {
        at.line = at.col = 1;
        for (size_t i = 0; i < y->problem_offset && i < p->src->len; i++) {
            at.col++;
            if (p->src->text[i] == '\n')
                at.line++, at.col = 1;
        }
    }
    const char *problem = y->problem ? y->problem : "malformed YAML";
    if (y->context)
        spec_fail(p, &at, "%s %s", problem, y->context);
    else
        spec_fail(p, &at, "%s", problem);
}

Node *spec_read_yaml(P *p)
{
    yaml_parser_t y;
    yaml_event_t ev;
    Reader r = {0};
    int bad = 0, done = 0;
    if (!yaml_parser_initialize(&y)) {
        diag("out of memory");
        exit(EXIT_SYSTEM);
    }
    yaml_parser_set_input_string(&y, (const unsigned char *)p->src->text, p->src->len);
    while (!bad && !done) {
        if (!yaml_parser_parse(&y, &ev)) {
            yaml_problem(p, &y);
            bad = 1;
            break;
        }
        bad = on_event(p, &r, &ev) != 0;
        done = ev.type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&y);
    if (bad)
        return NULL;
    if (!r.root) {
        spec_fail(p, NULL, "the spec is empty");
        return NULL;
    }
    return r.root;
}
