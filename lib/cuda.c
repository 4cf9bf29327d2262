/* cuda.c — the CUDA driver API opened with dlopen, so that every tool runs
 * where no driver is installed: the few entry points the lane uses, the
 * device's facts, and one checked call (a failure prints the call as it was
 * written, the driver's name and text of the error, and gives EXIT_SYSTEM). */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"

Cu cu;

static void *sym(const char *name)
{
    void *p = dlsym(cu.lib, name);
    if (!p && !cu.why[0])
        snprintf(cu.why, sizeof cu.why, "the CUDA driver has no %s", name);
    return p;
}

#define SYM(f, name) (*(void **)&cu.f = sym(name))

static int load_syms(void)
{
    SYM(Init, "cuInit"); SYM(DriverGetVersion, "cuDriverGetVersion"); SYM(DeviceGet, "cuDeviceGet");
    SYM(DeviceGetCount, "cuDeviceGetCount"); SYM(DeviceGetAttribute, "cuDeviceGetAttribute");
    SYM(DeviceGetName, "cuDeviceGetName"); SYM(PrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    SYM(CtxSetCurrent, "cuCtxSetCurrent"); SYM(ModuleLoadData, "cuModuleLoadData");
    SYM(ModuleUnload, "cuModuleUnload"); SYM(ModuleGetFunction, "cuModuleGetFunction");
    SYM(ModuleGetGlobal, "cuModuleGetGlobal_v2");
    SYM(FuncSetAttribute, "cuFuncSetAttribute"); SYM(MemAlloc, "cuMemAlloc_v2"); SYM(MemFree, "cuMemFree_v2");
    SYM(MemGetInfo, "cuMemGetInfo_v2"); SYM(MemcpyHtoD, "cuMemcpyHtoD_v2"); SYM(MemcpyDtoH, "cuMemcpyDtoH_v2");
    SYM(MemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"); SYM(MemsetD8, "cuMemsetD8_v2");
    SYM(StreamCreate, "cuStreamCreate"); SYM(StreamDestroy, "cuStreamDestroy_v2");
    SYM(StreamSynchronize, "cuStreamSynchronize"); SYM(LaunchKernel, "cuLaunchKernel");
    SYM(LaunchKernelEx, "cuLaunchKernelEx"); SYM(StreamBeginCapture, "cuStreamBeginCapture_v2");
    SYM(StreamEndCapture, "cuStreamEndCapture"); SYM(GraphInstantiate, "cuGraphInstantiateWithFlags");
    SYM(GraphLaunch, "cuGraphLaunch"); SYM(GraphDestroy, "cuGraphDestroy"); SYM(GraphExecDestroy, "cuGraphExecDestroy");
    SYM(EventCreate, "cuEventCreate"); SYM(EventDestroy, "cuEventDestroy_v2"); SYM(EventRecord, "cuEventRecord");
    SYM(EventSynchronize, "cuEventSynchronize"); SYM(EventElapsedTime, "cuEventElapsedTime_v2");
    SYM(GetErrorName, "cuGetErrorName"); SYM(GetErrorString, "cuGetErrorString");
    /* optional: only mmh's launches need it, and say so where it lacks */
    *(void **)&cu.TensorMapEncodeTiled = dlsym(cu.lib, "cuTensorMapEncodeTiled");
    return cu.why[0] ? -1 : 0;
}

const char *cu_open(void)
{
    if (cu.tried)
        return cu.ok ? NULL : cu.why;
    cu.tried = 1;
    const char *names[] = {"libcuda.so.1", "libcuda.so", NULL};
    for (int i = 0; names[i] && !cu.lib; i++)
        cu.lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!cu.lib) {
        snprintf(cu.why, sizeof cu.why, "no CUDA driver (libcuda.so.1 is not installed)");
        return cu.why;
    }
    if (load_syms())
        return cu.why;
    int n = 0, r = cu.Init(0);
    if (!r)
        r = cu.DeviceGetCount(&n);
    if (r || n == 0) {
        const char *name = NULL;
        if (r && cu.GetErrorString)
            cu.GetErrorString(r, &name);
        snprintf(cu.why, sizeof cu.why, "no CUDA device: %s", r ? (name ? name : "the driver does not start") : "none found");
        return cu.why;
    }
    cu.ok = 1;
    return NULL;
}

int cu_fail(const char *call, int r, const char *file, int line)
{
    const char *name = "?", *text = "?";
    if (cu.GetErrorName)
        cu.GetErrorName(r, &name);
    if (cu.GetErrorString)
        cu.GetErrorString(r, &text);
    diag("cuda: %s: %s (%s) [%s:%d]", call, name ? name : "?", text ? text : "?", file, line);
    return EXIT_SYSTEM;
}

int cu_device(CuDevice *d, int ordinal)
{
    memset(d, 0, sizeof *d);
    CK(cu.DeviceGet(&d->dev, ordinal));
    CK(cu.DeviceGetAttribute(&d->major, 75, d->dev));
    CK(cu.DeviceGetAttribute(&d->minor, 76, d->dev));
    CK(cu.DeviceGetAttribute(&d->sms, 16, d->dev));
    CK(cu.DeviceGetAttribute(&d->smem_optin, 97, d->dev));
    CK(cu.DeviceGetName(d->name, (int)sizeof d->name, d->dev));
    CK(cu.PrimaryCtxRetain(&d->ctx, d->dev));
    CK(cu.CtxSetCurrent(d->ctx));
    return 0;
}

const char *cuda_why(void)
{
    return cu_open();
}
