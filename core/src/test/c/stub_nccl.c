/*
 * A fake NCCL for the native layer's contract tests. It logs every call's arguments (see stub_log.h) and behaves
 * just enough for the driver: communicators are small structs, counts 1001..1006 make an operation fail with
 * result 1..6, a non-blocking communicator answers ncclInProgress and needs two ncclCommGetAsyncError polls.
 *
 * STUB_VERSION sets ncclGetVersion and, like the real library, which functions exist (windows from 2.27, one-sided
 * operations and ncclWinGetUserPtr from 2.29.2); STUB_MINIMAL leaves the optional functions out, as an old library would.
 *
 * Windows: ncclCommWindowRegister with bytes 1001..1006 fails with result 1..6, and with NO_SYMMETRIC_BYTES answers
 * success and a NULL window, as NCCL does on a communicator without symmetric-memory support. On a non-blocking
 * communicator it answers success at once and writes the window only when ncclCommGetAsyncError reports the
 * communicator done, as NCCL's background group job does. ncclSignal fails for peers 1001..1006, ncclWaitSignal when
 * its first descriptor's count is 1001..1006.
 */
#include "stub_log.h"
#include <limits.h>

#ifndef STUB_VERSION
#define STUB_VERSION 22809
#endif

typedef struct { char internal[128]; } stub_id;
/* deferred_slot/deferred_window: a window registration a non-blocking communicator finishes when no longer pending. */
typedef struct {
    int rank; int nranks; int device; int nonblocking; int pending; void** deferred_slot; void* deferred_window;
    void* profiler; int profiler_mask; /* the profiler plugin's context and event mask, if one was loaded */
} stub_comm;
static int next_op = 5;
static stub_comm* group_nonblocking[16];
static int group_count = 0;
static int group_depth = 0;
#include "stub_profiler.h"

static stub_comm* new_comm(int rank, int nranks, int device, int nonblocking) {
    stub_comm* c = (stub_comm*) calloc(1, sizeof(stub_comm));
    c->rank = rank;
    c->nranks = nranks;
    c->device = device;
    c->nonblocking = nonblocking;
    c->pending = nonblocking ? 2 : 0;
    stub_profiler_init(&c->profiler, &c->profiler_mask, rank, nranks, c);
    return c;
}

/* The config's bytes as the caller laid them out (its own size field says how many), and commName's text. */
static void log_config(const char* what, const void* config) {
    if (config == NULL) {
        stub_log("%s config=null", what);
        return;
    }
    size_t size;
    memcpy(&size, config, sizeof(size));
    const char* name = NULL;
    if (size >= 56) memcpy(&name, (const char*) config + 48, sizeof(name));
    stub_log("%s config=%s commName=%s", what, stub_hex(config, size), name ? name : "null");
}

static int config_nonblocking(const void* config) {
    int blocking;
    if (config == NULL) return 0;
    memcpy(&blocking, (const char*) config + 16, sizeof(blocking));
    return blocking == 0;
}

/* Result for an operation: counts 1001..1006 fail; non-blocking outside a group is in progress. */
static int op_result(size_t count, stub_comm* c) {
    if (count >= 1001 && count <= 1006) return (int) (count - 1000);
    if (c != NULL && c->nonblocking) {
        if (group_depth > 0) {
            if (group_count < 16) group_nonblocking[group_count++] = c;
            return 0;
        }
        c->pending = 2;
        return 7;
    }
    return 0;
}

/* What NCCL would see as it loads: jccl sets the jccl.nccl.env.* variables before dlopen. */
__attribute__((constructor)) static void stub_loaded(void) {
    const char* probe = getenv("NCCL_JCCL_STUB_PROBE");
    if (probe != NULL) stub_log("loaded with NCCL_JCCL_STUB_PROBE=%s", probe);
}

