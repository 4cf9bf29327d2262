/* cuda_lane.h — what cuda_lane.c (the lane) and cuda_bench.c (logos-bench's
 * measurements on it) share: the lane's state, a plan ready to launch. */
#ifndef CUDA_LANE_H
#define CUDA_LANE_H

#include "cu.h"

typedef struct LParams {
    void *a[KMAXP];      /* kernels/common.cuh's MAXPARAMS */
} LParams;

typedef struct DBuf {
    const char *name;
    CUdeviceptr p;
    long bytes;
    int etype;
    void *host;          /* fetch's copy */
} DBuf;

typedef struct Rt {      /* a plan, ready to launch */
    Plan *pl;
    CUdeviceptr *ptr;    /* each buffer's address */
    int *kern;           /* each launch's kernel (index in the lane's) */
    LParams *params;
    CUgraphExec graph;
    int eager;           /* the graph could not be made: launches one by one */
} Rt;

typedef struct CudaLane {
    Lane lane;
    Arena *a;
    Stream *st;
    CuDevice dev;
    CUstream stream;
    StrMap *names;       /* a named buffer's index in bufs */
    DBuf *bufs; int nbufs, cbufs;
    CUdeviceptr *owned; int nowned, cowned;   /* every allocation, for close */
    CUdeviceptr pool;
    Rt *rt;
    StrMap *srcs;        /* an instantiation's source -> its index in kerns */
    CuKernel *kerns; int nkerns, ckerns;
    KJob *jobs; int njobs, cjobs;
    int synth[2];        /* the synthetic weights' kernels (f32, q8), -1 until asked for */
    int pdl;             /* launches with programmatic dependent launch */
    const char *pdl_skip;   /* LOGOS_PDL_SKIP: kernels launched without it, or NULL */
    const char *twice;      /* LOGOS_TWICE: kernels launched twice (timing), or NULL */
    int poison;          /* LOGOS_POISON: outputs and temporaries filled with NaN before each run */
    int runs;            /* runs so far, LOGOS_TRACE's numbering */
    long poolsize;
    double compile_s;    /* time spent compiling and loading */
    int rd_kern;         /* logos-bench's streaming read (-1 until asked for), its buffer and sink */
    CUdeviceptr rd_buf, rd_sink;
    long rd_words;
    int compiled;        /* instantiations compiled now (not from the cache) */
    int rank, chips;     /* a chip of a split stream (cuda_tp.c): its rank of chips; chips 0: not split */
    int marks;           /* plan kernels compiled with the timeline's marks (LOGOS_TIMELINE, --timeline) */
    CUdeviceptr tl;      /* logos-bench --timeline's records (kernels/common.cuh's logos_tl), or 0 */
    void *comm;          /* its NCCL communicator, or NULL */
} CudaLane;


int lane_launch(CudaLane *c, Rt *rt, int i, int pdl);   /* launch i of a plan on the lane's stream */
int lane_kernel(CudaLane *c, char *src, const char *name, const char *file);   /* queue an instantiation */
int lane_load(CudaLane *c);                             /* compile or read the queued ones */
/* The lane on GPU `ordinal`, its context current on the calling thread;
 * NULL with *status set after a message. */
CudaLane *cuda_lane_new(int ordinal, int *status);

/* ---- cuda_tp.c: the chips of a split stream, one GPU each ---- */
/* Launch i of a plan (i == nls: none), after the plan's collectives that
 * run before it: NCCL calls on the lane's stream (captured into its graph
 * with the launches). The launch after a collective waits for it whole. */
int lane_step(CudaLane *c, Rt *rt, int i, int pdl);

#endif
