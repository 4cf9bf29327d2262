/* logos.h — liblogos's one internal header: a section per file of lib/,
 * listing what that file exports. Tools in cmd/ include this alone. */
#ifndef LOGOS_H
#define LOGOS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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
/* Flushes stdout: status unchanged, or EXIT_SYSTEM after a message. */
int stdout_done(int status);
/* Read a whole file (or stdin for "-") into the arena; NULL and a message on
 * failure. Stops at the first NUL byte (binary input, /dev/zero) with a
 * located message, and past LOGOS_MAXINPUT bytes. */
#define LOGOS_MAXINPUT (256L << 20)
Src *src_read(Arena *a, const char *path);
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
/* With status 0 renames the temporary into place, else removes it; returns
 * the status, EXIT_SYSTEM when the file could not be completed. */
int outfile_close(OutFile *o, int status);
/* Writes text to path whole (stdout when path is NULL). */
int outfile_whole(const char *path, const char *text, size_t len);

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
#define X(id, name, amin, amax, kind, fuse, attrs, state, shape) OP_##id,
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
    int state;
} OpInfo;
extern const OpInfo op_info[OP_COUNT];
int op_lookup(const char *name);   /* a callable op's index, or -1 */
int op_callable(int op);           /* written as a call, name(args, attrs) */

/* ---- types ----------------------------------------------------------- */
enum Base { T_NONE, T_F32, T_I32, T_Q8 };
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
} Expr;

enum DeclKind { D_SIZE, D_IN, D_WEIGHT, D_STATE, D_OUT };
typedef struct Decl {
    int kind, line, col;
    const char *name;
    int base, rank;
    const char *dims[LOGOS_MAXRANK];
    int unpair_hd, unpair_rot, unpair_at;   /* rows bound through the rope pairing permutation */
    char **pre; int npre;        /* full-line comments before it */
    const char *trail;           /* a comment after it on its line */
} Decl;

enum StmtKind { S_ASSIGN, S_WRITE };
typedef struct Stmt {
    int kind, line, col;
    const char *name;
    Expr *index;      /* S_WRITE: the row or rows written (positions) */
    Expr *value;
    char **pre; int npre;
    const char *trail;
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
    Decl *decls; int ndecls, cdecls;
    Stmt *stmts; int nstmts, cstmts;
    char **endpre; int nendpre;
    const char *endtrail;
    char **post; int npost;  /* comments after the stream's last end */
    Sym *syms; int nsyms, csyms;   /* filled by check.c */
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
/* 1: a form author() writes (has_layer: it takes a layer index); -1: a
 * tensor-parallel form, not written yet; 0: no such form. */
int author_form_info(const char *name, int *has_layer);
const char *author_forms(void);   /* the form names, space-separated */
/* Writes FORM (with layer l, batch rows B where the form has them) to out:
 * the programs in canonical form (each checked), or with manifest their
 * weights as lines `NAME FORMAT COUNT FILE [FILE]`. stacked_layer takes
 * batch rows when batch > 0, else the rows of one sequence. layer_input and
 * stacked_layer_input print a name. Returns 0 or EXIT_INPUT after a message. */
int author(Arena *a, const Spec *s, const char *form, int l, int batch, int manifest, FILE *out);

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
float f16_to_f32(uint16_t h);
uint16_t f32_to_f16(float f);
/* Q8_0 by round-to-nearest, d = amax/127 per 32 values: n a multiple of 32. */
void q8_quantize(const float *x, long n, int8_t *q, uint16_t *s);
void q8_dequantize(const int8_t *q, const uint16_t *s, long n, float *x);
/* Row r of a weight as f32 (dequantized for q8); out holds cols values. */
void buf_row(const Buf *w, long r, float *out);

/* ---- weights.c: weight files and synthetic weights ---------------------- */
typedef struct Weights Weights;   /* mmapped files, freed with weights_close */
/* Binds every weight a program declares into env: from DIR (each file checked
 * against its declaration before anything runs) or, when dir is NULL,
 * synthetic values from seed. Weights already in env are kept. Returns 0, or
 * reports and returns EXIT_INPUT / EXIT_SYSTEM. */
int weights_bind(Weights **w, const Prog *p, Env *env, const char *dir, uint64_t seed);
void weights_close(Weights *w);
/* Writes every weight of the program (synthetic from seed) into dir, each
 * file atomically. Returns 0 or an exit status. */
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
/* The deterministic synthetic f32 values of a named weight (n values). */
void weights_synth(const char *name, int rank, const long *d, uint64_t seed, float *out);

/* ---- ref.c: the CPU reference executor ----------------------------------- */
/* Runs a checked program once against env: inputs and weights must be bound
 * (sizes are taken from the inputs), states are created zeroed on first use
 * and kept in env between runs; outputs are left in env under their names.
 * Returns 0, or reports a located error and returns EXIT_INPUT (a position
 * past a state's rows, a token past a table, a missing input). */
int ref_run(const Prog *p, Env *env);

/* ---- run.c: generating over a stream ------------------------------------ */
enum Phase { PH_CHUNK, PH_STEP, PH_BATCH, PH_COUNT };
typedef struct Prompt {
    int32_t *ids;
    int n;
} Prompt;
typedef struct Stream {
    Arena *a;
    const char *src;          /* the stream's file name, for messages */
    Prog **progs; int nprogs, cprogs;
    int has[PH_COUNT];        /* filled by run_plan */
    long vocab, ctx;          /* rows of the token table and of the states written by position; -1 unknown */
    int batch;                /* sequences of a batch phase */
    int batched;              /* a program reads pos_s0: the stream is a batch's */
    FILE *logits;             /* every step's logits, raw f32, or NULL */
    Weights **weights;        /* one binding per program, from stream_bind */
    long generated;           /* tokens generated so far */
} Stream;
/* Reads and checks every program of the stream at path; 0 or EXIT_INPUT. */
int stream_load(Arena *a, const char *path, Stream *st);
/* Sorts the stream's programs into phases; 0 or EXIT_INPUT. */
int run_plan(Stream *st);
/* Runs the prompts (one, or one per sequence of a batch) and generates ngen
 * tokens greedily, printing them to out. 0 or an exit status. */
int run_generate(Stream *st, Env *env, const Prompt *prompts, int nprompts, int ngen, FILE *out);
/* Binds every program's weights into env (files checked before anything
 * runs); 0 or an exit status. stream_close lets them go. */
int stream_bind(Stream *st, Env *env, const WeightsArg *w);
void stream_close(Stream *st);
/* One decode step of the stream's step programs: token tok at position pos;
 * the next token out. 0 or an exit status. */
int run_step(Stream *st, Env *env, int32_t tok, int32_t pos, int32_t *next);

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
/* The fuzzers' entry points: parse a safetensors or GGUF file image held in
 * buf; 0 or EXIT_INPUT. */
int import_st_header(const unsigned char *buf, size_t len);
int import_gguf_header(const unsigned char *buf, size_t len);

#endif
