/*
 * jccl's native layer: the wrappers of its JNI library (beside jccl_kernels.h, jccl_dlpack.h and jccl_profiler.h).
 *
 * Loads NCCL or RCCL and the CUDA or HIP runtime at run time with dlopen and resolves every function separately with
 * dlsym, so building needs no vendor header or library and a function the loaded library lacks is a missing feature
 * (a NULL slot), never a link failure. Every wrapper takes integer handles (jn_long) instead of JavaCPP Pointer
 * objects, so the hot path (launch, event record, event polling) allocates nothing in Java.
 *
 * State lives in a context (one per loaded backend) whose address Java keeps as a long.
 */
#ifndef JCCL_NATIVE_H
#define JCCL_NATIVE_H

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The build force-includes jccl_glibc_compat.h, which pins dlopen/dlsym/dlerror to their pre-2.34 glibc versions. */

/* The few vendor types, declared here: handles are opaque pointers, enums are ints. */
#define JN_UNIQUE_ID_BYTES 128
typedef struct { char internal[JN_UNIQUE_ID_BYTES]; } jn_unique_id_t;
typedef void* jn_handle;
/* Handles and sizes cross JNI as 64-bit integers; JavaCPP declares jlong as long long, so arrays convert too. */
typedef long long jn_long;

/* ---- the collective library's function table: NCCL and RCCL export the same names. */
#define JN_NCCL_FUNCTIONS(X) \
    X(ncclGetVersion) X(ncclGetErrorString) X(ncclGetLastError) X(ncclGetUniqueId) \
    X(ncclCommInitRankConfig) X(ncclCommInitRankScalable) X(ncclCommInitAll) \
    X(ncclCommFinalize) X(ncclCommDestroy) X(ncclCommAbort) X(ncclCommSplit) X(ncclCommShrink) \
    X(ncclCommGetAsyncError) X(ncclCommCount) X(ncclCommCuDevice) X(ncclCommUserRank) \
    X(ncclCommRegister) X(ncclCommDeregister) X(ncclMemAlloc) X(ncclMemFree) \
    X(ncclRedOpCreatePreMulSum) X(ncclRedOpDestroy) \
    X(ncclAllReduce) X(ncclBroadcast) X(ncclReduce) X(ncclAllGather) X(ncclReduceScatter) \
    X(ncclGather) X(ncclScatter) X(ncclAlltoAll) X(ncclAllToAll) X(ncclAlltoAllv) X(ncclAllToAllv) \
    X(ncclAllReduceWithBias) \
    X(ncclSend) X(ncclRecv) X(ncclGroupStart) X(ncclGroupEnd) X(ncclGroupSimulateEnd) \
    X(ncclCommSuspend) X(ncclCommResume) X(ncclCommMemStats) X(ncclCommRevoke) X(ncclCommGrow) \
    X(ncclCommGetUniqueId) X(ncclCommWindowRegister) X(ncclCommWindowDeregister) X(ncclWinGetUserPtr) \
    X(ncclPutSignal) X(ncclSignal) X(ncclWaitSignal) X(ncclDevCommCreate) X(ncclDevCommDestroy) \
    X(ncclCommQueryProperties)

/* ---- the GPU runtime's table: CUDA and HIP have the same shapes under different names. */
#define JN_RUNTIME_FUNCTIONS(X) \
    X(GetDeviceCount, "cudaGetDeviceCount", "hipGetDeviceCount") \
    X(SetDevice, "cudaSetDevice", "hipSetDevice") \
    X(GetDevice, "cudaGetDevice", "hipGetDevice") \
    X(DeviceGetAttribute, "cudaDeviceGetAttribute", "hipDeviceGetAttribute") \
    X(DeviceGetPCIBusId, "cudaDeviceGetPCIBusId", "hipDeviceGetPCIBusId") \
    X(GetDeviceProperties, "cudaGetDeviceProperties_v2", "hipGetDevicePropertiesR0600") \
    X(GetDevicePropertiesOld, "cudaGetDeviceProperties", "hipGetDeviceProperties") \
    X(MemGetInfo, "cudaMemGetInfo", "hipMemGetInfo") \
    X(Malloc, "cudaMalloc", "hipMalloc") \
    X(Free, "cudaFree", "hipFree") \
    X(HostAlloc, "cudaHostAlloc", "hipHostMalloc") \
    X(FreeHost, "cudaFreeHost", "hipHostFree") \
    X(Memcpy, "cudaMemcpy", "hipMemcpy") \
    X(MemcpyAsync, "cudaMemcpyAsync", "hipMemcpyAsync") \
    X(MemsetAsync, "cudaMemsetAsync", "hipMemsetAsync") \
    X(StreamCreateWithFlags, "cudaStreamCreateWithFlags", "hipStreamCreateWithFlags") \
    X(StreamDestroy, "cudaStreamDestroy", "hipStreamDestroy") \
    X(StreamWaitEvent, "cudaStreamWaitEvent", "hipStreamWaitEvent") \
    X(StreamSynchronize, "cudaStreamSynchronize", "hipStreamSynchronize") \
    X(EventCreateWithFlags, "cudaEventCreateWithFlags", "hipEventCreateWithFlags") \
    X(EventRecord, "cudaEventRecord", "hipEventRecord") \
    X(EventQuery, "cudaEventQuery", "hipEventQuery") \
    X(EventSynchronize, "cudaEventSynchronize", "hipEventSynchronize") \
    X(EventElapsedTime, "cudaEventElapsedTime", "hipEventElapsedTime") \
    X(EventDestroy, "cudaEventDestroy", "hipEventDestroy") \
    X(GetErrorString, "cudaGetErrorString", "hipGetErrorString") \
    X(RuntimeGetVersion, "cudaRuntimeGetVersion", "hipRuntimeGetVersion") \
    X(StreamBeginCapture, "cudaStreamBeginCapture", "hipStreamBeginCapture") \
    X(StreamEndCapture, "cudaStreamEndCapture", "hipStreamEndCapture") \
    X(GraphInstantiateWithFlags, "cudaGraphInstantiateWithFlags", "hipGraphInstantiateWithFlags") \
    X(GraphLaunch, "cudaGraphLaunch", "hipGraphLaunch") \
    X(GraphExecDestroy, "cudaGraphExecDestroy", "hipGraphExecDestroy") \
    X(GraphDestroy, "cudaGraphDestroy", "hipGraphDestroy")

