/* import.h — what the files of logos-import share (import.c, import_st.c,
 * import_gguf.c, import_cfg.c, import_spec.c, import_map.c, import_write.c):
 * a checkpoint's tensors as they lie in their files, the model's
 * configuration read from config.json or GGUF metadata, and how a LOGOS
 * weight is found among the tensors. */
#ifndef IMPORT_H
#define IMPORT_H

#include <sys/stat.h>

#include "logos.h"

/* Element types of source tensors. Q8_0 is GGUF's 34-byte block (an f16
 * scale then 32 int8 quants). DT_OTHER is a type that can't be read: its
 * spelling is in Tensor.dtname. */
enum { DT_F32, DT_F16, DT_BF16, DT_Q8_0, DT_OTHER };

typedef struct Tensor {
    const char *name;
    const char *dtname;   /* "BF16", "Q4_K (12)" */
    int dtype;
    int rank;
    long d[LOGOS_MAXRANK];   /* row-major: d[rank-1] varies fastest */
    const char *file;        /* the file holding it, for messages */
    int fd;
    uint64_t off, nbytes;    /* absolute offset in the file, length */
} Tensor;

/* Model families: how a checkpoint's names and config map to a spec. */
enum Family { FAM_LLAMA, FAM_MISTRAL, FAM_QWEN2, FAM_QWEN3, FAM_GEMMA2, FAM_GPTOSS, FAM_DEEPSEEK2, FAM_QWEN3NEXT,
              FAM_LFM2, FAM_COUNT };

/* The rope of one kind of layer. */
typedef struct CRope {
    double theta;
    int scaling;                      /* enum Scaling */
    double factor, low, high, beta_fast, beta_slow, attn_factor;
    long orig;
    int truncate;                     /* yarn: ramp ends rounded (transformers' default) */
    double mscale_all;                /* DeepSeek's mscale_all_dim: the softmax scale's yarn factor */
} CRope;

/* A model's configuration, from config.json or GGUF metadata. */
typedef struct Cfg {
    int family;
    const char *name;                 /* sanitized */
    long vocab, dim, layers, heads, kv_heads, head_dim, hidden, ctx;
    long rot;                         /* rotated values of a head; 0: all */
    double eps;
    CRope rope[2];                    /* [0] full attention layers, [1] sliding */
    int tied;
    long window;                      /* sliding window of the sliding layers */
    char *sliding;                    /* layers entries: 1 for a sliding layer */
    char *mixer;                      /* layers entries: enum Mixer (NULL: all attention) */
    char *moe;                        /* layers entries: 1 for a mixture (NULL: gpt-oss's all, else none) */
    double attn_softcap, final_softcap, scale, embed_scale;
    int norm_offset, sandwich, act;
    int q_bias, k_bias, v_bias, o_bias, qk_norm, sinks;
    int out_gate;                     /* Qwen3-Next: a gate per head after the query */
    long q_lora, kv_lora, nope, rope_dim, v_dim;   /* latent attention */
    double latent_scale;              /* its softmax scale; 0: the spec's default */
    long dk_heads, dv_heads, dk_dim, dv_dim, dconv; /* the gated delta rule */
    long conv_kernel;                 /* the short convolution */
    int conv_bias;
    long experts, top_k, moe_hidden;
    int moe_norm;                     /* the kept weights renormalized */
    double moe_scale;                 /* routed scaling factor; 0: 1 */
    long groups, topk_groups;         /* group-limited routing; 0: none */
    long shared_hidden;               /* the shared expert's width; 0: none */
    int shared_gate;
    double oai_alpha, oai_limit;
    int interleaved;                  /* q/k rows in llama.cpp's interleaved order */
    int paired;                       /* rotary pairs are neighbours in the checkpoint itself (DeepSeek) */
    int unpermute;                    /* --rewrite-rope: put them back to halves */
} Cfg;

