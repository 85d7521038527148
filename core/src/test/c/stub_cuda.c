/*
 * A fake CUDA driver API for the kernel contract tests. An "image" is text: lines "kernel NAME SIZE SIZE ..." declare
 * kernels and their parameter sizes; an image starting "bad" is rejected (CUDA_ERROR_INVALID_IMAGE). Every launch is
 * logged with its configuration and each parameter's bytes. STUB_NO_PARAM_INFO leaves out cuKernelGetParamInfo, as
 * CUDA before 12.4 does. STUB_HIP builds HIP's module API instead (hipModuleLoadData, hipModuleGetFunction,
 * hipFuncGetAttribute: 256 threads, hipModuleLaunchKernel), with HIP's shapes where they differ.
 */
#include "stub_log.h"

typedef struct { char name[64]; int nparams; size_t sizes[32]; } stub_kernel;
typedef struct { int nkernels; stub_kernel kernels[16]; } stub_library;

static const char* error_name(int code) {
    return code == 200 ? "CUDA_ERROR_INVALID_IMAGE" : code == 500 ? "CUDA_ERROR_NOT_FOUND" : code == 1 ? "CUDA_ERROR_INVALID_VALUE" : "CUDA_ERROR_UNKNOWN";
}

static int load(stub_library** out, const char* image) {
    if (strncmp(image, "bad", 3) == 0) return 200;
    stub_library* lib = (stub_library*) calloc(1, sizeof(stub_library));
    for (const char* line = image; line != NULL && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        stub_kernel* k = &lib->kernels[lib->nkernels];
        int used = 0;
        if (sscanf(line, "kernel %63s%n", k->name, &used) != 1) continue;
        const char* p = line + used;
        unsigned long size;
        int more;
        while (k->nparams < 32 && p[0] == ' ' && sscanf(p, " %lu%n", &size, &more) == 1) {
            k->sizes[k->nparams++] = size;
            p += more;
        }
        lib->nkernels++;
    }
    *out = lib;
    return 0;
}

static int get_kernel(stub_kernel** out, stub_library* lib, const char* name) {
    for (int i = 0; i < lib->nkernels; i++) {
        if (strcmp(lib->kernels[i].name, name) == 0) {
            *out = &lib->kernels[i];
            return 0;
        }
    }
    return 500;
}

static int launch(const char* what, stub_kernel* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                  unsigned bz, unsigned shared, void* stream, void** params) {
    char text[4096] = "";
    for (int i = 0; i < f->nparams && strlen(text) < sizeof(text) - 600; i++) {
        sprintf(text + strlen(text), "%s%s", i ? "," : "", stub_hex(params[i], f->sizes[i]));
    }
    stub_log("%s kernel=%s grid=%u,%u,%u block=%u,%u,%u shared=%u stream=%p params=%s",
             what, f->name, gx, gy, gz, bx, by, bz, shared, stream, text);
    return 0;
}

#ifdef STUB_HIP
int hipInit(unsigned flags) { stub_log("hipInit flags=%u", flags); return 0; }
int hipDriverGetVersion(int* v) { *v = 60342134; return 0; }
const char* hipGetErrorName(int code) { return error_name(code); }
const char* hipGetErrorString(int code) { return code == 500 ? "named symbol not found" : "stub error"; }
int hipModuleLoadData(stub_library** out, const char* image) { stub_log("hipModuleLoadData image=%.40s", image); return load(out, image); }
int hipModuleUnload(stub_library* lib) { stub_log("hipModuleUnload kernels=%d", lib->nkernels); free(lib); return 0; }
int hipModuleGetFunction(stub_kernel** out, stub_library* lib, const char* name) { return get_kernel(out, lib, name); }
int hipFuncGetAttribute(int* v, int attribute, stub_kernel* f) { *v = attribute == 0 ? 256 : attribute == 8 ? 32768 : 0; return 0; }
int hipModuleLaunchKernel(stub_kernel* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                          unsigned shared, void* stream, void** params, void** extra) {
    return launch("hipModuleLaunchKernel", f, gx, gy, gz, bx, by, bz, shared, stream, params);
}
#else
int cuInit(unsigned flags) { stub_log("cuInit flags=%u", flags); return 0; }
int cuDriverGetVersion(int* v) { *v = 13000; return 0; }
int cuGetErrorName(int code, const char** s) { *s = error_name(code); return 0; }
int cuGetErrorString(int code, const char** s) { *s = code == 500 ? "named symbol not found" : "stub error"; return 0; }
int cuLibraryLoadData(stub_library** out, const char* image, void* a, void* b, unsigned n, void* c, void* d, unsigned m) {
    stub_log("cuLibraryLoadData image=%.40s", image);
    return load(out, image);
}
int cuLibraryUnload(stub_library* lib) { stub_log("cuLibraryUnload kernels=%d", lib->nkernels); free(lib); return 0; }
int cuLibraryGetKernel(stub_kernel** out, stub_library* lib, const char* name) { return get_kernel(out, lib, name); }
int cuKernelGetFunction(stub_kernel** f, stub_kernel* k) { *f = k; return 0; }
#ifndef STUB_NO_PARAM_INFO
int cuKernelGetParamInfo(stub_kernel* k, size_t index, size_t* offset, size_t* size) {
    if (index >= (size_t) k->nparams) return 1;
    size_t o = 0;
    for (size_t i = 0; i < index; i++) o = (o + k->sizes[i] + 7) / 8 * 8;
    *offset = o;
    *size = k->sizes[index];
    return 0;
}
#endif
/* attribute 0: max threads per block (1024), 8: max dynamic shared bytes (49152); device 1 allows 512 threads. */
int cuKernelGetAttribute(int* v, int attribute, stub_kernel* k, int device) {
    *v = attribute == 0 ? (device == 1 ? 512 : 1024) : attribute == 8 ? 49152 : 0;
    return 0;
}
int cuLaunchKernel(stub_kernel* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                   unsigned shared, void* stream, void** params, void** extra) {
    return launch("cuLaunchKernel", f, gx, gy, gz, bx, by, bz, shared, stream, params);
}
#endif