#define JN_ENUM_NCCL(name) JN_##name,
enum { JN_NCCL_FUNCTIONS(JN_ENUM_NCCL) JN_NCCL_COUNT };
#define JN_ENUM_RT(slot, cuda, hip) JN_RT_##slot,
enum { JN_RUNTIME_FUNCTIONS(JN_ENUM_RT) JN_RT_COUNT };

#define JN_NAME_NCCL(name) #name,
static const char* const jn_nccl_names[JN_NCCL_COUNT] = { JN_NCCL_FUNCTIONS(JN_NAME_NCCL) };
#define JN_NAME_CUDA(slot, cuda, hip) cuda,
static const char* const jn_cuda_names[JN_RT_COUNT] = { JN_RUNTIME_FUNCTIONS(JN_NAME_CUDA) };
#define JN_NAME_HIP(slot, cuda, hip) hip,
static const char* const jn_hip_names[JN_RT_COUNT] = { JN_RUNTIME_FUNCTIONS(JN_NAME_HIP) };

typedef struct jn_context {
    void* nccl_library;
    void* runtime_library;
    int hip;
    char nccl_path[1024];
    char runtime_path[1024];
    void* nccl[JN_NCCL_COUNT];
    void* rt[JN_RT_COUNT];
} jn_context;

#define JN_CTX(c) ((jn_context*) (intptr_t) (c))
#define JN_PTR(p) ((void*) (intptr_t) (p))
#define JN_LONG(p) ((jn_long) (intptr_t) (p))
/* A missing function is reported as this result; Java checks the feature table first, so it is a last guard. */
#define JN_MISSING (-1000)
#define JN_CALL(ctx, slot, type) ((type) JN_CTX(ctx)->nccl[JN_##slot])
#define JN_RT(ctx, slot, type) ((type) JN_CTX(ctx)->rt[JN_RT_##slot])
#define JN_GUARD_NCCL(ctx, slot) if (JN_CTX(ctx)->nccl[JN_##slot] == NULL) return JN_MISSING
#define JN_GUARD_RT(ctx, slot) if (JN_CTX(ctx)->rt[JN_RT_##slot] == NULL) return JN_MISSING

/* Function shapes. */
typedef int (*jn_fn_void)(void);
typedef int (*jn_fn_int_ptr)(int*);
typedef int (*jn_fn_int)(int);
typedef int (*jn_fn_ptr)(void*);
typedef int (*jn_fn_ptr_int_ptr)(void*, int*);
typedef const char* (*jn_fn_str_int)(int);
typedef const char* (*jn_fn_str_ptr)(void*);

/* Tries each colon-separated candidate; on failure appends dlerror's text for every one to err ("file: reason";
 * dlerror names the file itself when it could not open it, so the name is added only when its text lacks it). */
static void* jn_open_first(const char* candidates, char* loaded, size_t loaded_len, char* err, size_t err_len) {
    char buffer[4096];
    strncpy(buffer, candidates, sizeof(buffer) - 1);
    buffer[sizeof(buffer) - 1] = 0;
    char* save = NULL;
    for (char* name = strtok_r(buffer, ":", &save); name != NULL; name = strtok_r(NULL, ":", &save)) {
        if (*name == 0) continue;
        void* handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
        if (handle != NULL) {
            strncpy(loaded, name, loaded_len - 1);
            loaded[loaded_len - 1] = 0;
            return handle;
        }
        const char* why = dlerror();
        size_t used = strlen(err);
        if (why != NULL && strncmp(why, name, strlen(name)) == 0) {
            snprintf(err + used, err_len - used, "%s%s", used ? "; " : "", why);
        } else {
            snprintf(err + used, err_len - used, "%s%s: %s", used ? "; " : "", name, why ? why : "unknown error");
        }
    }
    return NULL;
}

/*
 * Opens the libraries and fills both tables. Returns the context (as a long) or 0 with the reason in err: every file
 * tried and dlerror's text.
 */
static jn_long jn_open(int hip, const char* nccl_candidates, const char* runtime_candidates, signed char* err, int err_len) {
    char* message = (char*) err;
    message[0] = 0;
    jn_context* ctx = (jn_context*) calloc(1, sizeof(jn_context));
    if (ctx == NULL) {
        snprintf(message, err_len, "out of memory");
        return 0;
    }
    ctx->hip = hip;
    ctx->runtime_library = jn_open_first(runtime_candidates, ctx->runtime_path, sizeof(ctx->runtime_path), message, err_len);
    if (ctx->runtime_library == NULL) {
        free(ctx);
        return 0;
    }
    ctx->nccl_library = jn_open_first(nccl_candidates, ctx->nccl_path, sizeof(ctx->nccl_path), message, err_len);
    if (ctx->nccl_library == NULL) {
        dlclose(ctx->runtime_library);
        free(ctx);
        return 0;
    }
    for (int i = 0; i < JN_NCCL_COUNT; i++) ctx->nccl[i] = dlsym(ctx->nccl_library, jn_nccl_names[i]);
    const char* const* rt_names = hip ? jn_hip_names : jn_cuda_names;
    for (int i = 0; i < JN_RT_COUNT; i++) ctx->rt[i] = dlsym(ctx->runtime_library, rt_names[i]);
    dlerror();
    return JN_LONG(ctx);
}

