/*
 * jccl's native layer, part two: user kernels and the device API's host calls.
 *
 * Kernels need two libraries the collective path does not: the CUDA driver API (libcuda.so.1: load a code image, find
 * a kernel, launch it on a stream) and NVRTC (libnvrtc: compile CUDA C++ at run time). Both are opened on first use,
 * separately from jn_open, with dlopen/dlsym like everything else, so a machine without them runs every collective and
 * reports only kernels as unavailable. Images are loaded with the context-independent library API (cuLibraryLoadData,
 * CUDA 12.0+): one load serves every device, and a launch resolves the kernel in the launching thread's current
 * context (the communicator's launch thread has its device current). On HIP the same slots hold HIP's module API
 * (from the HIP runtime) and hipRTC; a module belongs to the device current when it is loaded.
 *
 * The device API's host calls (ncclDevCommCreate/Destroy, ncclCommQueryProperties) use jn_open's NCCL table. Their
 * structures are laid out by Java for the loaded version; NCCL may write a device communicator at the end of a group,
 * after the call returned, so it goes to caller-owned native memory, never a copy of a Java array.
 */
#ifndef JCCL_KERNELS_H
#define JCCL_KERNELS_H

#include "jccl_native.h"

/* Each slot: the CUDA name, then HIP's ("" where HIP has no counterpart). Shapes differ where noted at the wrappers. */
#define JN_DRIVER_FUNCTIONS(X) \
    X(Init, "cuInit", "hipInit") X(GetErrorName, "cuGetErrorName", "hipGetErrorName") \
    X(GetErrorString, "cuGetErrorString", "hipGetErrorString") X(DriverGetVersion, "cuDriverGetVersion", "hipDriverGetVersion") \
    X(LoadImage, "cuLibraryLoadData", "hipModuleLoadData") X(UnloadImage, "cuLibraryUnload", "hipModuleUnload") \
    X(GetKernel, "cuLibraryGetKernel", "hipModuleGetFunction") X(KernelGetFunction, "cuKernelGetFunction", "") \
    X(KernelGetParamInfo, "cuKernelGetParamInfo", "") X(KernelGetAttribute, "cuKernelGetAttribute", "hipFuncGetAttribute") \
    X(LaunchKernel, "cuLaunchKernel", "hipModuleLaunchKernel")

#define JN_RTC_FUNCTIONS(X) \
    X(Version, "nvrtcVersion", "hiprtcVersion") X(ErrorString, "nvrtcGetErrorString", "hiprtcGetErrorString") \
    X(CreateProgram, "nvrtcCreateProgram", "hiprtcCreateProgram") X(CompileProgram, "nvrtcCompileProgram", "hiprtcCompileProgram") \
    X(DestroyProgram, "nvrtcDestroyProgram", "hiprtcDestroyProgram") X(LogSize, "nvrtcGetProgramLogSize", "hiprtcGetProgramLogSize") \
    X(Log, "nvrtcGetProgramLog", "hiprtcGetProgramLog") X(PtxSize, "nvrtcGetPTXSize", "hiprtcGetCodeSize") \
    X(Ptx, "nvrtcGetPTX", "hiprtcGetCode") X(CubinSize, "nvrtcGetCUBINSize", "") X(Cubin, "nvrtcGetCUBIN", "")

#define JN_ENUM_K(slot, cuda, hip) JK_##slot,
enum { JN_DRIVER_FUNCTIONS(JN_ENUM_K) JK_DRIVER_COUNT };
enum { JN_RTC_FUNCTIONS(JN_ENUM_K) JK_RTC_COUNT };
#define JN_NAME_K_CUDA(slot, cuda, hip) cuda,
#define JN_NAME_K_HIP(slot, cuda, hip) hip,
static const char* const jk_driver_names[2][JK_DRIVER_COUNT] = { { JN_DRIVER_FUNCTIONS(JN_NAME_K_CUDA) }, { JN_DRIVER_FUNCTIONS(JN_NAME_K_HIP) } };
static const char* const jk_rtc_names[2][JK_RTC_COUNT] = { { JN_RTC_FUNCTIONS(JN_NAME_K_CUDA) }, { JN_RTC_FUNCTIONS(JN_NAME_K_HIP) } };