int ncclGetVersion(int* v) { *v = STUB_VERSION; return 0; }
const char* ncclGetErrorString(int code) {
    static char text[64];
    snprintf(text, sizeof(text), "stub error string %d", code);
    return text;
}
const char* ncclGetLastError(void* comm) { (void) comm; return "stub last error"; }
int ncclGetUniqueId(stub_id* id) {
    for (int i = 0; i < 128; i++) id->internal[i] = (char) (i * 7 + 1);
    stub_log("ncclGetUniqueId");
    return 0;
}
int ncclCommInitRankConfig(stub_comm** comm, int nranks, stub_id id, int rank, void* config) {
    stub_log("ncclCommInitRankConfig nranks=%d rank=%d id=%s", nranks, rank, stub_hex(&id, 128));
    log_config("ncclCommInitRankConfig", config);
    if (rank == 99) return 4;
    *comm = new_comm(rank, nranks, 0, config_nonblocking(config));
    return (*comm)->nonblocking ? 7 : 0;
}
int ncclCommInitAll(stub_comm** comms, int ndev, const int* devices) {
    for (int i = 0; i < ndev; i++) {
        stub_log("ncclCommInitAll ndev=%d device[%d]=%d", ndev, i, devices[i]);
        comms[i] = new_comm(i, ndev, devices[i], 0);
    }
    return 0;
}
int ncclCommGetAsyncError(stub_comm* c, int* result) {
    stub_log("ncclCommGetAsyncError comm=%p pending=%d", (void*) c, c->pending);
    if (c->pending > 0) {
        c->pending--;
        *result = 7;
    } else {
        if (c->deferred_slot != NULL) {
            *c->deferred_slot = c->deferred_window;
            c->deferred_slot = NULL;
        }
        *result = 0;
    }
    return 0;
}
int ncclCommCount(stub_comm* c, int* n) { *n = c->nranks; return 0; }
int ncclCommCuDevice(stub_comm* c, int* d) { *d = c->device; return 0; }
int ncclCommUserRank(stub_comm* c, int* r) { *r = c->rank; return 0; }
int ncclCommFinalize(stub_comm* c) { stub_log("ncclCommFinalize comm=%p", (void*) c); return 0; }
int ncclCommDestroy(stub_comm* c) {
    stub_log("ncclCommDestroy comm=%p", (void*) c);
    stub_profiler_finalize(c->profiler);
    return 0;
}
int ncclCommAbort(stub_comm* c) { stub_log("ncclCommAbort comm=%p", (void*) c); return 0; }
int ncclCommSplit(stub_comm* c, int color, int key, stub_comm** out, void* config) {
    stub_log("ncclCommSplit comm=%p color=%d key=%d", (void*) c, color, key);
    log_config("ncclCommSplit", config);
    *out = color == -1 ? NULL : new_comm(key, 1, c->device, config ? config_nonblocking(config) : c->nonblocking);
    return 0;
}
int ncclCommRegister(stub_comm* c, void* buffer, size_t size, void** handle) {
    stub_log("ncclCommRegister comm=%p buffer=%p bytes=%zu", (void*) c, buffer, size);
    *handle = (void*) 0x1234;
    return 0;
}
int ncclCommDeregister(stub_comm* c, void* handle) { stub_log("ncclCommDeregister comm=%p handle=%p", (void*) c, handle); return 0; }
int ncclRedOpCreatePreMulSum(int* op, void* scalar, int type, int residence, stub_comm* c) {
    static const int sizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
    if (residence == 1) {
        stub_log("ncclRedOpCreatePreMulSum type=%d residence=1 scalar=%s comm=%p", type, stub_hex(scalar, sizes[type]), (void*) c);
    } else {
        stub_log("ncclRedOpCreatePreMulSum type=%d residence=%d scalar=%p comm=%p", type, residence, scalar, (void*) c);
    }
    *op = next_op++;
    return 0;
}
int ncclRedOpDestroy(int op, stub_comm* c) { stub_log("ncclRedOpDestroy op=%d comm=%p", op, (void*) c); return 0; }