/* ---- the feature table */

/*
 * NCCL reads its NCCL_* variables with getenv in this process, and a JVM cannot change its own environment: jccl sets
 * the ones given as jccl.nccl.env.* properties here, before dlopen, while no NCCL thread runs (setenv is not safe
 * against a concurrent getenv). Returns 0 or errno.
 */
static int jn_setenv(const char* name, const char* value) { return setenv(name, value, 1) == 0 ? 0 : errno; }
/* The variable as this process's C library sees it (what NCCL reads), or NULL. */
static const char* jn_getenv(const char* name) { return getenv(name); }

static int jn_nccl_function_count() { return JN_NCCL_COUNT; }
static const char* jn_nccl_function_name(int i) { return i >= 0 && i < JN_NCCL_COUNT ? jn_nccl_names[i] : NULL; }
static int jn_nccl_function_present(jn_long ctx, int i) { return i >= 0 && i < JN_NCCL_COUNT && JN_CTX(ctx)->nccl[i] != NULL; }
static int jn_runtime_function_count() { return JN_RT_COUNT; }
static const char* jn_runtime_function_name(jn_long ctx, int i) {
    return i >= 0 && i < JN_RT_COUNT ? (JN_CTX(ctx)->hip ? jn_hip_names[i] : jn_cuda_names[i]) : NULL;
}
static int jn_runtime_function_present(jn_long ctx, int i) { return i >= 0 && i < JN_RT_COUNT && JN_CTX(ctx)->rt[i] != NULL; }
static const char* jn_nccl_path(jn_long ctx) { return JN_CTX(ctx)->nccl_path; }
static const char* jn_runtime_path(jn_long ctx) { return JN_CTX(ctx)->runtime_path; }

/* ---- library-wide calls */

static int jn_nccl_version(jn_long ctx, int* version) {
    JN_GUARD_NCCL(ctx, ncclGetVersion);
    return JN_CALL(ctx, ncclGetVersion, jn_fn_int_ptr)(version);
}

static const char* jn_error_string(jn_long ctx, int code) {
    if (JN_CTX(ctx)->nccl[JN_ncclGetErrorString] == NULL) return NULL;
    return JN_CALL(ctx, ncclGetErrorString, jn_fn_str_int)(code);
}

static const char* jn_last_error(jn_long ctx, jn_long comm) {
    if (JN_CTX(ctx)->nccl[JN_ncclGetLastError] == NULL) return NULL;
    return JN_CALL(ctx, ncclGetLastError, jn_fn_str_ptr)(JN_PTR(comm));
}

static int jn_unique_id(jn_long ctx, signed char* id) {
    JN_GUARD_NCCL(ctx, ncclGetUniqueId);
    return JN_CALL(ctx, ncclGetUniqueId, int (*)(jn_unique_id_t*))((jn_unique_id_t*) id);
}

/* config: the ncclConfig_t bytes laid out by Java for the loaded version; NULL for the library's defaults. */
static int jn_comm_init_rank_config(jn_long ctx, jn_long* comm, int nranks, signed char* id, int rank, signed char* config) {
    JN_GUARD_NCCL(ctx, ncclCommInitRankConfig);
    jn_unique_id_t unique;
    memcpy(&unique, id, sizeof(unique));
    jn_handle out = NULL;
    int r = JN_CALL(ctx, ncclCommInitRankConfig, int (*)(jn_handle*, int, jn_unique_id_t, int, void*))(&out, nranks, unique, rank, config);
    *comm = JN_LONG(out);
    return r;
}

/* ids: nId unique ids, back to back. */
static int jn_comm_init_rank_scalable(jn_long ctx, jn_long* comm, int nranks, int rank, int nId, signed char* ids, signed char* config) {
    JN_GUARD_NCCL(ctx, ncclCommInitRankScalable);
    jn_handle out = NULL;
    int r = JN_CALL(ctx, ncclCommInitRankScalable, int (*)(jn_handle*, int, int, int, void*, void*))(&out, nranks, rank, nId, ids, config);
    *comm = JN_LONG(out);
    return r;
}

static int jn_comm_init_all(jn_long ctx, jn_long* comms, int ndev, int* devices) {
    JN_GUARD_NCCL(ctx, ncclCommInitAll);
    jn_handle out[1024];
    if (ndev < 0 || ndev > 1024) return 4; /* ncclInvalidArgument */
    int r = JN_CALL(ctx, ncclCommInitAll, int (*)(jn_handle*, int, const int*))(out, ndev, devices);
    for (int i = 0; i < ndev; i++) comms[i] = r == 0 ? JN_LONG(out[i]) : 0;
    return r;
}

#define JN_COMM_CALL(fname, slot) \
    static int fname(jn_long ctx, jn_long comm) { \
        JN_GUARD_NCCL(ctx, slot); \
        return JN_CALL(ctx, slot, jn_fn_ptr)(JN_PTR(comm)); \
    }
JN_COMM_CALL(jn_comm_finalize, ncclCommFinalize)
JN_COMM_CALL(jn_comm_destroy, ncclCommDestroy)
JN_COMM_CALL(jn_comm_abort, ncclCommAbort)
JN_COMM_CALL(jn_comm_resume, ncclCommResume)

#define JN_COMM_INT_OUT(fname, slot) \
    static int fname(jn_long ctx, jn_long comm, int* out) { \
        JN_GUARD_NCCL(ctx, slot); \
        return JN_CALL(ctx, slot, jn_fn_ptr_int_ptr)(JN_PTR(comm), out); \
    }
JN_COMM_INT_OUT(jn_comm_async_error, ncclCommGetAsyncError)
JN_COMM_INT_OUT(jn_comm_count, ncclCommCount)
JN_COMM_INT_OUT(jn_comm_device, ncclCommCuDevice)
JN_COMM_INT_OUT(jn_comm_user_rank, ncclCommUserRank)

