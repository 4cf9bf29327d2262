/* logos.h — liblogos's one internal header: a section per file of lib/,
 * listing what that file exports. Tools in cmd/ include this alone. */
#ifndef LOGOS_H
#define LOGOS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define LOGOS_LANG 1        /* the language version a program's header names */
#define LOGOS_VERSION "0.1.0"   /* the tools' version (--version) */
#define LOGOS_MAXRANK 5

/* Exit statuses shared by every tool. */
enum { EXIT_OK = 0, EXIT_INPUT = 1, EXIT_USAGE = 2, EXIT_SYSTEM = 3 };

/* ---- arena.c: an arena per document, freed whole ---------------------- */
typedef struct Arena Arena;
Arena *arena_new(void);
void arena_free(Arena *a);
void *arena_alloc(Arena *a, size_t n);            /* zeroed, 16-aligned */
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_strdup(Arena *a, const char *s);
char *arena_printf(Arena *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A map from strings to non-negative ints in an arena (keys are kept, not
 * copied): -1 from strmap_get when absent. */
typedef struct StrMap StrMap;
StrMap *strmap_new(Arena *a);
int strmap_get(const StrMap *m, const char *key);
void strmap_put(StrMap *m, const char *key, int val);
/* qsort's comparison of two ints, ascending. */
int int_cmp(const void *a, const void *b);
/* A growable array in an arena: vec_push(arena, &ptr, &len, &cap, size). */
void *vec_grow(Arena *a, void *ptr, int *cap, size_t elem);
#define VEC_PUSH(ar, p, n, cap) \
    (((n) >= (cap) ? (void)((p) = vec_grow((ar), (p), &(cap), sizeof *(p))) : (void)0), \
     &(p)[(n)++])

/* ---- diag.c: diagnostics and the two error tiers ---------------------- */
typedef struct Src {
    const char *name;   /* file name as the user gave it ("-" reads as <stdin>) */
    const char *text;   /* whole text, NUL-terminated */
    size_t len;
} Src;
extern const char *diag_tool;   /* "logos-check", set by main */
extern int diag_errors;         /* input errors reported so far */
extern int diag_progress;       /* progress lines on stderr for long work (main sets it; -q does not) */
double mono_s(void);            /* seconds on the monotonic clock: for progress lines and timings */
/* tool: file:line:col: message, then the source line and a caret. */
void diag_at(const Src *s, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* tool: file: message (no location). */
void diag_file(const char *file, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* tool: message */
void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A broken invariant: print file:line and abort. */
_Noreturn void bug_at(const char *file, int line, const char *msg);
#define BUG(msg) bug_at(__FILE__, __LINE__, (msg))
#define ASSERT(c) ((c) ? (void)0 : bug_at(__FILE__, __LINE__, "assertion failed: " #c))
/* A whole number from lo to hi in s: 0, or -1 without a message. */
int parse_long(const char *s, long lo, long hi, long *out);
/* The same for an option's value: on failure `FLAG takes a whole number from
 * LO to HI, not 'V'` and EXIT_USAGE. */
int arg_long(const char *flag, const char *v, long lo, long hi, long *out);
/* Flushes stdout: status unchanged, or EXIT_SYSTEM after a message; a
 * status that is EXIT_SYSTEM already was reported and is returned as is. */
int stdout_done(int status);
/* Read a whole file (or stdin for "-") into the arena; NULL and a message on
 * failure. Stops at the first NUL byte (binary input, /dev/zero) with a
 * located message, and past LOGOS_MAXINPUT bytes. */
#define LOGOS_MAXINPUT (256L << 20)
Src *src_read(Arena *a, const char *path);
/* f read whole (malloc'd, NUL-terminated, *len bytes), refused after its
 * message (named name) at a NUL byte (unless nuls), past LOGOS_MAXINPUT
 * bytes or on a read error: NULL. src_read's reader. */
char *input_all(FILE *f, const char *name, int nuls, size_t *len);
/* Line and column (from 1, in bytes) of byte offset off of t. */
void text_locate(const char *t, size_t off, int *line, int *col);
/* "name:line:col: a NUL byte: this is not a text file", every tool's. */
void diag_nul(const char *name, int line, int col);
Src *src_from_string(Arena *a, const char *name, const char *text);

/* ---- out.c: output files written whole or not at all ------------------- */
typedef struct OutFile {
    const char *path;   /* NULL: the default stream */
    char *dest;         /* the file the temporary replaces: path or its link's target */
    char *tmp;          /* the temporary beside dest; NULL: written in place */
    FILE *f;            /* where to write */
    int own;            /* f was opened here */
} OutFile;
/* Opens path's temporary, or path itself when it is not a regular file (a
 * device, a FIFO), or takes dflt when path is NULL; 0 or EXIT_SYSTEM. A
 * symbolic link is written through, its target replaced. */
int outfile_open(OutFile *o, const char *path, FILE *dflt);
/* A temporary being written (the pointer kept until tmp_drop): removed if
 * SIGINT, SIGTERM, SIGHUP or SIGPIPE ends the process first. */
void tmp_keep(const char *path);
void tmp_drop(const char *path);
/* Do the two paths name one regular file (the same name, file, or place once
 * links and folders are resolved)? Devices and FIFOs never count. */
int outfile_same(const char *a, const char *b);
/* With status 0 renames the temporary into place, else removes it; returns
 * the status, EXIT_SYSTEM when the file could not be completed. */
int outfile_close(OutFile *o, int status);
/* Writes text to path whole (stdout when path is NULL). */
int outfile_whole(const char *path, const char *text, size_t len);
/* A stream into memory (*text, *len: free *text after closing it) for a
 * tool's output written whole later; NULL after a message without memory. */
FILE *mem_stream(char **text, size_t *len);

/* ---- opt.c: the command line, one parser for every tool ----------------- */
/* A tool's options are a table of rows ending with a row of zeros; a row says
 * where its value goes in the tool's options struct (at: offsetof), so an
 * option is added by adding a row. A row with neither name is an operand's
 * line in the help. The parser takes GNU order (options and operands mixed),
 * `--name=value`, `--name value`, `-nVALUE`, `-n VALUE`, bundled flags (-qv)
 * and `--` (the rest are operands); `-` and a negative number are operands.
 * -h/--help prints the usage on stdout; --version prints the tool, its
 * version and the language version LOGOS_LANG. */
enum OptKind {
    OPT_FLAG,   /* no value: the int field becomes lo (1 when lo is 0) */
    OPT_STR,    /* const char *: the value (the last one given) */
    OPT_LONG,   /* long: a whole number from lo to hi, `FLAG takes WHAT from LO to HI, not 'V'` */
    OPT_NUM,    /* double: a number from lo to hi */
    OPT_WORD,   /* int: the index of the value among the words of what ("f32 q8") */
    OPT_CALL,   /* fn(the field, flag, value): 0 or an exit status after a message */
};
typedef struct Opt {
    char s;              /* the short name ('o'), or 0 */
    const char *l;       /* the long name without its dashes ("batch"), or NULL */
    int kind;            /* enum OptKind */
    size_t at;           /* offsetof the field in the tool's options */
    const char *arg;     /* the value's name in the help ("FILE"); NULL for a flag */
    const char *help;    /* the help's text for it (lines apart by \n); NULL: not shown */
    double lo, hi;       /* OPT_LONG, OPT_NUM: the range; OPT_FLAG: the value set */
    const char *what;    /* OPT_LONG, OPT_NUM: what the value is ("a number of chips");
                            OPT_WORD: the words, space-separated */
    int (*fn)(void *field, const char *flag, const char *value);   /* OPT_CALL */
} Opt;
typedef struct Cli {
    const char *usage;   /* "usage: ..." lines, before the rows' help */
    const Opt *opts;
} Cli;
enum { OPT_DONE = -1 };  /* -h or --version answered: exit 0 */
/* Parses argv into opts; the operands, in order, are left in argv[1] to
 * argv[*nargs]. Returns 0, OPT_DONE, or EXIT_USAGE after one line (an unknown
 * option: `unknown option '-x' (try --help)`) or the message of a value. */
int opt_parse(const Cli *c, void *opts, int argc, char **argv, int *nargs);
/* The usage, the rows' help, -h and --version. */
void opt_usage(const Cli *c, FILE *f);

/* ---- the op table (ops.h) -------------------------------------------- */
enum OpKind { K_ELEM, K_REDUCE, K_PRODUCT, K_STATE, K_VIEW, K_ATTN, K_COLL, K_SUGAR };
enum OpFuse { F_NONE, F_EPI, F_PROD };
enum {
#define X(id, name, amin, amax, kind, fuse, attrs, roles, shape) OP_##id,
#include "ops.h"
#undef X
    OP_COUNT,
    E_NAME = OP_COUNT,  /* a reference to a declared or assigned name */
    E_NUM,              /* a number literal: an f32 scalar */
};
typedef struct OpInfo {
    const char *name;
    int amin, amax, kind, fuse;
    const char *attrs;
    const char *roles;
} OpInfo;
extern const OpInfo op_info[OP_COUNT];
int op_lookup(const char *name);   /* a callable op's index, or -1 */
int op_callable(int op);           /* written as a call, name(args, attrs) */
/* Operand i's role letter (ops.h): 'v' value, 'w' weight, 'r' rows taken
 * from it, 's' a state updated in place. */
int op_role(int op, int i);
int op_state(int op);              /* the operand of role 's', or -1 */

/* ---- types ----------------------------------------------------------- */
enum Base { T_NONE, T_F32, T_I32, T_Q8, T_F16 };   /* f16: a state's storage (its values read as f32) */
typedef struct Dim {
    long n;    /* the size, or its bound when sym != 0 */
    int sym;   /* 0: constant; >0: a size or dynamic row count (Prog.syms, 1-based) */
} Dim;
typedef struct Type {
    int base, rank;
    Dim d[LOGOS_MAXRANK];
    int ragged;   /* rows 1..pos[t] for each stacked row t (from X[..vector]) */
    Dim along;    /* a ragged view's stacked rows: its position vector's length */
} Type;
/* A size at a plan's row bound: a constant as it is, a dynamic row count at
 * the lesser of its own bound (the rows of a state it views: Vc0[..pos])
 * and rows. */
static inline long dim_bound(const Dim *d, long rows)
{
    return !d->sym ? d->n : d->n > 0 && d->n < rows ? d->n : rows;
}
const char *base_name(int base);

/* ---- the program (parse.c builds it, print.c prints it) --------------- */
typedef struct Attr {
    const char *name;
    const char *text;   /* the value's spelling */
    double num;         /* its value when it is a number */
    int isnum, line, col;
} Attr;

typedef struct Expr {
    int op;               /* OP_* or E_NAME or E_NUM */
    int line, col;
    const char *name;     /* E_NAME's name, E_NUM's spelling, a call's name */
    double num;
    int nargs, nattrs;
    struct Expr **args;
    Attr *attrs;
    int rank;             /* OP_RESHAPE: the view's shape */
    const char *dims[LOGOS_MAXRANK];   /* spelled dims (numbers or size names) */
    int depth;            /* levels of the tree below and including it */
    Type ty;              /* filled by check.c */
    int decl, def;        /* E_NAME, filled by check.c: its declaration and the
                           * statement that assigns it (-1 when none) */
} Expr;

enum DeclKind { D_SIZE, D_IN, D_WEIGHT, D_STATE, D_OUT };
enum SplitAxis { SPLIT_NONE, SPLIT_ROWS, SPLIT_COLS };   /* a weight's placement axis */
enum { LOGOS_MAXCHIPS = 1024 };
typedef struct Decl {
    int kind, line, col;
    const char *name;
    int base, rank;
    const char *dims[LOGOS_MAXRANK];
    int unpair_hd, unpair_rot, unpair_at;   /* rows bound through the rope pairing permutation */
    int split, parts;            /* placement (logos-placement(5)): SPLIT_ROWS or SPLIT_COLS of a
                                  * whole of `parts` parts along that axis; 0: whole on each chip */
    char **pre; int npre;        /* full-line comments before it */
    const char *trail;           /* a comment after it on its line */
    Type ty;                     /* filled by check.c: the checked type */
    long count;                  /* filled by check.c: values (sizes at their bounds), 0 when symbolic */
} Decl;

enum StmtKind { S_ASSIGN, S_WRITE };
typedef struct Stmt {
    int kind, line, col;
    const char *name;
    Expr *index;      /* S_WRITE: the row or rows written (positions) */
    Expr *value;
    char **pre; int npre;
    const char *trail;
    int decl;         /* filled by check.c: the state written, or the output
                       * assigned (-1: a local) */
} Stmt;

typedef struct Sym {
    const char *name;
    long bound;       /* upper bound of a dynamic row count, or -1 */
} Sym;

typedef struct Prog {
    const Src *src;
    int line;                /* the header's line */
    int version, layer;      /* layer: the cut form's layer, or -1 */
    const char *form, *model;
    char **pre; int npre;    /* comments before the header */
    const char *trail;
    int chips, chips_line;   /* a split program's `chips N` line; 0: none (one chip) */
    char **chips_pre; int nchips_pre;
    const char *chips_trail;
    Decl *decls; int ndecls, cdecls;
    Stmt *stmts; int nstmts, cstmts;
    char **endpre; int nendpre;
    const char *endtrail;
    char **post; int npost;  /* comments after the stream's last end */
    Sym *syms; int nsyms, csyms;   /* filled by check.c */
    StrMap *names;                 /* filled by check.c: each name's declaration,
                                    * or -2 - the statement assigning a local */
} Prog;

/* ---- ops.c: a call's attributes ------------------------------------- */
const Attr *attr_get(const Expr *e, const char *name);               /* NULL when absent */
double attr_num(const Expr *e, const char *name, double dflt);
const char *attr_word(const Expr *e, const char *name, const char *dflt);

/* ---- lex.c: tokens of a program -------------------------------------- */
enum Tok {
    TK_EOF, TK_NL, TK_IDENT, TK_NUM, TK_COMMENT,
    TK_EQ, TK_COLON, TK_COMMA, TK_LP, TK_RP, TK_LB, TK_RB,
    TK_PLUS, TK_MINUS, TK_STAR, TK_SLASH, TK_AT, TK_TILDE, TK_DOTDOT, TK_WORD,
    TK_BAD
};
typedef struct Lexer {
    const Src *src;
    size_t pos;
    int line, col;
} Lexer;
typedef struct Token {
    int kind, line, col;
    const char *p;  /* into the source */
    int len;
} Token;
void lex_init(Lexer *lx, const Src *src);
Token lex_next(Lexer *lx);          /* skips blanks, not newlines */
Token lex_word(Lexer *lx);          /* a header word: [A-Za-z0-9._-]+ */
const char *tok_name(int kind);

/* ---- parse.c: text to programs --------------------------------------- */
/* Parses the next program of a stream. Returns NULL at a clean end of input
 * (*err == 0) or on an error already reported (*err == 1). */
Prog *parse_prog(Arena *a, Lexer *lx, int *err);

/* ---- print.c: the canonical printer ---------------------------------- */
void print_prog(FILE *f, const Prog *p);
void print_expr(FILE *f, const Expr *e);

/* ---- check.c: names, types and shapes -------------------------------- */
/* Checks a parsed program; reports each problem; returns the number found. */
int check_prog(Arena *a, Prog *p);
int prog_find_decl(const Prog *p, const char *name);   /* index or -1 */
/* Every weight the programs declare, each once, in order of declaration. */
const Decl **prog_weights(Arena *a, Prog *const *progs, int n, int *count);
/* The number of values a declaration with constant dims holds, in *n; -1
 * when a dim is a size or the count passes LOGOS_MAXVALUES. */
int decl_count(const Decl *d, long *n);
#define LOGOS_MAXVALUES (1L << 40)
/* The largest whole number a program's attribute may hold (check.c), and so
 * the largest integer a spec may hold and any width its programs declare. */
#define LOGOS_MAXINT 1000000000L

/* ---- graph.c: the flattened dataflow graph of a checked program -------- */
enum { G_DECL = E_NUM + 1, G_NUM, G_WRITE };   /* node ops past OP_*: a declared tensor, a literal, a row write */
typedef struct GNode {
    int op;              /* OP_*, G_DECL, G_NUM or G_WRITE (args: state, positions, value) */
    int nargs;
    int *args;           /* operand nodes */
    Type ty;             /* the checked type (a write: the state's) */
    int stmt;            /* its statement (-1: a declaration) */
    int sub;             /* its number inside its statement, from 1 in evaluation order (0: a leaf) */
    int decl;            /* G_DECL, G_WRITE: the declaration; -1 else */
    const Expr *e;       /* the expression (attributes, location); NULL for G_DECL and G_WRITE */
    int uses;            /* operand references to it */
    int view;            /* an alias: of args[0] (reshape, state rows [..p], a literal row), or a
                          * stack whose rows are each computed in place inside it */
    int nafter;          /* ordering edges: nodes that must run before it (a state's reads and writes) */
    int *after;
} GNode;
/* Roles of a program's inputs and outputs, found from their use. */
enum Role { R_NONE, R_TOKEN, R_TOKENS, R_POS, R_POSITIONS, R_POS0, R_HIDDEN, R_LOGITS, R_NEXT };
typedef struct Graph {
    const Prog *p;
    GNode *n; int nn, cn;
    int *decl_node;      /* each declaration's G_DECL node */
    int *stmt_node;      /* each statement's node: its value, or its G_WRITE */
    int *role;           /* each declaration's enum Role */
    int *seq;            /* R_POS: the sequence of a batch it is the position of (declaration order) */
} Graph;
Graph *graph_build(Arena *a, const Prog *p);     /* p must be checked */
int graph_computes(const Graph *g, int node);    /* not a leaf and not a view */
int graph_is_decl(const Graph *g, int node, int kind);   /* a declaration of that kind (D_WEIGHT...) */
int graph_find_role(const Graph *g, int role, int seq);   /* a declaration, or -1 */
const char *role_name(int role);

/* ---- place.c: a split program's placement (logos-placement(5)) -------- */
/* Why weight d's split does not fit program p (its chips), or NULL. */
const char *place_why(Arena *a, const Prog *p, const Decl *d);
/* The whole weight's dims (its files' shape): d's dims, the split axis times
 * the parts. d's dims are constants (a checked declaration). */
void place_whole(const Decl *d, long *dims);
/* The part of the whole chip `rank` of `chips` reads: [*from, *to) along the
 * returned axis (0 rows, rank-1 cols); -1 for a whole weight. */
int place_part(const Decl *d, int chips, int rank, long *from, long *to);
/* The same as the manifest writes it: "all", "rows=A:B" or "cols=A:B". */
const char *place_part_text(Arena *a, const Decl *d, int chips, int rank);

/* ---- spec.c: the ModelSpec (YAML) ------------------------------------ */
enum Mixer { MIX_ATTN, MIX_LATENT, MIX_DELTA, MIX_CONV };
enum Ffn { FFN_DENSE, FFN_MOE };
enum Act { ACT_SILU, ACT_GELU_TANH, ACT_OAI };   /* OAI: gpt-oss's clamped swiglu */
enum Scaling { SCALE_NONE, SCALE_LLAMA3, SCALE_YARN };
enum Score { SCORE_SOFTMAX, SCORE_SIGMOID, SCORE_TOPK_SOFTMAX };
enum Fmt { FMT_F32, FMT_Q8 };
/* Tensor classes a spec gives a format each (norms, biases and other small
 * vectors are always f32). */
enum WClass { WC_EMBED, WC_HEAD, WC_ATTN, WC_FFN, WC_EXPERT, WC_ROUTER, WC_MIXER, WC_COUNT };

typedef struct Rope {
    double theta;
    int dim;             /* rotated values of a head (partial rotary); 0: all */
    int interleaved;     /* checkpoint pairs (2i, 2i+1): bound by the row permutation */
    int scaling;         /* enum Scaling */
    double factor, low, high, beta_fast, beta_slow, attn_factor;
    int orig;            /* original context of the scaling */
    int truncate;        /* yarn: whole dimensions at the ramp's ends (transformers' default) */
} Rope;

typedef struct AttnSpec {
    int heads, kv_heads, head_dim, value_dim;
    Rope rope;
    int q_bias, k_bias, v_bias, o_bias;
    int qk_norm;         /* per-head RMSNorm of q and k */
    double softcap;      /* score soft-cap; 0: none */
    int sinks;
    int window;          /* sliding window; 0: full */
    int out_gate;        /* sigmoid output gate from the query projection */
    double scale;        /* softmax scale; 0: 1/sqrt(head_dim) */
} AttnSpec;

typedef struct LatentSpec {
    int heads, q_lora, kv_lora, nope, rope_dim, value_dim;
    Rope rope;
    double scale;        /* 0: 1/sqrt(nope + rope_dim) */
    double norm_eps;     /* the compression norms' epsilon (DeepSeek-V2: 1e-6) */
} LatentSpec;

typedef struct DeltaSpec {
    int k_heads, v_heads, k_dim, v_dim, conv;   /* conv: kernel width */
} DeltaSpec;

typedef struct ConvSpec {
    int kernel;          /* width of the short convolution (carried kernel-1 rows) */
    int bias;
} ConvSpec;

typedef struct DenseSpec {
    int hidden, act, bias;
} DenseSpec;

typedef struct MoeSpec {
    int experts, top_k, hidden, act;
    int score;           /* enum Score */
    int router_bias;     /* a selection bias added to the scores (not the weights) */
    int groups, topk_groups;
    int norm;            /* renormalize the kept weights */
    double scale;        /* routed scaling factor (1: none) */
    int expert_bias;     /* biases on each expert's products */
    double alpha, limit; /* ACT_OAI's constants */
    int shared_hidden;   /* 0: no shared expert */
    int shared_gate;     /* sigmoid gate on the shared expert */
} MoeSpec;

typedef struct LayerSpec {
    const char *kind;    /* the name the spec gives it */
    int line;            /* YAML line of its definition */
    int mixer;           /* enum Mixer */
    AttnSpec attn;
    LatentSpec latent;
    DeltaSpec delta;
    ConvSpec conv;
    int ffn;             /* enum Ffn */
    DenseSpec dense;
    MoeSpec moe;
    int sandwich;        /* post-norms after mixer and FFN as well */
} LayerSpec;

typedef struct Spec {
    const char *file, *name;
    int vocab, dim, nlayers, ctx;
    double norm_eps;
    int norm_offset;     /* RMSNorm scales by (1 + w) */
    double embed_scale;  /* 0 or 1: none */
    int tied;            /* LM head is the embedding */
    int cache_f16;       /* attention caches stored as f16 */
    double logit_softcap;
    int fmt[WC_COUNT];   /* enum Fmt per class */
    LayerSpec *kinds; int nkinds;
    int *layer_kind;     /* nlayers entries, index into kinds */
} Spec;

/* Reads and validates a spec; NULL after reporting (with the YAML line). */
Spec *spec_load(Arena *a, const char *path);
/* The same for a spec already in memory (messages name src's name). */
Spec *spec_parse(Arena *a, const Src *src);
const LayerSpec *spec_layer(const Spec *s, int l);
/* The seed's check: why layer l can't be written yet, or NULL. */
const char *spec_not_yet(Arena *a, const Spec *s, int l);
/* The seed's check_tp: why the spec can't split over tp chips, or NULL. */
const char *spec_tp_block(Arena *a, const Spec *s, int tp);

/* ---- author.c: programs from a spec --------------------------------- */
/* 1: a form author() writes (has_layer: it takes a layer index); 2: a
 * tensor-parallel form, which author_tp writes for a number of chips; 0: no
 * such form. */
int author_form_info(const char *name, int *has_layer);
const char *author_forms(void);   /* the form names, space-separated */
/* Writes FORM (with layer l, batch rows B where the form has them) to out:
 * the programs in canonical form (each checked), or with manifest their
 * weights as lines `NAME FORMAT COUNT FILE [FILE]`. stacked_layer takes
 * batch rows when batch > 0, else the rows of one sequence. layer_input and
 * stacked_layer_input print a name. Returns 0 or EXIT_INPUT after a message.
 * The tensor-parallel forms are author_tp's. */
int author(Arena *a, const Spec *s, const char *form, int l, int batch, int manifest, FILE *out);
/* The same, a tensor-parallel form split over `chips` (at least 1) chips:
 * the program carries its placement (logos-placement(5)); with manifest,
 * each chip's part of every whole weight file as lines
 * `RANK NAME FORMAT COUNT SHAPE PART FILE [FILE]`. A spec check_tp refuses
 * (spec_tp_block) is reported, EXIT_INPUT. Other forms ignore chips. */
int author_tp(Arena *a, const Spec *s, const char *form, int l, int batch, int chips, int manifest, FILE *out);

/* ---- env.c: tensors by name, shared by the programs of a stream ------- */
/* A tensor in memory. f32 data in f, i32 in i; a q8 weight has its quants in
 * q (rows × cols int8) and one f16 scale per 32 values in s. Shapes are
 * concrete here (sizes bound). */
typedef struct Buf {
    int base, rank;
    long d[LOGOS_MAXRANK];
    long n;               /* number of values */
    float *f;
    int32_t *i;
    const int8_t *q;
    const uint16_t *s;
} Buf;
typedef struct Env Env;   /* weights, states, inputs and outputs by name */
Env *env_new(void);
void env_free(Env *e);    /* frees every buffer the env allocated */
Buf *env_get(Env *e, const char *name);             /* NULL when absent */
/* Adds (or replaces) name with a zeroed buffer of this shape; the env owns it. */
Buf *env_alloc(Env *e, const char *name, int base, int rank, const long *d);
/* Adds name as a view of memory the caller keeps alive (mmapped weights). */
Buf *env_bind(Env *e, const char *name, Buf b);
long buf_cols(const Buf *b);                        /* n / d[0] */

/* ---- quant.c: Q8_0 and f16 ----------------------------------------------- */
enum { Q8_BLOCK = 32 };   /* values per Q8_0 scale */
/* f16 bits to f32 (exact); inline, so that the reference's vector loops
 * (ref_dot.c) keep their sums in registers across it. */
static inline float f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    if (e == 0) {   /* zero or subnormal: m * 2^-24, exact */
        float v = (float)m * 0x1p-24f;
        return sign ? -v : v;
    }
    uint32_t bits = e == 31 ? sign | 0x7f800000 | m << 13 : sign | (e + 112) << 23 | m << 13;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}
uint16_t f32_to_f16(float f);
/* Q8_0 by round-to-nearest, d = amax/127 per 32 values: n a multiple of 32. */
void q8_quantize(const float *x, long n, int8_t *q, uint16_t *s);
void q8_dequantize(const int8_t *q, const uint16_t *s, long n, float *x);
/* The lane's quantized activations (kernels/common.cuh): each 32 values of
 * x as words int8 words at scale d = amax/127 (words 2: a second word of
 * the residue in 254ths), read back as f32 into out. n a multiple of 32. */
void act_quantize(const float *x, long n, int words, float *out);
/* act_quantize's a8 values as mmh.cu reads them: each quant times its
 * block's scale rounded to f16, the product rounded to f16. */
void act_quantize_h16(const float *x, long n, float *out);
/* Row r of a weight as f32 (dequantized for q8); out holds cols values. */
void buf_row(const Buf *w, long r, float *out);

/* ---- weights.c: weight files and synthetic weights ---------------------- */
typedef struct Weights Weights;   /* mmapped files, freed with weights_close */
/* Binds every weight a program declares into env: from DIR (each file checked
 * against its declaration before anything runs) or, when dir is NULL,
 * synthetic values from seed. Weights already in env are kept. Returns 0, or
 * reports and returns EXIT_INPUT / EXIT_SYSTEM. */
int weights_bind(Weights **w, const Prog *p, Env *env, const char *dir, uint64_t seed);
/* The same for chip `rank` of a split program (logos-placement(5)): a split
 * weight's files (or synthetic values) are the whole, checked against the
 * whole's shape, and the chip binds its part: rows in place, columns copied.
 * weights_bind refuses a program split over more than one chip. */
int weights_bind_chip(Weights **w, const Prog *p, Env *env, const char *dir, uint64_t seed, int rank);
void weights_close(Weights *w);
/* Writes every weight of the program (synthetic from seed) into dir, each
 * file atomically (a split weight's whole). Returns 0 or an exit status. */
int weights_write_synthetic(const Prog *p, const char *dir, uint64_t seed);
/* Where a tool's weights come from: --weights DIR or --synthetic SEED. */
typedef struct WeightsArg {
    const char *dir;
    uint64_t seed;
    int synthetic;
} WeightsArg;
/* --synthetic SEED's row function (opt.c): field is the WeightsArg. */
int weights_seed_opt(void *field, const char *flag, const char *value);
/* The option rows of --weights DIR and --synthetic SEED for a tool whose
 * options struct T holds a WeightsArg member m. */
#define WEIGHTS_OPTS(T, m) \
    {.l = "weights", .kind = OPT_STR, .at = offsetof(T, m.dir), .arg = "DIR", \
     .help = "load each weight from DIR/NAME.f or DIR/NAME.q and NAME.s"}, \
    {.l = "synthetic", .kind = OPT_CALL, .at = offsetof(T, m), .arg = "SEED", .fn = weights_seed_opt, \
     .help = "deterministic synthetic weights instead of files"}
/* Exactly one source given: 0, or EXIT_USAGE after a message. */
int weights_given(const WeightsArg *w);
/* The file row that logical row r of a weight reads under unpair(hd, rot,
 * at): in each group of hd rows, rotated row at+i (i < rot/2) reads file row
 * at+2i and row at+rot/2+i reads at+2i+1; other rows, and hd == 0, in place. */
long unpair_row(int hd, int rot, int at, long r);
/* The stream behind a named weight's synthetic values: value i (from 0) is
 * add + mul (2u - 1) in f64, made f32, with u the top 24 bits of splitmix64's
 * output for state + (i + 1) 0x9e3779b97f4a7c15, over 2^24 (kernels/synth.cu
 * computes the same on the GPU). */
void weights_synth_params(const char *name, int rank, const long *d, uint64_t seed, uint64_t *state, double *add,
                          double *mul);
/* The deterministic synthetic f32 values of a named weight (n values). */
void weights_synth(const char *name, int rank, const long *d, uint64_t seed, float *out);

/* ---- trace.c: LOGOS_TRACE, every value of a run written to a folder ---- */
const char *trace_dir(void);   /* the folder, or NULL when not tracing */
/* DIR/RUN.PROG.NAME holds bytes of v (raw f32 or i32). */
void trace_write(int run, int prog, const char *name, const void *v, long bytes);
void trace_order(int run, int prog, const char *name, int i32);   /* a line of DIR/order */

/* ---- ref.c: the CPU reference executor ----------------------------------- */
/* Runs a checked program once against env: inputs and weights must be bound
 * (sizes are taken from the inputs), states are created zeroed on first use
 * and kept in env between runs; outputs are left in env under their names.
 * Returns 0, or reports a located error and returns EXIT_INPUT (a position
 * past a state's rows, a token past a table, a missing input). */
int ref_run(const Prog *p, Env *env);
/* How the reference runs a plan's program as its launches compute
 * (LOGOS_REF_NUMERICS; plan_ref_numerics): products read their activations
 * as the lane's quantized numerics do (quant 1: q8, 2: q8x2; act_quantize;
 * 0: f32), and the attention calls in flash (the expressions a flash
 * launch covers, nflash of them) run as flash.cu computes them
 * (flash_attend), the products in h16 (an mmh launch's) with their a8
 * values and weights rounded to f16 as mmh.cu reads them. A zeroed RefNum
 * runs the program as ref_run does. */
typedef struct RefNum {
    int quant;
    const Expr **flash;
    int nflash;
    const Expr **h16;    /* products a plan's mmh launch covers: operands rounded to f16 (act_quantize_h16) */
    int nh16;
} RefNum;
/* ref_run as num says, for comparing the lane's kernels with what their
 * quantization and operands give on the CPU; run is the caller's count of
 * runs (-1 where it keeps none), named by LOGOS_REF_TIES's notices. */
int ref_run_numerics(const Prog *p, Env *env, const RefNum *num, int run);
/* ref_run_numerics, writing each statement's value and, at the end, each
 * state under LOGOS_TRACE as run `run` of program `prog` (trace.c). */
int ref_run_trace(const Prog *p, Env *env, const RefNum *num, int run, int prog);
/* Reads LOGOS_REF_NUDGE (F[:SEED], logos-run(1)): 0, or EXIT_USAGE after
 * a message naming a value that is not one. The reference reads it on its
 * first rounding where no one called this. */
int ref_nudge_read(void);
/* Reads LOGOS_REF_TIES (F, logos-run(1)): 0, or EXIT_USAGE after a message
 * naming a value that is not a fraction. */
int ref_ties_read(void);
/* The inverse frequencies of a rope call over rot values (rot / 2 of them),
 * with its scaling, in f64: what the reference and the CUDA lane both use. */
void rope_freqs(const Expr *e, long rot, double *inv);
/* One chip of a split program run with its chips (tp.c): join combines this
 * chip's x (rows of cols values) with every chip's, OP_ALLREDUCE summing
 * them into out (rows × cols), OP_ALLGATHER joining them along the last axis
 * in rank order (rows × cols·chips); 0, or -1 when a chip has stopped. stop
 * says this chip stops on an input error: 1 when it is the first (it
 * reports), 0 when another has. ref_run refuses a program split over more
 * than one chip. */
typedef struct RefColl {
    int (*join)(void *ctx, int op, const float *x, long rows, long cols, float *out);
    int (*stop)(void *ctx);
    void *ctx;
    int chips;
} RefColl;
int ref_run_coll(const Prog *p, Env *env, const RefColl *coll);

/* ---- ref_flash.c: flash.cu's arithmetic on the CPU ---------------------- */
/* A chunk's causal attention (attend over causal rows) as kernels/flash.cu
 * computes it, for rows query rows q (rows, nh, hd) over K (nctx, nkv, hd)
 * and V (nctx, nkv, vd) into y (rows, nh, vd), all f32: row t's head h
 * (key head h / (nh / nkv)) sees keys [lo, hi), hi = pos[t] held to
 * [0, nctx], lo = hi - window where window and hi > window, else 0. Its
 * operands are f16 (q times scale, K, P, and V with values not finite in
 * f16 read as 0), its scores and sums f32 (each 16 products summed, then
 * added, as a tensor core's step does), its softmax online over the
 * kernel's tiles of keys (64, or 32 where hd or vd passes 128) from the
 * first key of the row's block of 64 stacked rows; a cap, sinks, and 0 for
 * a row without keys as the kernel has them. */
typedef struct FlashAttn {
    long nh, nkv, hd, vd;
    float scale, cap;     /* cap 0: none */
    long window;          /* 0: none */
    const float *sinks;   /* nh of them, or NULL */
} FlashAttn;
void flash_attend(const FlashAttn *f, const float *q, const int32_t *pos, long rows, const float *K, const float *V,
                  long nctx, float *y);

/* ---- tp.c: a split program run as its chips on the CPU ------------------ */
/* Runs p once as its p->chips chips (one when it declares none), chip r
 * against envs[r]: its own weights (weights_bind_chip), states, inputs and
 * outputs; the collectives sum and gather across the chips in rank order.
 * Returns 0, or EXIT_INPUT after the first chip's error is reported, or
 * EXIT_SYSTEM when a chip cannot start. */
int tp_run(const Prog *p, Env **envs);

/* ---- kernels.c: the kernel table (kernels.h) -------------------------- */
enum {
#define K(id, name, file, consts, params, threads) KN_##id,
#include "kernels.h"
#undef K
    KN_COUNT
};
enum { KMAXC = 40, KMAXP = 28 };
/* Element types of plan buffers (kernels/common.cuh gives their layouts). */
enum ElType { ET_F32, ET_I32, ET_F16, ET_F64, ET_Q8, ET_A8, ET_A8X2, ET_A8H, ET_COUNT };
typedef struct KConst {
    char name[12];
    int isf;             /* a number, not a whole one */
    double lo, hi;
} KConst;
typedef struct KParam {
    char name[8];
    char kinds[12];      /* letters of the buffer kinds it takes (enum BufKind) */
    int optional;
    unsigned dtypes;     /* bit per enum ElType */
} KParam;
typedef struct Kernel {
    const char *name, *file;
    int nc, np, threads;
    KConst c[KMAXC];
    KParam p[KMAXP];
} Kernel;
/* What a kernel's constants ask of a launch: each parameter's least count
 * of values (-1: not read), the grid, the block and the shared memory. */
typedef struct KNeed {
    long count[KMAXP];   /* under a table: each entry's */
    long entries[KMAXP]; /* the entries of the table the parameter reads (0: a buffer, not a table) */
    int etype[KMAXP];    /* the element type the constants read the parameter as; -1: any it takes */
    long grid[3];
    int block;
    long smem;
} KNeed;
const Kernel *kernel_info(int k);
int kernel_lookup(const char *name);               /* -1 when unknown */
int kernel_const(int k, const char *name);         /* the constant's index, or -1 */
int kernel_param(int k, const char *name);         /* the parameter's index, or -1 */
int kernel_cluster(int k, const double *c);        /* blocks along z that run as one cluster (1: none) */
/* 0, or -1 with why filled when the constants do not fit together. */
int kernel_need(int k, const double *c, KNeed *out, char *why, size_t whylen);
void kernel_const_text(const KConst *kc, double v, char *buf, size_t n);
/* mmv.cu's shared memory: its sums, its staged rows (xs), its rings */
long mmv_smem(long K, long nt, long xq, int xs, int depth);
int mmv_uneven(long K, int gated);                /* mmv.cu's warps would split K unevenly */
/* An activation format constant (XIN, XQ, OQ: 0 f32, 1 a8, 2 a8x2, 3 a8h)
 * as an element type, and back (0 for any other type). */
int act_etype(long f);
int etype_format(int et);
long mmh_tiles(long bn, long gate, const long *np, int parts);
long mmh_smem(long bn, long xin, long tm, long kper);
long mmi_smem(long nr, long stages);
/* kernel_source's flags: the timeline's marks (kernels/common.cuh's
 * LOGOS_TL: logos-bench --timeline, or LOGOS_TIMELINE); the plan took rule
 * early_trigger (LOGOS_ET). */
enum { KS_MARKS = 1, KS_EARLY = 2 };
/* malloc'd: the constants, then the file, compiled as flags say */
char *kernel_source(int k, const double *c, int flags);
/* Whether kernel k reads before its wait only what no launch of the same
 * step writes (weights, the caches' older rows, the position), so that a
 * step of such launches may take rule early_trigger. */
int kernel_early_safe(int k);
/* Whether the environment's LOGOS_TIMELINE asks for the marks (set, not 0). */
int kernel_marks_env(void);
const char *kernel_common(void);                   /* common.cuh */
/* The blocks of gemv a multiprocessor holds for rows of k values (Q8_0
 * weights or, wq 0, f32), a warp's weight rows (slots; a gated pair's
 * under gated), staged activation rows (tr) in format xq, a norm prologue
 * and an arg-max epilogue: gemv.cu's MINB, two rounds of loads in flight
 * (DB) and a decode step's head (HEAD3) included. */
int gemv_blocks_per_sm(long k, int wq, long slots, long tr, int gated, int xq, int norm, int argmax);
/* Whether attend's TC (a batch's attention on the tensor cores) takes an
 * attention of this mode, cache format (KV), head and value widths and
 * query heads a block; the blocks of it a multiprocessor holds. */
int attend_tc(long mode, long kv, long hd, long vd, long hg);
/* Whether attend's LR (a row a lane: a batch's rows, MODE 3, or a decode
 * step's chunks of ATTEND_LRR rows and more, MODE 0) takes heads and values
 * of these widths, hg query heads a block. */
int attend_lr(long hd, long vd, long hg);
int attend_tc_blocks_per_sm(long hd, long vd, long tc);
/* attend.cu's LRR: a decode step's chunk of at least this many rows is
 * scored a row a lane (its LR under MODE 0). */
#define ATTEND_LRR 64
/* The fewest rows of a chunk the lane splits an attention's rows into. */
#define ATTEND_CHUNK 16
/* The source of one of the lane's own kernels (synth.cu, bench.cu), not a
 * plan's: consts are its constexpr lines. malloc'd. */
char *lane_kernel_source(const char *file, const char *consts);
const char *etype_name(int dt);
int etype_lookup(const char *s, size_t n);         /* -1 when unknown */
long etype_bytes(int dt, long n);                  /* bytes of n values */

/* ---- nvrtc.c: run-time compilation (NVRTC opened with dlopen) ----------- */
typedef struct Cubin {
    void *data;
    size_t size;
    char *log;           /* NVRTC's log, always set after a compile */
    int regs;            /* ptxas's report */
    long stack, spill_st, spill_ld;
} Cubin;
const char *nvrtc_open(void);    /* NULL, or why NVRTC cannot be used */
int nvrtc_version(void);         /* 1000 major + 10 minor, or 0 */
int nvrtc_archs(int *a, int cap);  /* the architectures it compiles for, into a: their count; 0: unknown */
const char *nvrtc_options(void); /* the options every compile passes, spelled out */
/* Compiles src (which includes header as header_name) for sm_<arch>: 0, or
 * EXIT_INPUT on a compile error, EXIT_SYSTEM without NVRTC; out->log holds
 * the log either way. cubin_free releases it. */
int nvrtc_compile(const char *src, const char *name, const char *header, const char *header_name, int arch,
                  Cubin *out);
void cubin_free(Cubin *c);

/* ---- plan.c: launch plans (man5/logos-plan.5) -------------------------- */
enum Numerics { NUM_PRECISE, NUM_Q8, NUM_Q8X2 };
/* Buffer kinds; the letter of each is how the kernel table names it. */
enum BufKind { B_WEIGHT, B_STATE, B_IN, B_OUT, B_TEMP, B_CONST, B_SCRATCH, B_SIZE, B_VIEW, B_TABLE, B_COUNT };
typedef struct PBuf {
    const char *name;
    int kind, etype;     /* enum BufKind, enum ElType */
    long count;          /* values */
    long at;             /* B_TEMP: byte offset in the plan's pool; B_VIEW: value offset in its base */
    int base;            /* B_VIEW: the buffer it lies in */
    int decl;            /* the program declaration it holds, or -1 */
    int node;            /* B_CONST: the rope node whose table it is, or -1 */
    int *ents, nents;    /* B_TABLE: the named buffers whose addresses it holds, in order */
    int line, col;
} PBuf;
typedef struct PLaunch {
    int kernel;
    double c[KMAXC];     /* constants, in the table's order */
    long grid[3];
    int block;
    long smem;
    int arg[KMAXP];      /* a buffer per parameter, -1 when absent */
    int *covers, ncovers;   /* graph nodes */
    int line;
} PLaunch;
/* A collective step of a split program's plan (man5/logos-plan.5): the
 * chips join x (rows of cols f32 values) into y, an NCCL call on the GPU;
 * it runs before launch `at` (nls: after the last). */
typedef struct PColl {
    int op;              /* OP_ALLREDUCE or OP_ALLGATHER */
    long rows, cols;
    int x, y;            /* buffers */
    int at;
    int *covers, ncovers;   /* graph nodes: its collective */
    int line;
} PColl;
typedef struct Plan Plan;
struct Plan {
    const Src *src;
    int line;
    int numerics, fuse_quant, lane_rules, rows;   /* rows: the bound of every size */
    const char **rules; int nrules, crules;       /* the lane's rules this plan took */
    Prog *prog;
    Graph *g;
    PBuf *bufs; int nbufs, cbufs;
    StrMap *names;       /* each name's first buffer (kept by lane_cuda.c's add_buf and the parser): plan_buf's */
    PLaunch *ls; int nls, cls;
    PColl *cs; int ncs, ccs;   /* the collectives, in order */
    long pool;           /* bytes of the temporaries' pool */
};
/* Whether the plan took the lane rule called name. */
int plan_rule(const Plan *pl, const char *name);
/* kernel_source's flags for a plan's kernels: what its rules ask for
 * (KS_EARLY), and KS_MARKS where marks is set. */
int plan_kernel_flags(const Plan *pl, int marks);
const char *numerics_name(int n);
char bufkind_letter(int kind);
const char *bufkind_word(int kind);   /* "weight", "temp" ... */
/* Parses (and checks) the next plan of a stream: NULL at a clean end
 * (*err 0) or after reporting (*err 1). */
Plan *plan_parse(Arena *a, Lexer *lx, int *err);
/* Everything a launch may be checked for before any runs: kernels, their
 * constants' ranges, arguments' kinds and sizes, the grid, every compute
 * node covered once. The number of problems reported. */
int plan_check(Plan *pl);
/* 0 where kernel k's parameter p takes buffer b's kind and element type,
 * or b is a table (checked entry by entry); else -1 with why filled
 * (plan_check's words, which the lane refuses with). */
int plan_arg_fits(const Plan *pl, int k, int p, int b, char *why, size_t n);
void plan_print(FILE *f, const Plan *pl);
int plan_buf(const Plan *pl, const char *name);   /* index or -1 */
int plan_base(const Plan *pl, int b);             /* a view's base, through views */
int plan_chips(const Plan *pl);                   /* the chips its program runs on: 1 when it declares none */
long plan_buf_bytes(const Plan *pl, int b);
/* How the reference runs the plan's program as its launches compute
 * (ref_run_numerics): its numerics' quantization, the attention calls its
 * flash launches cover and the products its mmh launches cover. The lists
 * are in a. */
RefNum plan_ref_numerics(Arena *a, const Plan *pl);

/* ---- fuse.c, lane_cuda.c: programs to plans ----------------------------- */
typedef struct FuseOpts {
    int numerics;        /* enum Numerics */
    int fuse_quant;      /* producers quantize in their epilogues */
    int lane_rules;      /* the lane's own rules taken (0: held back, the LaneShim) */
    int rows;            /* the bound of every size (a chunk's rows) */
    int sms;             /* the chip's multiprocessors, for chunks_apart */
    int verbose;         /* each decision on stderr */
    int quiet;           /* no message for an op the lane has no kernel for */
    int mma_rows;        /* stacked rows from which products run on the tensor cores in tiles (mma); 0: MMA_ROWS */
    int mmv_rows;        /* stacked rows from which they run there in passes of 32 (mmv); 0: MMV_ROWS */
    int latent_rows;     /* stacked rows from which a latent attention runs expanded; 0: LATENT_ROWS */
    int mmh_rows;        /* stacked rows from which mma's products run in f16 tiles (mmh); 0: MMH_ROWS */
    int xr_rows;         /* stacked rows from which, up to 64, products run on mmh with x resident; 0: XR_ROWS */
    int mmi_rows;        /* stacked rows from which, up to 64, products run in int8 wgmma (mmi); 0: MMI_ROWS */
    int mmi_table;       /* the same from --crossover's table, where mmi_rows is 0 (mmi_small still
                            keeps the small products on mmv, as at the default); 0: none */
    int preload_kb;      /* the most KB of weights a block of a decode step's product after a launch that reads
                            little takes into shared memory before its wait (rule preload); 0, the default:
                            never (on an H100 the steps ran from 0.2% faster to 4% slower with it, Qwen2.5-0.5B's
                            alone 3% faster: bench/NOTES.md run222) */
} FuseOpts;
/* The default crossover of --mma-rows: the first row count at which the
 * bench timed mma ahead of mmv (run96: 64 rows 9.63 against 9.32 ms, 128
 * rows 16.20 against 17.73, the 8B's decode batch), with no table of times
 * given (--crossover). */
#define MMA_ROWS 128
/* The stacked rows from which products run on the tensor cores in tiles. */
static inline int mma_crossover(const FuseOpts *o)
{
    return o->mma_rows > 0 ? o->mma_rows : MMA_ROWS;
}
/* The default of --mmv-rows: from 2 rows, where the H200's crossover
 * table has mmv ahead of the GEMV (bench/crossover.h200.table, run259h:
 * the 8B's batch of 2 2.97 against 3.44 ms), and an H100 the same
 * (bench/NOTES.md run262: f16 caches, the 8B 3.72 against 4.23, the 1B
 * 0.88 against 0.92, Gemma-2-2B 2.43 against 2.41; run263, f32 caches:
 * Qwen3-0.6B, Qwen2.5-0.5B, Mistral-7B 7.6-10.7% faster, the 1B 3.6%,
 * Gemma-2-2B 2.0% slower: its sandwich norms, folded into the GEMV's
 * prologue, are launches of their own before mmv); from 3 rows a GEMV
 * under a quantizing epilogue reads its weights twice anyway. */
#define MMV_ROWS 2
/* The stacked rows from which products run on the tensor cores in passes
 * of up to 32 rows (below mma_crossover). */
static inline int mmv_crossover(const FuseOpts *o)
{
    return o->mmv_rows > 0 ? o->mmv_rows : MMV_ROWS;
}
/* The default of --latent-rows: the chunk rows from which a latent
 * attention runs expanded (rule latent_expanded) rather than absorbed: the
 * first chunk length at which DeepSeek-V2-Lite's prefill chunk took less
 * time expanded at positions 1 and 1024 (bench/NOTES.md run151: 64 rows
 * 0.960 and 0.882 the absorbed plan's time over the expanded one's, 128
 * rows 1.003 and 1.011, 512 rows 1.056 and 1.178). */
#define LATENT_ROWS 128
static inline int latent_crossover(const FuseOpts *o)
{
    return o->latent_rows > 0 ? o->latent_rows : LATENT_ROWS;
}
/* The default of --mmh-rows: the stacked rows from which products bound
 * for the tensor cores in tiles run on mmh.cu (Q8_0 dequantized to f16
 * tiles, wgmma) rather than mma.cu (int8 with the scales a slab): one
 * block's 128 rows (bench/NOTES.md run158: 1.6-1.9x mma's rate at the
 * 8B's shapes at 512 and 2048 rows). */
#define MMH_ROWS 128
static inline int mmh_crossover(const FuseOpts *o)
{
    return o->mmh_rows > 0 ? o->mmh_rows : MMH_ROWS;
}
/* The default of --xr-rows: the stacked rows from which, up to 64, the
 * products whose activation comes a8h run on mmh with x resident (TM 64,
 * mmh.cu's XR) rather than mmv: 65, none: on the H200 the 8B's batches of
 * 16-64 rows ran 2.6-5x slower on it than on mmv (bench/NOTES.md run183;
 * --xr-rows 33 takes it from 33 rows). */
#define XR_ROWS 65
/* The default of --mmi-rows: the stacked rows from which, up to 64, the
 * products whose activation comes a8 run in int8 wgmma (mmi.cu) rather than
 * mmv: 32, and then only those lane_cuda.c's mmi_small finds large enough.
 * On an H100 the 8B's q8 decode batches (f16 caches, position 512) took
 * 0.83x mmv's step at 64 rows, 0.79x at 40 and 0.97x at 32, 1.04x at 24
 * with every product on it (bench/NOTES.md run246); with mmi_small, 0.80x
 * at 64 and 0.94x at 32 (run254). The H200's crossover table has mmi
 * ahead from 24 rows with every product on it (run259h), but 24 as the
 * default (with mmi_small) gained the 8B and 1B 0.5% and 0.3% at 24 rows
 * and cost Gemma-2-2B 1.8% on an H100 (run262): 32 stays. */
#define MMI_ROWS 32
static inline int mmi_crossover(const FuseOpts *o)
{
    return o->mmi_rows > 0 ? o->mmi_rows : o->mmi_table > 0 ? o->mmi_table : MMI_ROWS;
}
static inline int xr_crossover(const FuseOpts *o)
{
    return o->xr_rows > 0 ? o->xr_rows : XR_ROWS;
}
/* The fewest stacked rows either tensor-core kernel takes. */
static inline int tc_crossover(const FuseOpts *o)
{
    int a = mma_crossover(o), v = mmv_crossover(o);
    return a < v ? a : v;
}
/* ---- crossover.c: the crossovers from the bench's table of times ------- */
typedef struct Cross {
    int rows;        /* the crossover; 65536: never */
    int timed;       /* a row of the table decided it (0: never) */
    double ms[2];    /* there: the kernel's step and the one it replaces, in ms */
} Cross;
typedef struct Crossover {
    const char *src;   /* the table's file name */
    Cross mmv, mma;    /* mmv against the GEMV, mma against mmv */
    Cross mmi;         /* mmi against mmv (rows 0: the table times no mmi) */
} Crossover;
/* The crossovers of numerics (enum Numerics) from a table of tests/gpu/
 * crossover's lines in path (logos-fuse(1), --crossover): 0, or
 * EXIT_INPUT after a located message. */
int crossover_read(Arena *a, const char *path, int numerics, Crossover *c);
/* -v's line: each crossover and the times that decided it, on stderr. */
void crossover_say(const Crossover *c);

/* The plan of a checked program under the knobs; NULL after reporting an op
 * the lane has no kernel for (exit 1). */
Plan *fuse(Arena *a, Prog *p, Graph *g, const FuseOpts *o);

/* ---- run.c: generating over a stream, through a lane ------------------- */
enum Phase { PH_CHUNK, PH_STEP, PH_BATCH, PH_COUNT };
typedef struct Prompt {
    int32_t *ids;
    int n;
} Prompt;
typedef struct Stream Stream;
/* How a split stream runs (logos-run --tp, --devices, --rank, --nccl-id:
 * logos-run(1)). */
typedef struct TpArg {
    long chips;          /* --tp N: the chips the stream must be split over; 0: as it is */
    int *devices;        /* --devices: this process's GPUs, one a chip it drives; NULL: 0, 1 ... */
    int ndevices;
    long rank;           /* --rank R: this process is chip R alone (one process per GPU); -1: it drives all */
    const char *id;      /* --nccl-id FILE: where rank 0 puts NCCL's unique id for the others */
} TpArg;
/* The seam every executor implements (the CPU reference: lane_cpu; CUDA:
 * lane_cuda). k is a program of the stream, d one of its declarations. */
typedef struct Lane Lane;
struct Lane {
    const char *name;
    /* weights and states of every program (files checked before anything runs) */
    int (*bind)(Lane *l, Stream *st, const WeightsArg *w);
    int (*put)(Lane *l, int k, int d, const void *v, long n);   /* an input: n i32 or f32 values */
    int (*run)(Lane *l, int k);
    int (*fetch)(Lane *l, int k, int d, Buf *out);   /* an output or a state (f16 read as f32), valid until the next run */
    void (*close)(Lane *l);
};
struct Stream {
    Arena *a;
    const char *src;          /* the stream's file name, for messages */
    Prog **progs; int nprogs, cprogs;
    Plan **plans; int cplans; /* each program's plan (NULL: a program read as such) */
    Graph **graphs;           /* each program's dataflow graph */
    int has[PH_COUNT];        /* filled by stream_phases */
    long vocab, ctx;          /* rows of the token table and of the states written by position; -1 unknown */
    int batch;                /* sequences a batch phase steps together (0: none) */
    int chunk_rows;           /* most rows of one prompt chunk (0: the whole prompt) */
    FILE *logits;             /* every step's logits, raw f32, or NULL */
    const char *outname;      /* where the tokens go, for messages (NULL: standard output) */
    const Prompt *follow;     /* tokens each sequence is fed after its prompt instead of */
    int nfollow;              /* its greedy ones (--follow), one list a sequence */
    int chips;                /* the chips its split programs run on (0: none is split); stream_phases */
    const TpArg *tp;          /* how they run (NULL: one process, GPUs 0, 1 ...) */
    Lane *lane;               /* from stream_open */
    long generated;           /* tokens generated so far */
};
/* Reads a stream of programs or plans (each program checked); 0 or EXIT_INPUT. */
int stream_load(Arena *a, const char *path, Stream *st);
int stream_load_src(Arena *a, const Src *src, Stream *st);   /* the same, from text read already */
/* Sorts the stream's programs into phases and finds the chips its split
 * programs run on (all alike); 0 or EXIT_INPUT. */
int stream_phases(Stream *st);
/* Binds the stream's weights and states in lane; 0 or an exit status.
 * stream_close closes the lane. */
int stream_open(Stream *st, Lane *lane, const WeightsArg *w);
void stream_close(Stream *st);
/* Runs the prompts (one, or one per sequence of a batch) and generates ngen
 * tokens greedily, printing each to out as it comes. 0 or an exit status. */
int run_generate(Stream *st, const Prompt *prompts, int nprompts, int ngen, FILE *out);
/* One decode step of the stream's step programs: token tok at position pos;
 * the next token out. 0 or an exit status. */
int run_step(Stream *st, int32_t tok, int32_t pos, int32_t *next);
/* A step's inputs alone (the token at a position), a prefill chunk's (n
 * tokens from position pos0), a batch's (st->batch tokens, each sequence's
 * position), and one phase's programs run once in order, for logos-bench's
 * timings. */
int step_inputs(Stream *st, int32_t tok, int32_t pos);
int chunk_inputs(Stream *st, const int32_t *toks, int n, int32_t pos0);
int batch_step_inputs(Stream *st, const int32_t *toks, const int32_t *pos);
int run_phase(Stream *st, int ph);
/* Does program k run in phase ph? */
int phase_is(const Stream *st, int k, int ph);
Lane *lane_cpu(void);
int prog_has_size(const Prog *p);   /* a chunk's program: it declares a size */

/* ---- cuda_lane.c: the CUDA lane (the driver opened by cuda.c) ----------- */
/* NULL with *status set after a message (no device, a driver failure). */
Lane *lane_cuda(int *status);
Lane *lane_cuda_on(int ordinal, int *status);   /* the same on GPU `ordinal` */
const char *lane_cuda_device(const Lane *l, int *sms);   /* the GPU's name and multiprocessors */
/* What starting took: seconds compiling or loading kernels, how many were
 * compiled rather than read from the cache, of how many. */
void lane_cuda_startup(const Lane *l, double *compile_s, int *compiled, int *kernels);
const char *cuda_why(void);   /* NULL when a CUDA device answers, else why not */

/* ---- cuda_tp.c, nccl.c: a split stream on GPUs over NCCL --------------- */
/* The chips of st (st->chips, one when 0) on GPUs, as st->tp says: every
 * chip from this process, or with a rank one; NULL with *status set after
 * a message. */
Lane *lane_tp(Stream *st, int *status);
/* Its GPUs, "0: NAME, 1: NAME"; the stream's chips and this process's. */
const char *lane_tp_devices(const Lane *l, int *chips, int *here);
const char *nccl_why(void);   /* NULL when NCCL opens, else why not */

/* ---- bench.c: what a plan's launches read and compute ------------------ */
/* Where a plan runs: a query at position pos (a chunk's first row, the
 * next ones after it), rows the rows bound at run time (a prefill chunk's
 * T; 0: the plan's own rows). */
typedef struct BenchAt {
    long pos, rows;
} BenchAt;
BenchAt bench_at(long pos, long rows);
double launch_rows(const Plan *pl, int i, BenchAt at);    /* the rows launch i computes */
double launch_bytes(const Plan *pl, int i, BenchAt at);
double launch_flops(const Plan *pl, int i, BenchAt at);
/* The ops of launch i's Q8_0 products: 2 rows N K for each (0: none). */
double launch_ops(const Plan *pl, int i, BenchAt at);
/* A step's bytes: each weight once (seen holds the names counted, across
 * the plans of a stream), the cache rows its attention reads. */
double plan_step_bytes(const Plan *pl, BenchAt at, StrMap *seen);
double plan_step_ops(const Plan *pl, BenchAt at);   /* every launch's launch_ops */
void launch_brief(const Plan *pl, int i, char *buf, size_t n);   /* "gemv 6144x4096/parts q8 a8" */

/* ---- bench_form.c: the forms logos-bench times ------------------------ */
enum BenchFormKind { BF_STEP, BF_PREFILL, BF_BATCH };
typedef struct BenchForm {
    int form;            /* enum BenchFormKind */
    long rows;           /* the tokens of one timed run: 1, a chunk's T, a batch's B (0: not yet known) */
} BenchForm;
const char *bench_form_word(int form);   /* "step", "prefill", "decode_batch" */
int bench_phase(int form);               /* the stream's phase it times */
/* Does the stream hold the form? 0, or EXIT_INPUT after a message naming
 * the file and what it holds. */
int bench_holds(const Stream *st, int form);
/* Do the form's rows fit the stream's plans (a chunk's T at most the
 * plans' rows; a batch's B the stream's)? Fills rows where 0: the plans'
 * (dflt for a chunk without plans), the stream's batch. 0 or EXIT_INPUT. */
int bench_fits(const Stream *st, BenchForm *f, long dflt);
/* Does the form at pos (a chunk's first row) stay within the states? */
int bench_pos_fits(const Stream *st, const BenchForm *f, long pos);
/* The inputs of timed run `run`: tokens that change from run to run, at
 * pos (every sequence of a batch there). */
int bench_inputs(Stream *st, const BenchForm *f, long pos, int run);
/* ms[reps]: the form's phase on the CPU reference, with its inputs. */
int bench_cpu_times(Stream *st, const BenchForm *f, long pos, int reps, double *ms);

/* ---- bench_report.c: logos-bench's figures ------------------------------ */
typedef struct BenchPos {
    long pos;
    double bytes;                 /* what the step must read */
    double *ms; int reps;         /* the step's times */
    double med, p10, p90;         /* from bench_summarize */
    int nlaunch, *lk, *li;        /* each launch of the step: its program, its index */
    double *launch_ms;            /* each launch alone */
    int launch_reps;
    long rows;                    /* the tokens a run computes (BenchForm's rows) */
    double ops;                   /* its Q8_0 products' ops */
    struct TlRun *tl;             /* --timeline: the replay's launches and blocks, or NULL */
} BenchPos;
typedef struct BenchRun {
    const char *label;            /* the plan's file */
    Stream *st;
    int prog;                     /* the first program of the phase timed */
    int numerics, fuse_quant;
    BenchPos *ps; int nps;
} BenchRun;
typedef struct BenchHead {
    const char *gpu;              /* NULL on the CPU */
    int sms;
    double ceiling, buffer_gb;    /* GB/s; 0 when none */
    int form;                     /* enum BenchFormKind */
    double tensor;                /* the tensor cores' int8 rate, TOP/s; 0 when none */
    int marks;                    /* the kernels carry --timeline's marks */
} BenchHead;
void bench_summarize(BenchPos *b);   /* median, 10th and 90th percentiles of ms */

/* ---- bench_timeline.c: logos-bench --timeline ------------------------- */
/* One launch in a replay (µs from the replay's first block start): its
 * first block's start, its last block's start, the last return from a
 * wait for the launch before (-1: no block waited), its first block's
 * end and its last one's. */
typedef struct TlSpan {
    long blocks;
    int sms;             /* multiprocessors its blocks ran on */
    double start, started, waited, first_end, end;
} TlSpan;
/* One replay's timeline: a span a launch (BenchPos's order) and the
 * records of four words (kernels/common.cuh's), each with its launch. */
typedef struct TlRun {
    TlSpan *span;
    uint64_t *recs;
    int *which;          /* each record's launch */
    long n;
    uint64_t t0;         /* the replay's first block start (ns) */
} TlRun;
/* The spans of nl launches (launch i: lane kernel kid[i], blocks[i] blocks)
 * from t->n records (sorted in place) into t->span, t->which and t->t0.
 * -1 when every launch has its blocks and every record a launch; else
 * the first launch whose blocks are not there (nl: records left). */
long timeline_spans(TlRun *t, const int *kid, const long *blocks, int nl);
/* The CSV of every run's spans (BenchPos's tl) to f: a row a launch. */
void timeline_csv(FILE *f, const BenchRun *r, int nr, const BenchHead *h);
/* The same replays a row a block, in the launches' order, each launch's
 * blocks by start. */
void timeline_blocks_csv(FILE *f, const BenchRun *r, int nr, const BenchHead *h);
double bench_median(double *v, int n);   /* sorts v; the middle value, or the mean of the two */
void bench_table(FILE *f, const BenchRun *r, int nr, const BenchHead *h);
void bench_csv(FILE *f, const BenchRun *r, int nr, const BenchHead *h);
void bench_json(FILE *f, const BenchRun *r, int nr, const BenchHead *h);
void bench_svg(FILE *f, const BenchRun *r, int nr, const BenchHead *h);

/* ---- cuda_bench.c: logos-bench's measurements on the CUDA lane --------- */
/* The read ceiling in GB/s: a streaming read of a buffer far past the L2. */
int cuda_ceiling(Lane *l, double *gbs, double *buffer_gb);
/* The tensor cores' int8 rate in TOP/s: mma.sync on every multiprocessor. */
int cuda_tensor_rate(Lane *l, double *tops);
/* ms[reps]: the form's phase's plans replayed at position pos, each timed
 * by events; the inputs change every replay. */
int cuda_form_times(Lane *l, Stream *st, const BenchForm *f, long pos, int reps, double *ms);
/* ms[launch]: each launch of program k alone (the L2 emptied before each),
 * the median of reps. */
int cuda_launch_times(Lane *l, Stream *st, int k, int reps, double *ms);
/* Before the kernels load: compile them with their timeline marks and
 * keep the lane's room for their records. */
int cuda_timeline_on(Lane *l);
/* b->tl: the launches of b (program lk[j], launch li[j]) in one replay of
 * the form's phase at b->pos, after one untimed (in st's arena). */
int cuda_timeline(Lane *l, Stream *st, const BenchForm *f, BenchPos *b);

/* ---- cache.c (the part that needs no device) ---------------------------- */
/* Compiles every kernel instantiation of the stream's plans for sm_<arch>
 * into the cache and prints each one's registers, stack frame and spills,
 * then a count; 0, or EXIT_SYSTEM after a compile error's log. */
int cache_compile_stream(Stream *st, int arch, FILE *out);

/* ---- lanes.c: the lane a stream runs on ------------------------------- */
enum Device { DEV_AUTO, DEV_CUDA, DEV_CPU };
/* logos-fuse's defaults; rows from the context the states hold. */
void fuse_defaults(FuseOpts *o, long ctx);
/* The lane for --device (fusing programs without plans under fo); NULL
 * with *status after a message. */
Lane *lane_choose(Stream *st, int device, const FuseOpts *fo, int quiet, int *status);
/* Do st->tp's --tp, --rank and --devices fit the stream's chips? 0, or
 * EXIT_INPUT after a message. */
int tp_fits(const Stream *st);

/* ---- import*.c: checkpoints to a spec and weight files (import.h inside) -- */
typedef struct ImportOpts {
    const char *in, *out;   /* a Hugging Face folder or a .gguf; the output folder */
    int fmt;                /* enum Fmt of the classes a spec may quantize */
    long ctx;               /* the spec's ctx; 0: min(the model's, 4096) */
    int rewrite_rope;       /* put interleaved q/k rows back to halves */
    int quiet;              /* no summary line */
} ImportOpts;
/* Writes OUT/spec.yaml and every weight file its decode step declares, each
 * atomically; 0 or an exit status after a message. */
int import_run(const ImportOpts *o);
/* The fuzzers' entry points: parse a safetensors or GGUF file image, or a
 * config.json, held in buf (the last two on to the spec and the decode
 * step authored from it); 0 or an exit status. */
int import_st_header(const unsigned char *buf, size_t len);
int import_gguf_header(const unsigned char *buf, size_t len);
int import_config(const unsigned char *buf, size_t len);   /* a config.json's bytes */

/* ---- tok*.c: tokenizers, text to ids and back (tok.h inside) ----------- */
typedef struct Tokenizer Tokenizer;
typedef struct TokIds {
    int32_t *v;           /* malloc'd */
    int n, cap;
} TokIds;
/* Reads the tokenizer at path: a folder holding tokenizer.json or
 * tokenizer.gguf, such a file, or any .gguf file. NULL after a message
 * naming the file (bad input), or exit(EXIT_SYSTEM) when out of memory. */
Tokenizer *tok_load(Arena *a, const char *path);
/* Lets go of what the tokenizer holds outside its arena (compiled regexes,
 * scratch buffers); the arena frees the rest. */
void tok_free(Tokenizer *t);
int tok_vocab(const Tokenizer *t);          /* ids 0 .. tok_vocab - 1 */
const char *tok_kind(const Tokenizer *t);   /* "byte-level BPE", "SentencePiece BPE" */
/* The piece of id as the vocabulary spells it; NULL for an id no piece has. */
const char *tok_piece(const Tokenizer *t, int id, size_t *n);
/* Writes `ID<TAB>PIECE` and a newline: the piece with \\, \n, \t, \r, other
 * control characters and bytes outside UTF-8 escaped (\xNN). */
void tok_show(FILE *f, const Tokenizer *t, int id);
/* Appends the ids of text[0..n), which must be valid UTF-8, to out. special:
 * special tokens written in the text encode as themselves; bare: without
 * the ids the post-processor's template adds (BOS). */
void tok_encode(Tokenizer *t, const char *text, size_t n, int special, int bare, TokIds *out);
/* The offset of the first byte of s[0..n) that is not valid UTF-8, or n. */
size_t utf8_valid(const char *s, size_t n);
/* Decoding as a stream: each id's text is written as soon as it is
 * complete (bytes of an unfinished UTF-8 sequence, and a SentencePiece
 * vocabulary's run of byte tokens, wait for what ends them). */
typedef struct TokDec TokDec;
TokDec *tok_dec_new(const Tokenizer *t, int special);   /* special: write special tokens too */
/* 0, or -1 when id is not in the vocabulary (nothing written). */
int tok_dec_push(TokDec *d, int32_t id, FILE *out);
void tok_dec_end(TokDec *d, FILE *out);   /* writes what was held; ready for a new text */
void tok_dec_free(TokDec *d);
/* logos-import's part: the tokenizer of checkpoint in (DIR/tokenizer.json,
 * or a GGUF's tokenizer.ggml.* keys), checked before OUT is touched, then
 * written beside spec.yaml (OUT/tokenizer.json or OUT/tokenizer.gguf). */
typedef struct TokImport {
    const char *from;     /* the file it comes from; NULL: the checkpoint has none */
    const char *name;     /* "tokenizer.json" or "tokenizer.gguf" */
    char *bytes;          /* what is written (in the arena) */
    size_t len;
    const char *kind;
    int vocab;
} TokImport;
int tok_import_find(Arena *a, const char *in, TokImport *ti);    /* 0 or EXIT_INPUT */
int tok_import_write(Arena *a, const TokImport *ti, const char *outdir);   /* 0 or EXIT_SYSTEM */

#endif
