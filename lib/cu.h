/* cu.h — the CUDA driver API as the lane uses it (opened with dlopen by
 * cuda.c, so no toolkit header is needed to build): opaque handles, the
 * entry points, the checked call CK, the device's facts; and the kernel
 * cache (cache.c) and the lane (cuda_lane.c) that cuda.c serves. */
#ifndef CU_H
#define CU_H

#include <stddef.h>
#include <stdint.h>

#include "logos.h"

typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;
typedef unsigned long long CUdeviceptr;

/* cuLaunchKernelEx's configuration, as cuda.h lays it out (CUDA 12, 13). */
typedef struct CuLaunchAttr {
    int id;
    char pad[4];
    union {
        char bytes[64];
        int value;
        unsigned dim[3];   /* a cluster's x, y, z */
    } v;
} CuLaunchAttr;
typedef struct CuLaunchConfig {
    unsigned gx, gy, gz, bx, by, bz, smem;
    CUstream stream;
    CuLaunchAttr *attrs;
    unsigned nattrs;
} CuLaunchConfig;
enum { CU_ATTR_CLUSTER_DIMENSION = 4, CU_ATTR_PROGRAMMATIC_SERIALIZATION = 6, CU_FUNC_MAX_DYNAMIC_SMEM = 8,
       CU_FUNC_NON_PORTABLE_CLUSTER = 14 };

typedef struct Cu {
    void *lib;
    int tried, ok;
    char why[256];
    CUresult (*Init)(unsigned);
    CUresult (*DriverGetVersion)(int *);
    CUresult (*DeviceGet)(CUdevice *, int);
    CUresult (*DeviceGetCount)(int *);
    CUresult (*DeviceGetAttribute)(int *, int, CUdevice);
    CUresult (*DeviceGetName)(char *, int, CUdevice);
    CUresult (*PrimaryCtxRetain)(CUcontext *, CUdevice);
    CUresult (*CtxSetCurrent)(CUcontext);
    CUresult (*ModuleLoadData)(CUmodule *, const void *);
    CUresult (*ModuleUnload)(CUmodule);
    CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
    CUresult (*ModuleGetGlobal)(CUdeviceptr *, size_t *, CUmodule, const char *);
    CUresult (*FuncSetAttribute)(CUfunction, int, int);
    CUresult (*MemAlloc)(CUdeviceptr *, size_t);
    CUresult (*MemFree)(CUdeviceptr);
    CUresult (*MemGetInfo)(size_t *, size_t *);
    CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
    CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
    CUresult (*MemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
    CUresult (*MemsetD8)(CUdeviceptr, unsigned char, size_t);
    CUresult (*StreamCreate)(CUstream *, unsigned);
    CUresult (*StreamDestroy)(CUstream);
    CUresult (*StreamSynchronize)(CUstream);
    CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             CUstream, void **, void **);
    CUresult (*LaunchKernelEx)(const CuLaunchConfig *, CUfunction, void **, void **);
    CUresult (*StreamBeginCapture)(CUstream, int);
    CUresult (*StreamEndCapture)(CUstream, CUgraph *);
    CUresult (*GraphInstantiate)(CUgraphExec *, CUgraph, unsigned long long);
    CUresult (*GraphLaunch)(CUgraphExec, CUstream);
    CUresult (*GraphDestroy)(CUgraph);
    CUresult (*GraphExecDestroy)(CUgraphExec);
    CUresult (*EventCreate)(CUevent *, unsigned);
    CUresult (*EventDestroy)(CUevent);
    CUresult (*EventRecord)(CUevent, CUstream);
    CUresult (*EventSynchronize)(CUevent);
    CUresult (*EventElapsedTime)(float *, CUevent, CUevent);
    CUresult (*GetErrorName)(CUresult, const char **);
    CUresult (*GetErrorString)(CUresult, const char **);
    /* cuTensorMapEncodeTiled (CUDA 12+): map, data type, rank, address,
     * sizes, strides (rank - 1, bytes), box, element strides, interleave,
     * swizzle, L2 promotion, out-of-bounds fill; the map is 128 bytes */
    CUresult (*TensorMapEncodeTiled)(void *, int, unsigned, void *, const uint64_t *, const uint64_t *,
                                     const unsigned *, const unsigned *, int, int, int, int);
} Cu;
extern Cu cu;

/* Opens the driver and finds a device: NULL, or why the lane cannot run. */
const char *cu_open(void);
/* Reports a failed call (its text, the driver's name and words for r). */
int cu_fail(const char *call, int r, const char *file, int line);
/* Every driver call goes through CK: on failure it reports and returns EXIT_SYSTEM. */
#define CK(call) do { CUresult ck_ = (call); if (ck_) return cu_fail(#call, ck_, __FILE__, __LINE__); } while (0)

typedef struct CuDevice {
    CUdevice dev;
    CUcontext ctx;
    int major, minor, sms, smem_optin;
    char name[128];
} CuDevice;
int cu_device(CuDevice *d, int ordinal);   /* 0 or EXIT_SYSTEM; the context made current */

/* ---- cache.c: kernels compiled once, kept on disk ---- */
/* A compiled instantiation, loaded: its module and function. */
typedef struct CuKernel {
    CUmodule mod;
    CUfunction fn;
    int compiled;        /* compiled now rather than read from the cache */
    int regs;
    long stack, spill;
} CuKernel;
/* One kernel to load: the source NVRTC compiles, the function's name. */
typedef struct KJob {
    char *src;           /* malloc'd source (kernel_source or a lane kernel's) */
    const char *name, *file;
    const char *consts;  /* for reports: the constants that are not 0 */
    CuKernel *out;
    Cubin cubin;
    int status;          /* 0, or an exit status after the job ran */
} KJob;
/* Compiles (in parallel, on threads) or reads from the cache each job's
 * cubin for sm_<arch>, then loads it: 0, or an exit status after printing
 * the kernel's name and NVRTC's log. */
int cache_load(KJob *jobs, int n, int arch);
/* The cache's folder: $XDG_CACHE_HOME/logos or ~/.cache/logos. */
const char *cache_dir(void);
/* The key of a source for arch: XXH3-128 of the source, options, arch,
 * NVRTC's version and the tools' version, as 32 hex digits in out[33]. */
void cache_key(const char *src, int arch, char *out);

/* ---- nccl.c: NCCL opened with dlopen (nccl_why in logos.h opens it) ---- */
/* Every call is checked: 0, or EXIT_SYSTEM after a message with NCCL's words. */
int nccl_version(void);   /* 10000 major + 100 minor + patch, or 0 */
/* Communicators for n GPUs of this process, comms[i] on devices[i]. */
int nccl_init_all(void **comms, int n, const int *devices);
/* This process's one communicator, rank `rank` of n, on the current GPU:
 * the unique id from rank 0 through idfile (rank 0 writes it, the others
 * wait for it), or with idfile NULL from NCCL_COMM_ID on every rank. */
int nccl_init_rank(void **comm, int n, int rank, const char *idfile);
int nccl_allreduce(void *comm, CUdeviceptr x, CUdeviceptr y, long n, CUstream s);   /* f32 sum */
/* y's rows (cols × ranks each) from x's rows (cols each), rank-major in a row. */
int nccl_allgather(void *comm, CUdeviceptr x, CUdeviceptr y, long rows, long cols, int ranks, CUstream s);
void nccl_close(void *comm);

#endif
