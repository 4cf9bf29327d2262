/* nccl.c — NCCL opened with dlopen, as cuda.c opens the driver, so that the
 * tools build and run where it is absent: the library is LOGOS_NCCL when
 * set, else libnccl.so.2 by the usual search, the CUDA toolkit's, or the
 * one a Python environment's nvidia-nccl wheel brings (PyTorch's); the few
 * entry points a split plan needs (communicators for the chips of one
 * process or one rank of many, sum and gather of f32 on a stream), each
 * checked; and the rendezvous of one process per GPU: rank 0's unique id
 * through a file the ranks share, or NCCL's own NCCL_COMM_ID. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cu.h"

typedef int ncclResult_t;
typedef struct ncclComm *ncclComm_t;
enum { NCCL_ID_BYTES = 128, NCCL_FLOAT32 = 7, NCCL_SUM = 0 };
typedef struct {
    char internal[NCCL_ID_BYTES];
} ncclUniqueId;

static struct {
    void *lib;
    int tried;
    char why[512];
    ncclResult_t (*version)(int *);
    ncclResult_t (*unique_id)(ncclUniqueId *);
    ncclResult_t (*init_all)(ncclComm_t *, int, const int *);
    ncclResult_t (*init_rank)(ncclComm_t *, int, ncclUniqueId, int);
    ncclResult_t (*destroy)(ncclComm_t);
    ncclResult_t (*allreduce)(const void *, void *, size_t, int, int, ncclComm_t, CUstream);
    ncclResult_t (*allgather)(const void *, void *, size_t, int, ncclComm_t, CUstream);
    ncclResult_t (*group_start)(void);
    ncclResult_t (*group_end)(void);
    const char *(*error)(ncclResult_t);
    const char *(*last_error)(ncclComm_t);
} nc;

/* Where a Python environment's nvidia-nccl wheel puts the library: asked of
 * $PYTHON (default python3), the one place the search runs a program. */
static void *from_python(void)
{
    const char *py = getenv("PYTHON");
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "%s -c 'import site, sys; print(\"\\n\".join(site.getsitepackages() + [site.getusersitepackages()]))' "
             "2>/dev/null", py && *py ? py : "python3");
    FILE *f = popen(cmd, "r");
    if (!f)
        return NULL;
    void *lib = NULL;
    char dir[4096];
    while (!lib && fgets(dir, sizeof dir, f)) {
        dir[strcspn(dir, "\n")] = 0;
        char path[4200];
        snprintf(path, sizeof path, "%s/nvidia/nccl/lib/libnccl.so.2", dir);
        if (access(path, R_OK) == 0)
            lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    }
    pclose(f);
    return lib;
}

static void *find(void)
{
    const char *own = getenv("LOGOS_NCCL");
    if (own && *own) {
        void *lib = dlopen(own, RTLD_NOW | RTLD_LOCAL);
        if (!lib)
            snprintf(nc.why, sizeof nc.why, "LOGOS_NCCL names a library that does not open: %s", dlerror());
        return lib;
    }
    static const char *names[] = {"libnccl.so.2", "libnccl.so", "/usr/local/cuda/lib64/libnccl.so.2",
                                  "/usr/local/cuda/lib/libnccl.so.2", NULL};
    void *lib = NULL;
    for (int i = 0; names[i] && !lib; i++)
        lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        lib = from_python();
    if (!lib)
        snprintf(nc.why, sizeof nc.why, "no NCCL (libnccl.so.2 is not installed, nor in Python's nvidia/nccl/lib; "
                 "LOGOS_NCCL names one elsewhere)");
    return lib;
}

static void *sym(const char *name)
{
    void *p = dlsym(nc.lib, name);
    if (!p && !nc.why[0])
        snprintf(nc.why, sizeof nc.why, "the NCCL library has no %s", name);
    return p;
}

#define SYM(f, name) (*(void **)&nc.f = sym(name))

const char *nccl_why(void)
{
    if (nc.tried)
        return nc.lib ? NULL : nc.why;
    nc.tried = 1;
    if (!(nc.lib = find()))
        return nc.why;
    SYM(version, "ncclGetVersion"); SYM(unique_id, "ncclGetUniqueId"); SYM(init_all, "ncclCommInitAll");
    SYM(init_rank, "ncclCommInitRank"); SYM(destroy, "ncclCommDestroy"); SYM(allreduce, "ncclAllReduce");
    SYM(allgather, "ncclAllGather"); SYM(group_start, "ncclGroupStart"); SYM(group_end, "ncclGroupEnd");
    SYM(error, "ncclGetErrorString"); SYM(last_error, "ncclGetLastError");
    if (nc.why[0]) {
        dlclose(nc.lib);
        nc.lib = NULL;
        return nc.why;
    }
    return NULL;
}

