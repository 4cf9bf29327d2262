/* spec.h — what the ModelSpec's files share: the YAML tree spec_yaml.c
 * reads (no aliases, anchors or tags; bounded depth) and the located
 * rejection every check reports through. */
#ifndef SPEC_H
#define SPEC_H

#include "logos.h"

enum { MAX_DEPTH = 32, SHOW_MAX = 40 };

enum { N_SCALAR, N_SEQ, N_MAP };
typedef struct Node {
    int kind, line, col;
    const char *s;           /* a scalar's text */
    size_t len;
    int plain;               /* an unquoted scalar */
    struct Node **kids;      /* a sequence's items; a mapping's keys and values, paired */
    int n, cap;
} Node;

typedef struct P {
    Arena *a;
    const Src *src;
    Spec *s;
    const Node *dim;         /* the top-level dim's value, where width errors point */
} P;

/* Report one located message at a node; returns -1 for the caller to pass up. */
int spec_fail(P *p, const Node *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A scalar's text for a message, cut to SHOW_MAX characters. */
const char *spec_show(P *p, const Node *v);
/* Reads the spec's YAML into a tree; NULL after a located message. */
Node *spec_read_yaml(P *p);

#endif