typedef struct jk_context {
    int hip;
    void* driver_library;
    void* rtc_library;
    char driver_path[1024];
    char rtc_path[1024];
    void* driver[JK_DRIVER_COUNT];
    void* rtc[JK_RTC_COUNT];
} jk_context;

#define JK_CTX(c) ((jk_context*) (intptr_t) (c))
#define JK_DRV(k, name, type) ((type) JK_CTX(k)->driver[JK_##name])
#define JK_RTC(k, name, type) ((type) JK_CTX(k)->rtc[JK_##name])
#define JK_GUARD_DRV(k, name) if (JK_CTX(k)->driver[JK_##name] == NULL) return JN_MISSING
#define JK_GUARD_RTC(k, name) if (JK_CTX(k)->rtc[JK_##name] == NULL) return JN_MISSING

/*
 * Opens the driver API (required) and NVRTC (optional: without it images still load, only source cannot compile);
 * hip: HIP's module API (in the HIP runtime) and hipRTC instead. Returns the context, or 0 with every file tried and
 * the loader's reason in err. cuInit(0) / hipInit(0) runs here, once.
 */
static jn_long jk_open(int hip, const char* driver_candidates, const char* rtc_candidates, signed char* err, int err_len) {
    char* message = (char*) err;
    message[0] = 0;
    jk_context* k = (jk_context*) calloc(1, sizeof(jk_context));
    if (k == NULL) {
        snprintf(message, err_len, "out of memory");
        return 0;
    }
    k->hip = hip ? 1 : 0;
    k->driver_library = jn_open_first(driver_candidates, k->driver_path, sizeof(k->driver_path), message, err_len);
    if (k->driver_library == NULL) {
        free(k);
        return 0;
    }
    for (int i = 0; i < JK_DRIVER_COUNT; i++) {
        const char* name = jk_driver_names[k->hip][i];
        k->driver[i] = *name ? dlsym(k->driver_library, name) : NULL;
    }
    char rtc_err[4096];
    rtc_err[0] = 0;
    k->rtc_library = jn_open_first(rtc_candidates, k->rtc_path, sizeof(k->rtc_path), rtc_err, sizeof(rtc_err));
    if (k->rtc_library != NULL) {
        for (int i = 0; i < JK_RTC_COUNT; i++) {
            const char* name = jk_rtc_names[k->hip][i];
            k->rtc[i] = *name ? dlsym(k->rtc_library, name) : NULL;
        }
    } else {
        snprintf(k->rtc_path, sizeof(k->rtc_path), "%s", rtc_err); /* the reason, reported when compiling is asked */
    }
    dlerror();
    if (k->driver[JK_Init] != NULL) {
        int r = JK_DRV(JN_LONG(k), Init, int (*)(unsigned int))(0);
        if (r != 0) {
            snprintf(message, err_len, "%s: %s failed with error %d", k->driver_path, jk_driver_names[k->hip][JK_Init], r);
            dlclose(k->driver_library);
            if (k->rtc_library != NULL) dlclose(k->rtc_library);
            free(k);
            return 0;
        }
    }
    return JN_LONG(k);
}

static int jk_driver_function_count() { return JK_DRIVER_COUNT; }
static const char* jk_driver_function_name(jn_long k, int i) { return i >= 0 && i < JK_DRIVER_COUNT ? jk_driver_names[JK_CTX(k)->hip][i] : NULL; }
static int jk_driver_function_present(jn_long k, int i) { return i >= 0 && i < JK_DRIVER_COUNT && JK_CTX(k)->driver[i] != NULL; }
static int jk_rtc_loaded(jn_long k) { return JK_CTX(k)->rtc_library != NULL; }
static int jk_rtc_function_present(jn_long k, int i) { return i >= 0 && i < JK_RTC_COUNT && JK_CTX(k)->rtc[i] != NULL; }
static int jk_rtc_function_count() { return JK_RTC_COUNT; }
static const char* jk_rtc_function_name(jn_long k, int i) { return i >= 0 && i < JK_RTC_COUNT ? jk_rtc_names[JK_CTX(k)->hip][i] : NULL; }
static const char* jk_driver_path(jn_long k) { return JK_CTX(k)->driver_path; }
/* The loaded NVRTC's file, or why none loaded. */
static const char* jk_rtc_path(jn_long k) { return JK_CTX(k)->rtc_path; }