int ncclAllReduce(const void* s, void* r, size_t n, int t, int op, stub_comm* c, void* st) {
    stub_log("ncclAllReduce send=%p recv=%p count=%zu type=%d op=%d comm=%p stream=%p", s, r, n, t, op, (void*) c, st);
    stub_profile(c->profiler, c->profiler_mask, c->rank, JP_COLL_API, "AllReduce", n, 0);
    return op_result(n, c);
}
int ncclBroadcast(const void* s, void* r, size_t n, int t, int root, stub_comm* c, void* st) {
    stub_log("ncclBroadcast send=%p recv=%p count=%zu type=%d root=%d comm=%p stream=%p", s, r, n, t, root, (void*) c, st);
    return op_result(n, c);
}
int ncclReduce(const void* s, void* r, size_t n, int t, int op, int root, stub_comm* c, void* st) {
    stub_log("ncclReduce send=%p recv=%p count=%zu type=%d op=%d root=%d comm=%p stream=%p", s, r, n, t, op, root, (void*) c, st);
    return op_result(n, c);
}
int ncclAllGather(const void* s, void* r, size_t n, int t, stub_comm* c, void* st) {
    stub_log("ncclAllGather send=%p recv=%p count=%zu type=%d comm=%p stream=%p", s, r, n, t, (void*) c, st);
    return op_result(n, c);
}
int ncclReduceScatter(const void* s, void* r, size_t n, int t, int op, stub_comm* c, void* st) {
    stub_log("ncclReduceScatter send=%p recv=%p count=%zu type=%d op=%d comm=%p stream=%p", s, r, n, t, op, (void*) c, st);
    return op_result(n, c);
}
int ncclSend(const void* s, size_t n, int t, int peer, stub_comm* c, void* st) {
    stub_log("ncclSend send=%p count=%zu type=%d peer=%d comm=%p stream=%p", s, n, t, peer, (void*) c, st);
    stub_profile(c->profiler, c->profiler_mask, c->rank, JP_P2P_API, "Send", n, peer);
    return op_result(n, c);
}
int ncclRecv(void* r, size_t n, int t, int peer, stub_comm* c, void* st) {
    stub_log("ncclRecv recv=%p count=%zu type=%d peer=%d comm=%p stream=%p", r, n, t, peer, (void*) c, st);
    stub_profile(c->profiler, c->profiler_mask, c->rank, JP_P2P_API, "Recv", n, peer);
    return op_result(n, c);
}
int ncclGroupStart(void) { group_depth++; stub_log("ncclGroupStart"); return 0; }
int ncclGroupEnd(void) {
    stub_log("ncclGroupEnd");
    if (--group_depth > 0) return 0;
    stub_profile_group_end();
    int result = group_count > 0 ? 7 : 0;
    for (int i = 0; i < group_count; i++) group_nonblocking[i]->pending = 2;
    group_count = 0;
    return result;
}