static int jn_comm_split(jn_long ctx, jn_long comm, int color, int key, jn_long* newcomm, signed char* config) {
    JN_GUARD_NCCL(ctx, ncclCommSplit);
    jn_handle out = NULL;
    int r = JN_CALL(ctx, ncclCommSplit, int (*)(jn_handle, int, int, jn_handle*, void*))(JN_PTR(comm), color, key, &out, config);
    *newcomm = JN_LONG(out);
    return r;
}

static int jn_comm_shrink(jn_long ctx, jn_long comm, int* excluded, int excludedCount, jn_long* newcomm, signed char* config, int flags) {
    JN_GUARD_NCCL(ctx, ncclCommShrink);
    jn_handle out = NULL;
    int r = JN_CALL(ctx, ncclCommShrink, int (*)(jn_handle, int*, int, jn_handle*, void*, int))(JN_PTR(comm), excluded, excludedCount, &out, config, flags);
    *newcomm = JN_LONG(out);
    return r;
}

/* ncclCommGetUniqueId: the id new ranks use to join this communicator through ncclCommGrow. */
static int jn_comm_get_unique_id(jn_long ctx, jn_long comm, signed char* id) {
    JN_GUARD_NCCL(ctx, ncclCommGetUniqueId);
    return JN_CALL(ctx, ncclCommGetUniqueId, int (*)(jn_handle, jn_unique_id_t*))(JN_PTR(comm), (jn_unique_id_t*) id);
}

/* ncclCommGrow as an existing rank (rank -1); id is NULL except on the rank that made it. */
static int jn_comm_grow(jn_long ctx, jn_long comm, int nranks, signed char* id, int rank, jn_long* newcomm, signed char* config) {
    JN_GUARD_NCCL(ctx, ncclCommGrow);
    jn_handle out = NULL;
    int r = JN_CALL(ctx, ncclCommGrow, int (*)(jn_handle, int, const jn_unique_id_t*, int, jn_handle*, void*))(
        JN_PTR(comm), nranks, (const jn_unique_id_t*) id, rank, &out, config);
    *newcomm = JN_LONG(out);
    return r;
}

static int jn_comm_suspend(jn_long ctx, jn_long comm, int flags) {
    JN_GUARD_NCCL(ctx, ncclCommSuspend);
    return JN_CALL(ctx, ncclCommSuspend, int (*)(jn_handle, int))(JN_PTR(comm), flags);
}

static int jn_comm_revoke(jn_long ctx, jn_long comm, int flags) {
    JN_GUARD_NCCL(ctx, ncclCommRevoke);
    return JN_CALL(ctx, ncclCommRevoke, int (*)(jn_handle, int))(JN_PTR(comm), flags);
}

static int jn_comm_mem_stat(jn_long ctx, jn_long comm, int stat, jn_long* value) {
    JN_GUARD_NCCL(ctx, ncclCommMemStats);
    uint64_t v = 0;
    int r = JN_CALL(ctx, ncclCommMemStats, int (*)(jn_handle, int, uint64_t*))(JN_PTR(comm), stat, &v);
    *value = (jn_long) v;
    return r;
}

static int jn_comm_register(jn_long ctx, jn_long comm, jn_long buffer, jn_long bytes, jn_long* handle) {
    JN_GUARD_NCCL(ctx, ncclCommRegister);
    void* out = NULL;
    int r = JN_CALL(ctx, ncclCommRegister, int (*)(jn_handle, void*, size_t, void**))(JN_PTR(comm), JN_PTR(buffer), (size_t) bytes, &out);
    *handle = JN_LONG(out);
    return r;
}

static int jn_comm_deregister(jn_long ctx, jn_long comm, jn_long handle) {
    JN_GUARD_NCCL(ctx, ncclCommDeregister);
    return JN_CALL(ctx, ncclCommDeregister, int (*)(jn_handle, void*))(JN_PTR(comm), JN_PTR(handle));
}

static int jn_mem_alloc(jn_long ctx, jn_long* address, jn_long bytes) {
    JN_GUARD_NCCL(ctx, ncclMemAlloc);
    void* out = NULL;
    int r = JN_CALL(ctx, ncclMemAlloc, int (*)(void**, size_t))(&out, (size_t) bytes);
    *address = JN_LONG(out);
    return r;
}

static int jn_mem_free(jn_long ctx, jn_long address) {
    JN_GUARD_NCCL(ctx, ncclMemFree);
    return JN_CALL(ctx, ncclMemFree, jn_fn_ptr)(JN_PTR(address));
}

/* scalar: a host address holding the value in the element type (residence 1) or a device address (residence 0). */
static int jn_red_op_create_pre_mul_sum(jn_long ctx, int* op, jn_long scalar, int type, int residence, jn_long comm) {
    JN_GUARD_NCCL(ctx, ncclRedOpCreatePreMulSum);
    return JN_CALL(ctx, ncclRedOpCreatePreMulSum, int (*)(int*, void*, int, int, jn_handle))(op, JN_PTR(scalar), type, residence, JN_PTR(comm));
}

/* The host-scalar form: the value's bytes (1, 2, 4 or 8 of them) are copied to an aligned local first. */
static int jn_red_op_create_pre_mul_sum_host(jn_long ctx, int* op, signed char* scalar, int scalarBytes, int type, jn_long comm) {
    JN_GUARD_NCCL(ctx, ncclRedOpCreatePreMulSum);
    uint64_t value = 0;
    memcpy(&value, scalar, scalarBytes > 8 ? 8 : scalarBytes);
    return JN_CALL(ctx, ncclRedOpCreatePreMulSum, int (*)(int*, void*, int, int, jn_handle))(op, &value, type, 1, JN_PTR(comm));
}