/* CUDA answers through an out parameter, HIP returns the text. */
static const char* jk_error_text(jn_long k, int slot, int code) {
    const char* s = NULL;
    void* fn = JK_CTX(k)->driver[slot];
    if (fn == NULL) return NULL;
    if (JK_CTX(k)->hip) return ((const char* (*)(int)) fn)(code);
    return ((int (*)(int, const char**)) fn)(code, &s) == 0 ? s : NULL;
}

static const char* jk_error_name(jn_long k, int code) { return jk_error_text(k, JK_GetErrorName, code); }
static const char* jk_error_string(jn_long k, int code) { return jk_error_text(k, JK_GetErrorString, code); }

static int jk_driver_version(jn_long k, int* version) {
    JK_GUARD_DRV(k, DriverGetVersion);
    return JK_DRV(k, DriverGetVersion, int (*)(int*))(version);
}

/* ---- code images and kernels */

/*
 * image: PTX (NUL-terminated), cubin or fatbin bytes (CUDA: a library for every device), or a code object (HIP: a
 * module of the calling thread's current device); the driver copies what it needs before returning.
 */
static int jk_library_load(jn_long k, signed char* image, jn_long* library) {
    JK_GUARD_DRV(k, LoadImage);
    jn_handle out = NULL;
    int r = JK_CTX(k)->hip
        ? JK_DRV(k, LoadImage, int (*)(jn_handle*, const void*))(&out, image)
        : JK_DRV(k, LoadImage, int (*)(jn_handle*, const void*, void*, void*, unsigned int, void*, void*, unsigned int))(
              &out, image, NULL, NULL, 0, NULL, NULL, 0);
    *library = JN_LONG(out);
    return r;
}

static int jk_library_unload(jn_long k, jn_long library) {
    JK_GUARD_DRV(k, UnloadImage);
    return JK_DRV(k, UnloadImage, int (*)(jn_handle))(JN_PTR(library));
}

/* CUDA: a CUkernel of the library; HIP: a hipFunction_t of the module. Same shape. */
static int jk_library_kernel(jn_long k, jn_long library, const char* name, jn_long* kernel) {
    JK_GUARD_DRV(k, GetKernel);
    jn_handle out = NULL;
    int r = JK_DRV(k, GetKernel, int (*)(jn_handle*, jn_handle, const char*))(&out, JN_PTR(library), name);
    *kernel = JN_LONG(out);
    return r;
}

/* CUDA 12.4+: offset and size of parameter index; CUDA_ERROR_INVALID_VALUE (1) past the last one. */
static int jk_kernel_param(jn_long k, jn_long kernel, int index, jn_long* offset, jn_long* size) {
    JK_GUARD_DRV(k, KernelGetParamInfo);
    size_t o = 0, s = 0;
    int r = JK_DRV(k, KernelGetParamInfo, int (*)(jn_handle, size_t, size_t*, size_t*))(JN_PTR(kernel), (size_t) index, &o, &s);
    *offset = (jn_long) o;
    *size = (jn_long) s;
    return r;
}

/*
 * CUfunction_attribute of the kernel on device (e.g. 0 max threads per block, 8 max dynamic shared bytes); HIP's
 * hipFuncGetAttribute has the same codes and asks the function, which belongs to one device already.
 */