#ifndef STUB_MINIMAL
int ncclCommInitRankScalable(stub_comm** comm, int nranks, int rank, int nId, stub_id* ids, void* config) {
    stub_log("ncclCommInitRankScalable nranks=%d rank=%d nId=%d ids=%s", nranks, rank, nId, stub_hex(ids, 128 * (size_t) nId));
    log_config("ncclCommInitRankScalable", config);
    *comm = new_comm(rank, nranks, 0, config_nonblocking(config));
    return (*comm)->nonblocking ? 7 : 0;
}
int ncclCommShrink(stub_comm* c, int* excluded, int count, stub_comm** out, void* config, int flags) {
    char list[256] = "";
    for (int i = 0; i < count; i++) sprintf(list + strlen(list), "%s%d", i ? "," : "", excluded[i]);
    stub_log("ncclCommShrink comm=%p excluded=%s count=%d flags=%d", (void*) c, list, count, flags);
    log_config("ncclCommShrink", config);
    *out = new_comm(0, c->nranks - count, c->device, 0);
    return 0;
}
int ncclMemAlloc(void** p, size_t n) { *p = malloc(n); stub_log("ncclMemAlloc bytes=%zu ptr=%p", n, *p); return 0; }
int ncclMemFree(void* p) { stub_log("ncclMemFree ptr=%p", p); free(p); return 0; }
typedef struct { size_t size; unsigned magic; unsigned version; float estimatedTime; } stub_sim_info;
int ncclGroupSimulateEnd(stub_sim_info* info) {
    group_depth--;
    group_count = 0;
    stub_log("ncclGroupSimulateEnd size=%zu magic=%x version=%u", info->size, info->magic, info->version);
    info->estimatedTime = 12.5f;
    return 0;
}
int ncclGather(const void* s, void* r, size_t n, int t, int root, stub_comm* c, void* st) {
    stub_log("ncclGather send=%p recv=%p count=%zu type=%d root=%d comm=%p stream=%p", s, r, n, t, root, (void*) c, st);
    return op_result(n, c);
}
int ncclScatter(const void* s, void* r, size_t n, int t, int root, stub_comm* c, void* st) {
    stub_log("ncclScatter send=%p recv=%p count=%zu type=%d root=%d comm=%p stream=%p", s, r, n, t, root, (void*) c, st);
    return op_result(n, c);
}
int ncclAlltoAll(const void* s, void* r, size_t n, int t, stub_comm* c, void* st) {
    stub_log("ncclAlltoAll send=%p recv=%p count=%zu type=%d comm=%p stream=%p", s, r, n, t, (void*) c, st);
    return op_result(n, c);
}
static int log_alltoallv(const char* name, const void* s, const size_t* sc, const size_t* sd, void* r, const size_t* rc,
                         const size_t* rd, int t, stub_comm* c, void* st) {
    char text[512] = "";
    for (int i = 0; i < c->nranks; i++) {
        sprintf(text + strlen(text), "%s%zu/%zu/%zu/%zu", i ? "," : "", sc[i], sd[i], rc[i], rd[i]);
    }
    stub_log("%s send=%p recv=%p counts=%s type=%d comm=%p stream=%p", name, s, r, text, t, (void*) c, st);
    return 0;
}
/* RCCL 2.29's name; STUB_OLD_ALLTOALLV leaves it out, as older RCCL (only the deprecated name below) would. */
#ifndef STUB_OLD_ALLTOALLV
int ncclAlltoAllv(const void* s, const size_t* sc, const size_t* sd, void* r, const size_t* rc, const size_t* rd, int t,
                  stub_comm* c, void* st) {
    return log_alltoallv("ncclAlltoAllv", s, sc, sd, r, rc, rd, t, c, st);
}
#endif
int ncclAllToAllv(const void* s, const size_t* sc, const size_t* sd, void* r, const size_t* rc, const size_t* rd, int t,
                  stub_comm* c, void* st) {
    return log_alltoallv("ncclAllToAllv", s, sc, sd, r, rc, rd, t, c, st);
}
int ncclAllReduceWithBias(const void* s, void* r, size_t n, int t, int op, stub_comm* c, void* st, const void* bias) {
    stub_log("ncclAllReduceWithBias send=%p recv=%p count=%zu type=%d op=%d comm=%p stream=%p bias=%p", s, r, n, t, op, (void*) c, st, bias);
    return op_result(n, c);
}
int ncclCommSuspend(stub_comm* c, int flags) { stub_log("ncclCommSuspend comm=%p flags=%d", (void*) c, flags); return 0; }
int ncclCommResume(stub_comm* c) { stub_log("ncclCommResume comm=%p", (void*) c); return 0; }
int ncclCommMemStats(stub_comm* c, int stat, unsigned long long* value) { (void) c; *value = 1000 + stat; return 0; }
int ncclCommGetUniqueId(stub_comm* c, stub_id* id) {
    stub_log("ncclCommGetUniqueId comm=%p", (void*) c);
    for (int i = 0; i < 128; i++) id->internal[i] = (char) (127 - i);
    return 0;
}
int ncclCommGrow(stub_comm* c, int nranks, const stub_id* id, int rank, stub_comm** out, void* config) {
    stub_log("ncclCommGrow comm=%p nranks=%d id=%s rank=%d", (void*) c, nranks, id ? stub_hex(id, 128) : "null", rank);
    log_config("ncclCommGrow", config);
    *out = new_comm(c->rank, nranks, c->device, 0);
    return 0;
}
int ncclCommRevoke(stub_comm* c, int flags) { stub_log("ncclCommRevoke comm=%p flags=%d", (void*) c, flags); return 0; }

#if STUB_VERSION >= 22700
#define NO_SYMMETRIC_BYTES ((size_t) 4095 * 4096)
typedef struct { void* user; size_t bytes; int flags; } stub_window;

int ncclCommWindowRegister(stub_comm* c, void* buffer, size_t size, void** win, int flags) {
    stub_log("ncclCommWindowRegister comm=%p buffer=%p bytes=%zu flags=%d", (void*) c, buffer, size, flags);
    *win = NULL;
    if (size >= 1001 && size <= 1006) return (int) (size - 1000);
    if (size == NO_SYMMETRIC_BYTES) return 0;
    stub_window* w = (stub_window*) calloc(1, sizeof(stub_window));
    w->user = buffer;
    w->bytes = size;
    w->flags = flags;
    if (c->nonblocking) {
        c->deferred_slot = win;
        c->deferred_window = w;
        c->pending = 2;
    } else {
        *win = w;
    }
    return 0;
}
int ncclCommWindowDeregister(stub_comm* c, stub_window* w) {
    stub_log("ncclCommWindowDeregister comm=%p window=%p", (void*) c, (void*) w);
    free(w);
    return 0;
}
#endif