static int jn_red_op_destroy(jn_long ctx, int op, jn_long comm) {
    JN_GUARD_NCCL(ctx, ncclRedOpDestroy);
    return JN_CALL(ctx, ncclRedOpDestroy, int (*)(int, jn_handle))(op, JN_PTR(comm));
}

/* ---- windows (ncclCommWindowRegister, NCCL 2.27+) */

/*
 * window: caller-owned native memory for the ncclWindow_t, not a copy of a Java array. NCCL queues the registration
 * as a group task holding this pointer and writes the window at the group's end, which for a non-blocking
 * communicator finishes in the background after the call has returned ncclSuccess. A communicator without
 * symmetric-memory support answers ncclSuccess and leaves a NULL window.
 */
static int jn_comm_window_register(jn_long ctx, jn_long comm, jn_long buffer, jn_long bytes, int flags, jn_long* window) {
    JN_GUARD_NCCL(ctx, ncclCommWindowRegister);
    *window = 0;
    return JN_CALL(ctx, ncclCommWindowRegister, int (*)(jn_handle, void*, size_t, jn_handle*, int))(
        JN_PTR(comm), JN_PTR(buffer), (size_t) bytes, (jn_handle*) window, flags);
}

static int jn_comm_window_deregister(jn_long ctx, jn_long comm, jn_long window) {
    JN_GUARD_NCCL(ctx, ncclCommWindowDeregister);
    return JN_CALL(ctx, ncclCommWindowDeregister, int (*)(jn_handle, jn_handle))(JN_PTR(comm), JN_PTR(window));
}

static int jn_win_get_user_ptr(jn_long ctx, jn_long comm, jn_long window, jn_long* out) {
    JN_GUARD_NCCL(ctx, ncclWinGetUserPtr);
    void* ptr = NULL;
    int r = JN_CALL(ctx, ncclWinGetUserPtr, int (*)(jn_handle, jn_handle, void**))(JN_PTR(comm), JN_PTR(window), &ptr);
    *out = JN_LONG(ptr);
    return r;
}

/* ---- one-sided operations (NCCL 2.29.2+); ctxIdx is NCCL's "ctx" argument, not this file's context. */

static int jn_put_signal(jn_long ctx, jn_long local, jn_long count, int type, int peer, jn_long window, jn_long peerOffset,
                         int sigIdx, int ctxIdx, int flags, jn_long comm, jn_long stream) {
    JN_GUARD_NCCL(ctx, ncclPutSignal);
    return JN_CALL(ctx, ncclPutSignal, int (*)(const void*, size_t, int, int, jn_handle, size_t, int, int, unsigned int, jn_handle, jn_handle))(
        JN_PTR(local), (size_t) count, type, peer, JN_PTR(window), (size_t) peerOffset, sigIdx, ctxIdx, (unsigned int) flags,
        JN_PTR(comm), JN_PTR(stream));
}

static int jn_signal(jn_long ctx, int peer, int sigIdx, int ctxIdx, int flags, jn_long comm, jn_long stream) {
    JN_GUARD_NCCL(ctx, ncclSignal);
    return JN_CALL(ctx, ncclSignal, int (*)(int, int, int, unsigned int, jn_handle, jn_handle))(
        peer, sigIdx, ctxIdx, (unsigned int) flags, JN_PTR(comm), JN_PTR(stream));
}

/* ncclWaitSignalDesc_t: four ints (opCnt, peer, sigIdx, ctx), so Java's flat int array is the descriptor array. */
typedef struct { int opCnt; int peer; int sigIdx; int ctx; } jn_wait_signal_desc;
typedef char jn_wait_signal_desc_is_four_ints[sizeof(jn_wait_signal_desc) == 4 * sizeof(int) ? 1 : -1];

/* NCCL copies the descriptors while enqueueing, so descs need not outlive the call. */
static int jn_wait_signal(jn_long ctx, int nDesc, int* descs, jn_long comm, jn_long stream) {
    JN_GUARD_NCCL(ctx, ncclWaitSignal);
    return JN_CALL(ctx, ncclWaitSignal, int (*)(int, jn_wait_signal_desc*, jn_handle, jn_handle))(
        nDesc, (jn_wait_signal_desc*) descs, JN_PTR(comm), JN_PTR(stream));
}

/* ---- operations (the hot path: integers in, a result code out) */

static int jn_all_reduce(jn_long ctx, jn_long send, jn_long recv, jn_long count, int type, int op, jn_long comm, jn_long stream) {
    JN_GUARD_NCCL(ctx, ncclAllReduce);
    return JN_CALL(ctx, ncclAllReduce, int (*)(const void*, void*, size_t, int, int, jn_handle, jn_handle))(
        JN_PTR(send), JN_PTR(recv), (size_t) count, type, op, JN_PTR(comm), JN_PTR(stream));
}

static int jn_all_reduce_with_bias(jn_long ctx, jn_long send, jn_long recv, jn_long count, int type, int op, jn_long comm, jn_long stream, jn_long bias) {
    JN_GUARD_NCCL(ctx, ncclAllReduceWithBias);
    return JN_CALL(ctx, ncclAllReduceWithBias, int (*)(const void*, void*, size_t, int, int, jn_handle, jn_handle, const void*))(
        JN_PTR(send), JN_PTR(recv), (size_t) count, type, op, JN_PTR(comm), JN_PTR(stream), JN_PTR(bias));
}

static int jn_broadcast(jn_long ctx, jn_long send, jn_long recv, jn_long count, int type, int root, jn_long comm, jn_long stream) {
    JN_GUARD_NCCL(ctx, ncclBroadcast);
    return JN_CALL(ctx, ncclBroadcast, int (*)(const void*, void*, size_t, int, int, jn_handle, jn_handle))(
        JN_PTR(send), JN_PTR(recv), (size_t) count, type, root, JN_PTR(comm), JN_PTR(stream));
}