static int jk_kernel_attribute(jn_long k, int* value, int attribute, jn_long kernel, int device) {
    JK_GUARD_DRV(k, KernelGetAttribute);
    if (JK_CTX(k)->hip) return JK_DRV(k, KernelGetAttribute, int (*)(int*, int, jn_handle))(value, attribute, JN_PTR(kernel));
    return JK_DRV(k, KernelGetAttribute, int (*)(int*, int, jn_handle, int))(value, attribute, JN_PTR(kernel), device);
}

/*
 * Launches kernel on stream from the calling thread, whose current context is the device's: the kernel is resolved
 * there (cuKernelGetFunction), then launched with n parameters, parameter i being the bytes of args from offsets[i].
 * dims: grid x, y, z, block x, y, z.
 */
static int jk_launch(jn_long k, jn_long kernel, int* dims, int sharedBytes, jn_long stream, signed char* args, int* offsets, int n) {
    JK_GUARD_DRV(k, LaunchKernel);
    if (n < 0 || n > 256) return 1; /* CUDA_ERROR_INVALID_VALUE; Java checks the count first */
    jn_handle function = JN_PTR(kernel); /* HIP: already the device's function */
    if (!JK_CTX(k)->hip) {
        JK_GUARD_DRV(k, KernelGetFunction);
        int r = JK_DRV(k, KernelGetFunction, int (*)(jn_handle*, jn_handle))(&function, JN_PTR(kernel));
        if (r != 0) return r;
    }
    void* params[256];
    for (int i = 0; i < n; i++) params[i] = args + offsets[i];
    return JK_DRV(k, LaunchKernel, int (*)(jn_handle, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                             jn_handle, void**, void**))(
        function, (unsigned) dims[0], (unsigned) dims[1], (unsigned) dims[2], (unsigned) dims[3], (unsigned) dims[4],
        (unsigned) dims[5], (unsigned) sharedBytes, JN_PTR(stream), n > 0 ? params : NULL, NULL);
}

/* ---- NVRTC */

static int jk_rtc_version(jn_long k, int* version) {
    JK_GUARD_RTC(k, Version);
    return JK_RTC(k, Version, int (*)(int*, int*))(version, version + 1);
}

static const char* jk_rtc_error_string(jn_long k, int code) {
    if (JK_CTX(k)->rtc[JK_ErrorString] == NULL) return NULL;
    return JK_RTC(k, ErrorString, const char* (*)(int))(code);
}

/* Splits n NUL-terminated strings packed back to back into out (at most 512). */
static int jk_unpack(const signed char* packed, int n, const char** out) {
    if (n < 0 || n > 512) return 0;
    const char* p = (const char*) packed;
    for (int i = 0; i < n; i++) {
        out[i] = p;
        p += strlen(p) + 1;
    }
    return 1;
}

/*
 * Creates and compiles a program. source: NUL-terminated UTF-8. headers: nHeaders pairs (include name, contents) packed as NUL-terminated strings;
 * options: nOptions packed strings. The program stays alive for its log and code until jk_rtc_destroy.
 */
static int jk_rtc_compile(jn_long k, signed char* source, const char* name, int nHeaders, signed char* headers,
                          int nOptions, signed char* options, jn_long* program) {
    JK_GUARD_RTC(k, CreateProgram);
    JK_GUARD_RTC(k, CompileProgram);
    const char* pairs[1024];
    const char* contents[512];
    const char* names[512];
    const char* opts[512];
    if (!jk_unpack(headers, 2 * nHeaders, pairs) || nHeaders > 512 || !jk_unpack(options, nOptions, opts)) return 4;
    for (int i = 0; i < nHeaders; i++) {
        names[i] = pairs[2 * i];
        contents[i] = pairs[2 * i + 1];
    }
    jn_handle p = NULL;
    int r = JK_RTC(k, CreateProgram, int (*)(jn_handle*, const char*, const char*, int, const char* const*, const char* const*))(
        &p, (const char*) source, name, nHeaders, contents, names);
    *program = JN_LONG(p);
    if (r != 0) return r;
    return JK_RTC(k, CompileProgram, int (*)(jn_handle, int, const char* const*))(p, nOptions, opts);
}