#if STUB_VERSION >= 22902
int ncclWinGetUserPtr(stub_comm* c, stub_window* w, void** out) {
    stub_log("ncclWinGetUserPtr comm=%p window=%p", (void*) c, (void*) w);
    *out = w->user;
    return 0;
}
int ncclPutSignal(const void* s, size_t n, int t, int peer, stub_window* w, size_t offset, int sigIdx, int ctx,
                  unsigned int flags, stub_comm* c, void* st) {
    stub_log("ncclPutSignal send=%p count=%zu type=%d peer=%d window=%p offset=%zu sigIdx=%d ctx=%d flags=%u comm=%p stream=%p",
             s, n, t, peer, (void*) w, offset, sigIdx, ctx, flags, (void*) c, st);
    return op_result(n, c);
}
int ncclSignal(int peer, int sigIdx, int ctx, unsigned int flags, stub_comm* c, void* st) {
    stub_log("ncclSignal peer=%d sigIdx=%d ctx=%d flags=%u comm=%p stream=%p", peer, sigIdx, ctx, flags, (void*) c, st);
    return op_result(peer > 0 ? (size_t) peer : 0, c);
}
typedef struct { int opCnt; int peer; int sigIdx; int ctx; } stub_wait_desc;
int ncclWaitSignal(int nDesc, stub_wait_desc* descs, stub_comm* c, void* st) {
    char text[512] = "";
    for (int i = 0; i < nDesc && strlen(text) < sizeof(text) - 64; i++) {
        sprintf(text + strlen(text), "%s%d/%d/%d/%d", i ? "," : "", descs[i].opCnt, descs[i].peer, descs[i].sigIdx, descs[i].ctx);
    }
    stub_log("ncclWaitSignal nDesc=%d descs=%s comm=%p stream=%p", nDesc, text, (void*) c, st);
    return op_result(nDesc > 0 && descs[0].opCnt > 0 ? (size_t) descs[0].opCnt : 0, c);
}
#endif
#if STUB_VERSION >= 22800
/*
 * Device communicators: the requirements are logged as bytes (56 of them before 2.29, the header's size from 2.29);
 * lsaBarrierCount 1001..1006 fails with result 1..6. The device communicator written has rank, nRanks, lsaRank = rank,
 * lsaSize = nRanks and the requested GIN contexts, signals and counters where each version keeps them.
 */
int ncclDevCommCreate(stub_comm* c, const char* reqs, char* out) {
    size_t size = 56;
    int base = 0;
#if STUB_VERSION >= 22900
    memcpy(&size, reqs, sizeof(size));
    base = 16;
#endif
    stub_log("ncclDevCommCreate comm=%p requirements=%s", (void*) c, stub_hex(reqs, size));
    int barriers, contexts, signals, counters;
    memcpy(&barriers, reqs + base + 24, 4);
    memcpy(&contexts, reqs + base + 44, 4);
    memcpy(&signals, reqs + base + 48, 4);
    memcpy(&counters, reqs + base + 52, 4);
    if (barriers >= 1001 && barriers <= 1006) return barriers - 1000;
    memcpy(out, &c->rank, 4);
    memcpy(out + 4, &c->nranks, 4);
    memcpy(out + 12, &c->rank, 4);
    memcpy(out + 16, &c->nranks, 4);
    memcpy(out + 180, &signals, 4);
    memcpy(out + 188, &counters, 4);
#if STUB_VERSION >= 22900
    memcpy(out + 200, &contexts, 4);
#else
    out[136] = (char) contexts;
#endif
    return 0;
}
int ncclDevCommDestroy(stub_comm* c, const char* devComm) {
    int rank;
    memcpy(&rank, devComm, 4);
    stub_log("ncclDevCommDestroy comm=%p rank=%d", (void*) c, rank);
    return 0;
}
#endif

#if STUB_VERSION >= 22900
/* Checks the versioned header, then reports device API support without multimem or GIN. */
int ncclCommQueryProperties(stub_comm* c, char* p) {
    size_t size;
    unsigned magic, version;
    memcpy(&size, p, sizeof(size));
    memcpy(&magic, p + 8, 4);
    memcpy(&version, p + 12, 4);
    stub_log("ncclCommQueryProperties comm=%p size=%zu magic=%x version=%u", (void*) c, size, magic, version);
    if (magic != 0xcafebeefu || size < 52) return 4;
    int ints[4] = {c->rank, c->nranks, c->device, c->device};
    memcpy(p + 16, ints, sizeof(ints));
    p[32] = 1;
    p[33] = 0;
    int gin = 0, teams = 1;
    memcpy(p + 36, &gin, 4);
    memcpy(p + 40, &teams, 4);
    p[44] = 1;
    memcpy(p + 48, &gin, 4);
    return 0;
}
#endif
#endif