static int jn_reduce(jn_long ctx, jn_long send, jn_long recv, jn_long count, int type, int op, int root, jn_long comm, jn_long stream) {
    JN_GUARD_NCCL(ctx, ncclReduce);
    return JN_CALL(ctx, ncclReduce, int (*)(const void*, void*, size_t, int, int, int, jn_handle, jn_handle))(
        JN_PTR(send), JN_PTR(recv), (size_t) count, type, op, root, JN_PTR(comm), JN_PTR(stream));
}

static int jn_all_gather(jn_long ctx, jn_long send, jn_long recv, jn_long count, int type, jn_long comm, jn_long stream) {
    JN_GUARD_NCCL(ctx, ncclAllGather);
    return JN_CALL(ctx, ncclAllGather, int (*)(const void*, void*, size_t, int, jn_handle, jn_handle))(
        JN_PTR(send), JN_PTR(recv), (size_t) count, type, JN_PTR(comm), JN_PTR(stream));
}

static int jn_reduce_scatter(jn_long ctx, jn_long send, jn_long recv, jn_long count, int type, int op, jn_long comm, jn_long stream) {
    JN_GUARD_NCCL(ctx, ncclReduceScatter);
    return JN_CALL(ctx, ncclReduceScatter, int (*)(const void*, void*, size_t, int, int, jn_handle, jn_handle))(
        JN_PTR(send), JN_PTR(recv), (size_t) count, type, op, JN_PTR(comm), JN_PTR(stream));
}

static int jn_gather(jn_long ctx, jn_long send, jn_long recv, jn_long count, int type, int root, jn_long comm, jn_long stream) {
    JN_GUARD_NCCL(ctx, ncclGather);
    return JN_CALL(ctx, ncclGather, int (*)(const void*, void*, size_t, int, int, jn_handle, jn_handle))(
        JN_PTR(send), JN_PTR(recv), (size_t) count, type, root, JN_PTR(comm), JN_PTR(stream));
}

static int jn_scatter(jn_long ctx, jn_long send, jn_long recv, jn_long count, int type, int root, jn_long comm, jn_long stream) {
    JN_GUARD_NCCL(ctx, ncclScatter);
    return JN_CALL(ctx, ncclScatter, int (*)(const void*, void*, size_t, int, int, jn_handle, jn_handle))(
        JN_PTR(send), JN_PTR(recv), (size_t) count, type, root, JN_PTR(comm), JN_PTR(stream));
}

/* NCCL 2.28 names it ncclAlltoAll; RCCL has long had ncclAllToAll with the same shape. */
static int jn_all_to_all(jn_long ctx, jn_long send, jn_long recv, jn_long count, int type, jn_long comm, jn_long stream) {
    void* fn = JN_CTX(ctx)->nccl[JN_ncclAlltoAll];
    if (fn == NULL) fn = JN_CTX(ctx)->nccl[JN_ncclAllToAll];
    if (fn == NULL) return JN_MISSING;
    return ((int (*)(const void*, void*, size_t, int, jn_handle, jn_handle)) fn)(
        JN_PTR(send), JN_PTR(recv), (size_t) count, type, JN_PTR(comm), JN_PTR(stream));
}

/* The four arrays hold one entry per rank, in elements; size_t and jn_long have the same width on LP64. RCCL 2.29
 * names it ncclAlltoAllv and keeps ncclAllToAllv, deprecated, for older callers: the old name serves only where the
 * new one is missing. */
static int jn_all_to_allv(jn_long ctx, jn_long send, jn_long* sendCounts, jn_long* sendDispls, jn_long recv,
                          jn_long* recvCounts, jn_long* recvDispls, int type, jn_long comm, jn_long stream) {
    void* fn = JN_CTX(ctx)->nccl[JN_ncclAlltoAllv];
    if (fn == NULL) fn = JN_CTX(ctx)->nccl[JN_ncclAllToAllv];
    if (fn == NULL) return JN_MISSING;
    return ((int (*)(const void*, const size_t*, const size_t*, void*, const size_t*, const size_t*, int, jn_handle, jn_handle)) fn)(
        JN_PTR(send), (const size_t*) sendCounts, (const size_t*) sendDispls, JN_PTR(recv), (const size_t*) recvCounts,
        (const size_t*) recvDispls, type, JN_PTR(comm), JN_PTR(stream));
}

static int jn_send(jn_long ctx, jn_long send, jn_long count, int type, int peer, jn_long comm, jn_long stream) {
    JN_GUARD_NCCL(ctx, ncclSend);
    return JN_CALL(ctx, ncclSend, int (*)(const void*, size_t, int, int, jn_handle, jn_handle))(
        JN_PTR(send), (size_t) count, type, peer, JN_PTR(comm), JN_PTR(stream));
}

static int jn_recv(jn_long ctx, jn_long recv, jn_long count, int type, int peer, jn_long comm, jn_long stream) {
    JN_GUARD_NCCL(ctx, ncclRecv);
    return JN_CALL(ctx, ncclRecv, int (*)(void*, size_t, int, int, jn_handle, jn_handle))(
        JN_PTR(recv), (size_t) count, type, peer, JN_PTR(comm), JN_PTR(stream));
}

static int jn_group_start(jn_long ctx) {
    JN_GUARD_NCCL(ctx, ncclGroupStart);
    return JN_CALL(ctx, ncclGroupStart, jn_fn_void)();
}

static int jn_group_end(jn_long ctx) {
    JN_GUARD_NCCL(ctx, ncclGroupEnd);
    return JN_CALL(ctx, ncclGroupEnd, jn_fn_void)();
}

/* ncclSimInfo_t: size_t size, unsigned magic, unsigned version, float estimatedTime. */
typedef struct { size_t size; unsigned int magic; unsigned int version; float estimatedTime; } jn_sim_info;