static int jk_rtc_log_size(jn_long k, jn_long program, jn_long* size) {
    JK_GUARD_RTC(k, LogSize);
    size_t s = 0;
    int r = JK_RTC(k, LogSize, int (*)(jn_handle, size_t*))(JN_PTR(program), &s);
    *size = (jn_long) s;
    return r;
}

static int jk_rtc_log(jn_long k, jn_long program, signed char* log) {
    JK_GUARD_RTC(k, Log);
    return JK_RTC(k, Log, int (*)(jn_handle, char*))(JN_PTR(program), (char*) log);
}

/* cubin 1: the CUBIN (compiled for a real architecture), else the PTX (NUL-terminated, counted in size); HIP: the
 * code object (hiprtcGetCode) in the PTX slot, no CUBIN. */
static int jk_rtc_code_size(jn_long k, jn_long program, int cubin, jn_long* size) {
    size_t s = 0;
    int r;
    if (cubin) {
        JK_GUARD_RTC(k, CubinSize);
        r = JK_RTC(k, CubinSize, int (*)(jn_handle, size_t*))(JN_PTR(program), &s);
    } else {
        JK_GUARD_RTC(k, PtxSize);
        r = JK_RTC(k, PtxSize, int (*)(jn_handle, size_t*))(JN_PTR(program), &s);
    }
    *size = (jn_long) s;
    return r;
}

static int jk_rtc_code(jn_long k, jn_long program, int cubin, signed char* code) {
    if (cubin) {
        JK_GUARD_RTC(k, Cubin);
        return JK_RTC(k, Cubin, int (*)(jn_handle, char*))(JN_PTR(program), (char*) code);
    }
    JK_GUARD_RTC(k, Ptx);
    return JK_RTC(k, Ptx, int (*)(jn_handle, char*))(JN_PTR(program), (char*) code);
}

static int jk_rtc_destroy(jn_long k, jn_long program) {
    JK_GUARD_RTC(k, DestroyProgram);
    jn_handle p = JN_PTR(program);
    return JK_RTC(k, DestroyProgram, int (*)(jn_handle*))(&p);
}

/* ---- the device API's host calls (NCCL 2.28+), through jn_open's table */

/* The file the collective library was loaded from (dlopen may have found it by name), for finding its headers. */
static const char* jn_nccl_file(jn_long ctx) {
    Dl_info info;
    void* any = JN_CTX(ctx)->nccl[JN_ncclGetVersion];
    if (any == NULL || dladdr(any, &info) == 0 || info.dli_fname == NULL) return JN_CTX(ctx)->nccl_path;
    return info.dli_fname;
}

/* props: the ncclCommProperties_t laid out by Java for the loaded version (its size/magic/version header filled). */
static int jn_comm_query_properties(jn_long ctx, jn_long comm, signed char* props) {
    JN_GUARD_NCCL(ctx, ncclCommQueryProperties);
    return JN_CALL(ctx, ncclCommQueryProperties, int (*)(jn_handle, void*))(JN_PTR(comm), props);
}

/* requirements and devComm: caller-owned native memory (see the top of this file), devComm large enough for any version. */
static int jn_dev_comm_create(jn_long ctx, jn_long comm, jn_long requirements, jn_long devComm) {
    JN_GUARD_NCCL(ctx, ncclDevCommCreate);
    return JN_CALL(ctx, ncclDevCommCreate, int (*)(jn_handle, const void*, void*))(JN_PTR(comm), JN_PTR(requirements), JN_PTR(devComm));
}

static int jn_dev_comm_destroy(jn_long ctx, jn_long comm, jn_long devComm) {
    JN_GUARD_NCCL(ctx, ncclDevCommDestroy);
    return JN_CALL(ctx, ncclDevCommDestroy, int (*)(jn_handle, const void*))(JN_PTR(comm), JN_PTR(devComm));
}

#endif /* JCCL_KERNELS_H */