int nccl_version(void)
{
    int v = 0;
    return nccl_why() || nc.version(&v) ? 0 : v;
}

/* Reports a failed call: its text, NCCL's words for r and its last error. */
static int fail(const char *call, ncclResult_t r, ncclComm_t comm, const char *file, int line)
{
    const char *last = nc.last_error ? nc.last_error(comm) : NULL;
    diag("nccl: %s: %s%s%s [%s:%d]", call, nc.error ? nc.error(r) : "failed", last && *last ? ": " : "",
         last ? last : "", file, line);
    return EXIT_SYSTEM;
}

#define NK(call, comm) do { ncclResult_t nk_ = (call); if (nk_) return fail(#call, nk_, (comm), __FILE__, __LINE__); } while (0)

int nccl_init_all(void **comms, int n, const int *devices)
{
    NK(nc.init_all((ncclComm_t *)comms, n, devices), NULL);
    return 0;
}

/* ---- one process per GPU: the rendezvous ---- */

/* Rank 0 writes the id beside the file and renames it into place, so a
 * reader sees all of it or none. */
static int put_id(const char *path, const ncclUniqueId *id)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f || fwrite(id, sizeof *id, 1, f) != 1 || fclose(f) != 0 || rename(tmp, path) != 0) {
        diag_file(path, "cannot write the NCCL id: %s", strerror(errno));
        if (f)
            remove(tmp);
        return EXIT_SYSTEM;
    }
    return 0;
}

/* The other ranks wait for it: LOGOS_NCCL_WAIT seconds (default 300). */
static int get_id(const char *path, ncclUniqueId *id)
{
    const char *w = getenv("LOGOS_NCCL_WAIT");
    long wait = w && *w ? strtol(w, NULL, 10) : 300;
    for (long ms = 0;; ms += 100) {
        FILE *f = fopen(path, "rb");
        if (f) {
            size_t got = fread(id, sizeof *id, 1, f);
            fclose(f);
            if (got == 1)
                return 0;
            diag_file(path, "not an NCCL id (%d bytes)", NCCL_ID_BYTES);
            return EXIT_SYSTEM;
        }
        if (errno != ENOENT || ms >= wait * 1000) {
            diag_file(path, "no NCCL id from rank 0 after %ld s: %s", ms / 1000, strerror(errno));
            return EXIT_SYSTEM;
        }
        nanosleep(&(struct timespec){0, 100000000L}, NULL);
    }
}

int nccl_init_rank(void **comm, int n, int rank, const char *idfile)
{
    ncclUniqueId id;
    int s = 0;
    if (!idfile || rank == 0)   /* NCCL_COMM_ID makes it on every rank alike; else rank 0 makes it */
        NK(nc.unique_id(&id), NULL);
    if (idfile)
        s = rank == 0 ? put_id(idfile, &id) : get_id(idfile, &id);
    if (s)
        return s;
    NK(nc.init_rank((ncclComm_t *)comm, n, id, rank), NULL);
    return 0;
}

/* ---- the collectives ---- */

int nccl_allreduce(void *comm, CUdeviceptr x, CUdeviceptr y, long n, CUstream s)
{
    NK(nc.allreduce((const void *)(uintptr_t)x, (void *)(uintptr_t)y, (size_t)n, NCCL_FLOAT32, NCCL_SUM, comm, s), comm);
    return 0;
}

/* Each of rows rows of x (cols values) joined with every rank's along the
 * row in rank order: one gather a row, the rows in one group. */
int nccl_allgather(void *comm, CUdeviceptr x, CUdeviceptr y, long rows, long cols, int ranks, CUstream s)
{
    NK(nc.group_start(), comm);
    for (long t = 0; t < rows; t++)
        NK(nc.allgather((const void *)(uintptr_t)(x + (CUdeviceptr)(4 * t * cols)),
                        (void *)(uintptr_t)(y + (CUdeviceptr)(4 * t * cols * ranks)), (size_t)cols, NCCL_FLOAT32, comm,
                        s), comm);
    NK(nc.group_end(), comm);
    return 0;
}

void nccl_close(void *comm)
{
    if (comm && nc.destroy)
        nc.destroy(comm);
}