static int jn_group_simulate_end(jn_long ctx, int version, float* estimatedMicros) {
    JN_GUARD_NCCL(ctx, ncclGroupSimulateEnd);
    jn_sim_info info;
    info.size = sizeof(info);
    info.magic = 0x74685283u;
    info.version = (unsigned int) version;
    info.estimatedTime = -1.0f;
    int r = JN_CALL(ctx, ncclGroupSimulateEnd, int (*)(jn_sim_info*))(&info);
    *estimatedMicros = info.estimatedTime;
    return r;
}

/* ---- runtime: devices and memory */

static int jn_rt_device_count(jn_long ctx, int* count) {
    JN_GUARD_RT(ctx, GetDeviceCount);
    return JN_RT(ctx, GetDeviceCount, jn_fn_int_ptr)(count);
}

static int jn_rt_set_device(jn_long ctx, int device) {
    JN_GUARD_RT(ctx, SetDevice);
    return JN_RT(ctx, SetDevice, jn_fn_int)(device);
}

static int jn_rt_get_device(jn_long ctx, int* device) {
    JN_GUARD_RT(ctx, GetDevice);
    return JN_RT(ctx, GetDevice, jn_fn_int_ptr)(device);
}

static int jn_rt_device_attribute(jn_long ctx, int* value, int attribute, int device) {
    JN_GUARD_RT(ctx, DeviceGetAttribute);
    return JN_RT(ctx, DeviceGetAttribute, int (*)(int*, int, int))(value, attribute, device);
}

static int jn_rt_pci_bus_id(jn_long ctx, signed char* out, int length, int device) {
    JN_GUARD_RT(ctx, DeviceGetPCIBusId);
    return JN_RT(ctx, DeviceGetPCIBusId, int (*)(char*, int, int))((char*) out, length, device);
}

/*
 * The device name. The properties structure's layout changes between runtime versions, but in CUDA and HIP alike
 * it starts with char name[256]; it is filled into a buffer far larger than either structure and only the name read.
 */
static int jn_rt_device_name(jn_long ctx, signed char* name, int length, int device) {
    void* fn = JN_CTX(ctx)->rt[JN_RT_GetDeviceProperties];
    if (fn == NULL) fn = JN_CTX(ctx)->rt[JN_RT_GetDevicePropertiesOld];
    if (fn == NULL) return JN_MISSING;
    char* properties = (char*) calloc(1, 65536);
    if (properties == NULL) return 2;
    int r = ((int (*)(void*, int)) fn)(properties, device);
    if (r == 0) {
        int n = length - 1 < 255 ? length - 1 : 255;
        memcpy(name, properties, n);
        name[n] = 0;
    }
    free(properties);
    return r;
}

static int jn_rt_mem_info(jn_long ctx, jn_long* freeBytes, jn_long* totalBytes) {
    JN_GUARD_RT(ctx, MemGetInfo);
    size_t f = 0, t = 0;
    int r = JN_RT(ctx, MemGetInfo, int (*)(size_t*, size_t*))(&f, &t);
    *freeBytes = (jn_long) f;
    *totalBytes = (jn_long) t;
    return r;
}

static int jn_rt_malloc(jn_long ctx, jn_long* address, jn_long bytes) {
    JN_GUARD_RT(ctx, Malloc);
    void* out = NULL;
    int r = JN_RT(ctx, Malloc, int (*)(void**, size_t))(&out, (size_t) bytes);
    *address = JN_LONG(out);
    return r;
}

static int jn_rt_free(jn_long ctx, jn_long address) {
    JN_GUARD_RT(ctx, Free);
    return JN_RT(ctx, Free, jn_fn_ptr)(JN_PTR(address));
}

static int jn_rt_host_alloc(jn_long ctx, jn_long* address, jn_long bytes, int flags) {
    JN_GUARD_RT(ctx, HostAlloc);
    void* out = NULL;
    int r = JN_RT(ctx, HostAlloc, int (*)(void**, size_t, unsigned int))(&out, (size_t) bytes, (unsigned int) flags);
    *address = JN_LONG(out);
    return r;
}

static int jn_rt_free_host(jn_long ctx, jn_long address) {
    JN_GUARD_RT(ctx, FreeHost);
    return JN_RT(ctx, FreeHost, jn_fn_ptr)(JN_PTR(address));
}

/* kind 4 = cudaMemcpyDefault / hipMemcpyDefault: the runtime infers the direction from the addresses. */
static int jn_rt_memcpy(jn_long ctx, jn_long dst, jn_long src, jn_long bytes, int kind) {
    JN_GUARD_RT(ctx, Memcpy);
    return JN_RT(ctx, Memcpy, int (*)(void*, const void*, size_t, int))(JN_PTR(dst), JN_PTR(src), (size_t) bytes, kind);
}

static int jn_rt_memcpy_async(jn_long ctx, jn_long dst, jn_long src, jn_long bytes, int kind, jn_long stream) {
    JN_GUARD_RT(ctx, MemcpyAsync);
    return JN_RT(ctx, MemcpyAsync, int (*)(void*, const void*, size_t, int, jn_handle))(JN_PTR(dst), JN_PTR(src), (size_t) bytes, kind, JN_PTR(stream));
}

static int jn_rt_memset_async(jn_long ctx, jn_long dst, int value, jn_long bytes, jn_long stream) {
    JN_GUARD_RT(ctx, MemsetAsync);
    return JN_RT(ctx, MemsetAsync, int (*)(void*, int, size_t, jn_handle))(JN_PTR(dst), value, (size_t) bytes, JN_PTR(stream));
}

/* ---- runtime: streams and events */

static int jn_rt_stream_create(jn_long ctx, jn_long* stream, int flags) {
    JN_GUARD_RT(ctx, StreamCreateWithFlags);
    jn_handle out = NULL;
    int r = JN_RT(ctx, StreamCreateWithFlags, int (*)(jn_handle*, unsigned int))(&out, (unsigned int) flags);
    *stream = JN_LONG(out);
    return r;
}

