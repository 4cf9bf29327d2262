/* nvrtc.c — NVRTC opened with dlopen (the tools run where the toolkit is
 * absent): compiles a kernel instantiation's source to a cubin for one
 * architecture, with ptxas's resource report (registers, spills, stack
 * frame) parsed from the log. Every call is checked; a failed compile keeps
 * the whole log for the caller to print. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "logos.h"

typedef int nvrtcResult;
typedef struct _nvrtcProgram *nvrtcProgram;

static struct {
    void *lib;
    nvrtcResult (*create)(nvrtcProgram *, const char *, const char *, int, const char *const *, const char *const *);
    nvrtcResult (*compile)(nvrtcProgram, int, const char *const *);
    nvrtcResult (*log_size)(nvrtcProgram, size_t *);
    nvrtcResult (*log)(nvrtcProgram, char *);
    nvrtcResult (*cubin_size)(nvrtcProgram, size_t *);
    nvrtcResult (*cubin)(nvrtcProgram, char *);
    nvrtcResult (*destroy)(nvrtcProgram *);
    const char *(*error)(nvrtcResult);
    nvrtcResult (*version)(int *, int *);
    int tried;
    char why[256];
} nv;

static void *sym(const char *name)
{
    void *p = dlsym(nv.lib, name);
    if (!p)
        snprintf(nv.why, sizeof nv.why, "libnvrtc has no %s", name);
    return p;
}

const char *nvrtc_open(void)
{
    if (nv.tried)
        return nv.lib ? NULL : nv.why;
    nv.tried = 1;
    static const char *names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so",
                                  "/usr/local/cuda/lib64/libnvrtc.so.13", "/usr/local/cuda/lib64/libnvrtc.so", NULL};
    const char *own = getenv("LOGOS_NVRTC");   /* a library elsewhere */
    if (own && *own)
        nv.lib = dlopen(own, RTLD_NOW | RTLD_LOCAL);
    for (int i = 0; names[i] && !nv.lib; i++)
        nv.lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!nv.lib) {
        snprintf(nv.why, sizeof nv.why, "NVRTC is not installed (libnvrtc.so: %s)", dlerror());
        return nv.why;
    }
    if (!(*(void **)&nv.create = sym("nvrtcCreateProgram")) || !(*(void **)&nv.compile = sym("nvrtcCompileProgram")) ||
        !(*(void **)&nv.log_size = sym("nvrtcGetProgramLogSize")) || !(*(void **)&nv.log = sym("nvrtcGetProgramLog")) ||
        !(*(void **)&nv.cubin_size = sym("nvrtcGetCUBINSize")) || !(*(void **)&nv.cubin = sym("nvrtcGetCUBIN")) ||
        !(*(void **)&nv.destroy = sym("nvrtcDestroyProgram")) || !(*(void **)&nv.error = sym("nvrtcGetErrorString")) ||
        !(*(void **)&nv.version = sym("nvrtcVersion"))) {
        dlclose(nv.lib);
        nv.lib = NULL;
        return nv.why;
    }
    return NULL;
}

const char *nvrtc_options(void)
{
    return "--gpu-architecture=sm_ARCH(a from 90) -std=c++17 --ptxas-options=-v -default-device -w";
}

int nvrtc_archs(int *a, int cap)
{
    nvrtcResult (*count)(int *), (*list)(int *);
    int n = 0;
    if (nvrtc_open() || !(*(void **)&count = dlsym(nv.lib, "nvrtcGetNumSupportedArchs")) ||
        !(*(void **)&list = dlsym(nv.lib, "nvrtcGetSupportedArchs")) || count(&n) || n < 1 || n > cap || list(a))
        return 0;
    return n;
}

int nvrtc_version(void)
{
    int major = 0, minor = 0;
    if (nvrtc_open() || nv.version(&major, &minor))
        return 0;
    return major * 1000 + minor * 10;
}

/* ptxas's report: "Used N registers", "N bytes stack frame, N bytes spill
 * stores, N bytes spill loads". */
static long number_before(const char *log, const char *what)
{
    const char *p = strstr(log, what);
    if (!p)
        return 0;
    while (p > log && p[-1] == ' ')
        p--;
    while (p > log && p[-1] >= '0' && p[-1] <= '9')
        p--;
    return strtol(p, NULL, 10);
}

static long number_after(const char *log, const char *what)
{
    const char *p = strstr(log, what);
    return p ? strtol(p + strlen(what), NULL, 10) : 0;
}

static void resources(Cubin *c)
{
    c->regs = (int)number_after(c->log, "Used ");
    c->stack = number_before(c->log, "bytes stack frame");
    c->spill_st = number_before(c->log, "bytes spill stores");
    c->spill_ld = number_before(c->log, "bytes spill loads");
}

static char *take_log(nvrtcProgram prog)
{
    size_t n = 0;
    if (nv.log_size(prog, &n) || n == 0)
        return strdup("");
    char *s = malloc(n + 1);
    if (!s)
        return NULL;
    if (nv.log(prog, s))
        s[0] = 0;
    s[n] = 0;
    return s;
}

int nvrtc_compile(const char *src, const char *name, const char *header, const char *header_name, int arch,
                  Cubin *out)
{
    memset(out, 0, sizeof *out);
    const char *why = nvrtc_open();
    if (why) {
        out->log = strdup(why);
        return EXIT_SYSTEM;
    }
    nvrtcProgram prog;
    nvrtcResult r = nv.create(&prog, src, name, 1, &header, &header_name);
    if (r) {
        out->log = strdup(nv.error(r));
        return EXIT_SYSTEM;
    }
    char archopt[64];
    /* from sm_90 on, the architecture's own features too (sm_90a: wgmma,
     * mmh.cu): the cubin runs on that architecture alone, as the lane's
     * kernels are compiled for the device they run on */
    snprintf(archopt, sizeof archopt, "--gpu-architecture=sm_%d%s", arch, arch >= 90 ? "a" : "");
    const char *opts[] = {archopt, "-std=c++17", "--ptxas-options=-v", "-default-device", "-w"};
    r = nv.compile(prog, (int)(sizeof opts / sizeof opts[0]), opts);   /* nvrtc_options() spells them */
    out->log = take_log(prog);
    if (!out->log) {
        nv.destroy(&prog);
        return EXIT_SYSTEM;
    }
    if (r) {
        nv.destroy(&prog);
        return EXIT_INPUT;
    }
    size_t n = 0;
    if (nv.cubin_size(prog, &n) || !(out->data = malloc(n)) || nv.cubin(prog, out->data)) {
        nv.destroy(&prog);
        free(out->data);
        out->data = NULL;
        return EXIT_SYSTEM;
    }
    out->size = n;
    resources(out);
    nv.destroy(&prog);
    return 0;
}

void cubin_free(Cubin *c)
{
    free(c->data);
    free(c->log);
    memset(c, 0, sizeof *c);
}