/* An opened checkpoint: its tensors and configuration. */
typedef struct Ckpt {
    Arena *a;
    const char *path;                 /* as the user gave it */
    const char *cfgfile;              /* "DIR/config.json" or the .gguf, for messages */
    int gguf;
    Tensor *t; int nt, ct;
    int *fds; int nfds, cfds;
    Cfg cfg;
} Ckpt;

/* Reports an input problem as `logos-import: file: message` and returns
 * EXIT_INPUT. */
int imp_fail(const char *file, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same for a system failure; returns EXIT_SYSTEM. */
int imp_sysfail(const char *file, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Opens a checkpoint file for reading, kept open (and closed) with the
 * checkpoint, its stat in *sb; the descriptor, or -1 after a message. */
int ckpt_open(Ckpt *c, const char *path, struct stat *sb);
const Tensor *ckpt_find(const Ckpt *c, const char *name);
Tensor *ckpt_add(Ckpt *c);
const char *shape_str(Arena *a, int rank, const long *d);
long dtype_size(int dtype);   /* bytes per value; Q8_0: per block of 32 */

/* import_st.c: a Hugging Face folder's safetensors (one file, or shards named
 * by model.safetensors.index.json). */
int st_open_dir(Ckpt *c, const char *dir);
/* Parses a safetensors image's header (buf holds at least the 8-byte length
 * and the header; size is the whole file's), adding tensors with fd. */
int st_parse(Ckpt *c, const char *file, int fd, const unsigned char *buf, size_t len, uint64_t size);

/* import_gguf.c: a GGUF file (versions 2 and 3): tensors and metadata. */
int gguf_open(Ckpt *c, const char *path);
/* Parses a GGUF image (the whole file) into c's tensors and configuration. */
int gguf_parse(Ckpt *c, const char *file, int fd, const unsigned char *buf, size_t len);

/* import_cfg.c: config.json to Cfg. */
int cfg_from_json(Ckpt *c, const char *dir);
/* The same from config.json open as f, named path, of folder dir. */
int cfg_from_file(Ckpt *c, FILE *f, const char *path, const char *dir);
/* Common defaults and checks after either reader. */
int cfg_finish(Ckpt *c, long ctx);
const char *family_name(int fam);
const char *sanitize_name(Arena *a, const char *s);

/* import_spec.c: the spec text of a Cfg. */
char *cfg_spec_yaml(Arena *a, const Cfg *g, int fmt);

/* import_map.c: where a LOGOS weight comes from. */

enum Xform {
    X_PLAIN,      /* same values, same order */
    X_UNPERM,     /* rows of each head back from interleaved pairs to halves */
    X_HALF,       /* [E, 2n] -> [E, n]: every other value from `parity` */
    X_GU_T,       /* [E, d, 2n] -> [E, n, d]: columns of `parity`, transposed */
    X_T,          /* [E, a, b] -> [E, b, a] */
    X_ROWS,       /* rows [at, at+n) of each group of `group` rows */
    X_UNIT,       /* the same values with a unit axis at 1: [C, 1, K] -> [C, K] */
    X_EXPERTS     /* [E, a, b] from one [a, b] tensor an expert */
};
typedef struct Source {
    const Tensor *t;
    int xform, parity;
    long hd;                 /* X_UNPERM: rows per head */
    long group, at, n;       /* X_ROWS */
    const Tensor **parts;    /* X_EXPERTS: each expert's tensor */
    long nparts;
} Source;
/* Finds the tensor of LOGOS weight `name` with shape (rank, d); checks its
 * type and shape. 0 or EXIT_INPUT after a message. */
int map_weight(const Ckpt *c, const char *name, int rank, const long *d, Source *src);

/* import_write.c: streams a source into a weight's files, each atomically. */
int write_weight(const char *outdir, const char *name, int q8, int rank, const long *d, const Source *src);
/* Reads values [at, at+n) of a tensor (in its own order) as f32. */
int read_f32(const Tensor *t, uint64_t at, long n, float *out);

#endif