static int jn_rt_stream_destroy(jn_long ctx, jn_long stream) {
    JN_GUARD_RT(ctx, StreamDestroy);
    return JN_RT(ctx, StreamDestroy, jn_fn_ptr)(JN_PTR(stream));
}

static int jn_rt_stream_wait_event(jn_long ctx, jn_long stream, jn_long event) {
    JN_GUARD_RT(ctx, StreamWaitEvent);
    return JN_RT(ctx, StreamWaitEvent, int (*)(jn_handle, jn_handle, unsigned int))(JN_PTR(stream), JN_PTR(event), 0u);
}

static int jn_rt_stream_synchronize(jn_long ctx, jn_long stream) {
    JN_GUARD_RT(ctx, StreamSynchronize);
    return JN_RT(ctx, StreamSynchronize, jn_fn_ptr)(JN_PTR(stream));
}

static int jn_rt_event_create(jn_long ctx, jn_long* event, int flags) {
    JN_GUARD_RT(ctx, EventCreateWithFlags);
    jn_handle out = NULL;
    int r = JN_RT(ctx, EventCreateWithFlags, int (*)(jn_handle*, unsigned int))(&out, (unsigned int) flags);
    *event = JN_LONG(out);
    return r;
}

static int jn_rt_event_record(jn_long ctx, jn_long event, jn_long stream) {
    JN_GUARD_RT(ctx, EventRecord);
    return JN_RT(ctx, EventRecord, int (*)(jn_handle, jn_handle))(JN_PTR(event), JN_PTR(stream));
}

static int jn_rt_event_query(jn_long ctx, jn_long event) {
    JN_GUARD_RT(ctx, EventQuery);
    return JN_RT(ctx, EventQuery, jn_fn_ptr)(JN_PTR(event));
}

/*
 * The event thread's one crossing per round: queries n events and writes n raw runtime codes (0 done, 600 not
 * ready in CUDA and HIP alike, anything else an error).
 */
static int jn_rt_event_query_all(jn_long ctx, jn_long* events, int n, int* status) {
    JN_GUARD_RT(ctx, EventQuery);
    jn_fn_ptr query = JN_RT(ctx, EventQuery, jn_fn_ptr);
    for (int i = 0; i < n; i++) status[i] = query(JN_PTR(events[i]));
    return 0;
}

static int jn_rt_event_synchronize(jn_long ctx, jn_long event) {
    JN_GUARD_RT(ctx, EventSynchronize);
    return JN_RT(ctx, EventSynchronize, jn_fn_ptr)(JN_PTR(event));
}

static int jn_rt_event_elapsed(jn_long ctx, float* millis, jn_long start, jn_long end) {
    JN_GUARD_RT(ctx, EventElapsedTime);
    return JN_RT(ctx, EventElapsedTime, int (*)(float*, jn_handle, jn_handle))(millis, JN_PTR(start), JN_PTR(end));
}

static int jn_rt_event_destroy(jn_long ctx, jn_long event) {
    JN_GUARD_RT(ctx, EventDestroy);
    return JN_RT(ctx, EventDestroy, jn_fn_ptr)(JN_PTR(event));
}

/*
 * ---- runtime: graphs (captured steps). Capture records what the calling thread enqueues on the stream instead of
 * running it; the end instantiates the captured graph (the graph itself is freed at once: the executable keeps what it
 * needs). HIP's functions have CUDA's shapes.
 */
static int jn_rt_capture_begin(jn_long ctx, jn_long stream, int mode) {
    JN_GUARD_RT(ctx, StreamBeginCapture);
    return JN_RT(ctx, StreamBeginCapture, int (*)(jn_handle, int))(JN_PTR(stream), mode);
}

static int jn_rt_capture_end(jn_long ctx, jn_long stream, jn_long* exec) {
    JN_GUARD_RT(ctx, StreamEndCapture);
    JN_GUARD_RT(ctx, GraphInstantiateWithFlags);
    JN_GUARD_RT(ctx, GraphDestroy);
    jn_handle graph = NULL;
    int r = JN_RT(ctx, StreamEndCapture, int (*)(jn_handle, jn_handle*))(JN_PTR(stream), &graph);
    if (r != 0) return r;
    jn_handle out = NULL;
    r = JN_RT(ctx, GraphInstantiateWithFlags, int (*)(jn_handle*, jn_handle, unsigned long long))(&out, graph, 0ull);
    JN_RT(ctx, GraphDestroy, jn_fn_ptr)(graph);
    *exec = JN_LONG(out);
    return r;
}

static int jn_rt_graph_launch(jn_long ctx, jn_long exec, jn_long stream) {
    JN_GUARD_RT(ctx, GraphLaunch);
    return JN_RT(ctx, GraphLaunch, int (*)(jn_handle, jn_handle))(JN_PTR(exec), JN_PTR(stream));
}

static int jn_rt_graph_destroy(jn_long ctx, jn_long exec) {
    JN_GUARD_RT(ctx, GraphExecDestroy);
    return JN_RT(ctx, GraphExecDestroy, jn_fn_ptr)(JN_PTR(exec));
}

static const char* jn_rt_error_string(jn_long ctx, int code) {
    if (JN_CTX(ctx)->rt[JN_RT_GetErrorString] == NULL) return NULL;
    return JN_RT(ctx, GetErrorString, jn_fn_str_int)(code);
}

static int jn_rt_version(jn_long ctx, int* version) {
    JN_GUARD_RT(ctx, RuntimeGetVersion);
    return JN_RT(ctx, RuntimeGetVersion, jn_fn_int_ptr)(version);
}

#endif /* JCCL_NATIVE_H */
