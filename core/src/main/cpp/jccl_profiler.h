/*
 * jccl's NCCL profiler plugin, compiled into the JNI library itself: with jccl.nccl.profiler=on, Java points
 * NCCL_PROFILER_PLUGIN at this library's own file, so NCCL's dlopen returns the library the JVM already loaded and
 * its events land in the state below, which Java drains.
 *
 * Attribution: before the library calls of one jccl operation the launch thread tags itself (jn_profiler_tag) with
 * the communicator's key and the operation's sequence number. API events (GroupApi, CollApi, P2pApi, KernelLaunch)
 * start on that thread and take its tag; an event whose parent is one of ours (a Coll under its CollApi, a ProxyOp
 * under its Coll) takes the parent's, whatever thread NCCL starts it on.
 *
 * Memory is fixed: live events occupy slots of a pool (a full pool drops the event: NCCL is given no handle), and a
 * stopped event becomes a record in a ring Java drains (a full ring drops the record). Both count what they drop.
 * A slot is reused only once stopped and JP_SLOTS later events started, so a parent NCCL reads right after stopping
 * it (a CollApi stops before its Coll starts) still holds its tag.
 */
#ifndef JCCL_PROFILER_H
#define JCCL_PROFILER_H

#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "jccl_profiler_abi.h"

#define JP_SLOTS 8192
#define JP_RING 8192

/* One finished event, as Java reads it (little-endian, 128 bytes; layout mirrored in NcclProfiler.java). */
typedef struct {
    int64_t start_nanos;  /* CLOCK_MONOTONIC, the clock of System.nanoTime on Linux */
    int64_t stop_nanos;
    int64_t comm_key;     /* jccl's key of the communicator, -1 if the event came outside a jccl operation */
    int64_t sequence;     /* jccl's sequence number of the operation, -1 likewise */
    uint64_t comm_hash;   /* NCCL's id of the communicator (init's commId) */
    int64_t nccl_seq;     /* Coll: NCCL's seqNumber; -1 otherwise */
    int64_t count;        /* elements (API, Coll, P2p), bytes (ProxyOp); -1 if none */
    int32_t type;         /* one JP_* bit */
    int32_t rank;
    int32_t peer;         /* root or peer; -1 if none */
    int32_t channels;     /* Coll/P2p: channels; ProxyOp: its channel; -1 if none */
    char func[16];
    char datatype[16];
    char algo[12];
    char proto[12];
} jp_record;

typedef struct {
    jp_record rec;
    int live; /* 1 from startEvent to stopEvent */
} jp_slot;

typedef struct {
    uint64_t comm_hash;
    int rank;
} jp_context;

static jp_slot jp_slots[JP_SLOTS];
static uint64_t jp_next_slot;
static jp_record jp_ring[JP_RING];
static uint64_t jp_ring_head; /* next record to drain */
static uint64_t jp_ring_tail; /* next record to write */
static int jp_ring_lock;
static int jp_mask;           /* the activation mask init hands NCCL; 0 until Java enables the plugin */
static int64_t jp_contexts;   /* communicators NCCL initialised the plugin for */
static int64_t jp_recorded;   /* records written to the ring */
static int64_t jp_dropped;    /* events or records lost to a full pool or ring */
static __thread int64_t jp_tag_comm = -1;
static __thread int64_t jp_tag_sequence = -1;

static int64_t jp_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t) t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void jp_copy(char* dst, size_t size, const char* src) {
    if (src == NULL) src = "";
    strncpy(dst, src, size - 1);
    dst[size - 1] = 0;
}

/* A parent pointer NCCL hands back is ours if it points at a slot of this process's pool. */
static jp_slot* jp_own(void* p) {
    uintptr_t at = (uintptr_t) p, first = (uintptr_t) jp_slots;
    if (at < first || at >= first + sizeof(jp_slots) || (at - first) % sizeof(jp_slot) != 0) return NULL;
    return (jp_slot*) p;
}

static jp_slot* jp_take_slot(void) {
    for (int tries = 0; tries < 16; tries++) {
        jp_slot* s = &jp_slots[__atomic_fetch_add(&jp_next_slot, 1, __ATOMIC_RELAXED) % JP_SLOTS];
        int idle = 0;
        if (__atomic_compare_exchange_n(&s->live, &idle, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) return s;
    }
    return NULL;
}

static void jp_lock(void) {
    while (__atomic_exchange_n(&jp_ring_lock, 1, __ATOMIC_ACQUIRE)) {
        while (__atomic_load_n(&jp_ring_lock, __ATOMIC_RELAXED)) { }
    }
}

static void jp_unlock(void) { __atomic_store_n(&jp_ring_lock, 0, __ATOMIC_RELEASE); }

static int jp_init(void** context, uint64_t commId, int* mask, const char* commName, int nNodes, int nranks, int rank,
                   jp_logger logfn) {
    (void) commName; (void) nNodes; (void) nranks; (void) logfn;
    jp_context* c = (jp_context*) calloc(1, sizeof(jp_context));
    if (c == NULL) return 1; /* NCCL goes on without the plugin for this communicator */
    c->comm_hash = commId;
    c->rank = rank;
    *context = c;
    *mask = __atomic_load_n(&jp_mask, __ATOMIC_RELAXED);
    __atomic_fetch_add(&jp_contexts, 1, __ATOMIC_RELAXED);
    return 0;
}

static int jp_start(void* context, void** handle, jp_event_descr* d) {
    *handle = NULL;
    if (context == NULL) return 0;
    jp_slot* s = jp_take_slot();
    if (s == NULL) {
        __atomic_fetch_add(&jp_dropped, 1, __ATOMIC_RELAXED);
        return 0;
    }
    jp_record* r = &s->rec;
    memset(r, 0, sizeof(*r));
    r->start_nanos = jp_now();
    r->comm_hash = ((jp_context*) context)->comm_hash;
    r->type = (int32_t) d->type;
    r->rank = d->rank;
    r->nccl_seq = r->count = -1;
    r->peer = r->channels = -1;
    /* A ProxyOp of another process carries that process's parent pointer: never read it. */
    jp_slot* parent = d->type == JP_PROXY_OP && d->proxyOp.pid != getpid() ? NULL : jp_own(d->parentObj);
    r->comm_key = parent != NULL ? parent->rec.comm_key : jp_tag_comm;
    r->sequence = parent != NULL ? parent->rec.sequence : jp_tag_sequence;
    switch (d->type) {
        case JP_COLL_API:
            jp_copy(r->func, sizeof(r->func), d->collApi.func);
            jp_copy(r->datatype, sizeof(r->datatype), d->collApi.datatype);
            r->count = (int64_t) d->collApi.count;
            r->peer = d->collApi.root;
            break;
        case JP_P2P_API:
            jp_copy(r->func, sizeof(r->func), d->p2pApi.func);
            jp_copy(r->datatype, sizeof(r->datatype), d->p2pApi.datatype);
            r->count = (int64_t) d->p2pApi.count;
            break;
        case JP_COLL:
            jp_copy(r->func, sizeof(r->func), d->coll.func);
            jp_copy(r->datatype, sizeof(r->datatype), d->coll.datatype);
            jp_copy(r->algo, sizeof(r->algo), d->coll.algo);
            jp_copy(r->proto, sizeof(r->proto), d->coll.proto);
            r->nccl_seq = (int64_t) d->coll.seqNumber;
            r->count = (int64_t) d->coll.count;
            r->peer = d->coll.root;
            r->channels = d->coll.nChannels;
            break;
        case JP_P2P:
            jp_copy(r->func, sizeof(r->func), d->p2p.func);
            jp_copy(r->datatype, sizeof(r->datatype), d->p2p.datatype);
            r->count = (int64_t) d->p2p.count;
            r->peer = d->p2p.peer;
            r->channels = d->p2p.nChannels;
            break;
        case JP_PROXY_OP:
            jp_copy(r->func, sizeof(r->func), d->proxyOp.isSend ? "Send" : "Recv");
            r->count = (int64_t) d->proxyOp.nSteps * d->proxyOp.chunkSize;
            r->peer = d->proxyOp.peer;
            r->channels = d->proxyOp.channelId;
            break;
        default: /* GroupApi, KernelLaunch, Group: what they are and when is all they say */
            break;
    }
    *handle = s;
    return 0;
}

static int jp_stop(void* handle) {
    jp_slot* s = jp_own(handle);
    if (s == NULL) return 0;
    s->rec.stop_nanos = jp_now();
    jp_lock();
    if (jp_ring_tail - jp_ring_head < JP_RING) {
        jp_ring[jp_ring_tail % JP_RING] = s->rec;
        jp_ring_tail++;
        jp_recorded++;
    } else {
        jp_dropped++;
    }
    jp_unlock();
    __atomic_store_n(&s->live, 0, __ATOMIC_RELEASE);
    return 0;
}

static int jp_record_state(void* handle, int state, void* args) {
    (void) handle; (void) state; (void) args;
    return 0;
}

static int jp_finalize(void* context) {
    free(context);
    return 0;
}

/* The table NCCL finds with dlsym: exported from the JNI library whatever the build's default visibility. */
extern "C" {
__attribute__((visibility("default"))) jp_profiler_v5 ncclProfiler_v5 = {
    "jccl", jp_init, jp_start, jp_stop, jp_record_state, jp_finalize
};
}

/* ---- what Java calls */

/* The file this library was loaded from: what NCCL_PROFILER_PLUGIN must name. NULL if the loader cannot tell. */
static const char* jn_profiler_library() {
    Dl_info info;
    if (!dladdr((void*) &ncclProfiler_v5, &info) || info.dli_fname == NULL) return NULL;
    return info.dli_fname;
}

/* The events NCCL reports to communicators created from now on; 0 reports none. */
static void jn_profiler_enable(int mask) { __atomic_store_n(&jp_mask, mask, __ATOMIC_RELAXED); }

/* Attributes the calling thread's next library calls to (communicator key, sequence); (-1, -1) ends that. */
static void jn_profiler_tag(long long comm_key, long long sequence) {
    jp_tag_comm = comm_key;
    jp_tag_sequence = sequence;
}

/* Moves up to max records, oldest first, into out (max * sizeof(jp_record) bytes); returns how many. */
static int jn_profiler_drain(signed char* out, int max) {
    int n = 0;
    jp_lock();
    while (n < max && jp_ring_head < jp_ring_tail) {
        memcpy(out + (size_t) n * sizeof(jp_record), &jp_ring[jp_ring_head % JP_RING], sizeof(jp_record));
        jp_ring_head++;
        n++;
    }
    jp_unlock();
    return n;
}

/* out[0] communicators initialised, out[1] records written, out[2] events or records dropped. */
static void jn_profiler_counts(long long* out) {
    jp_lock();
    out[0] = __atomic_load_n(&jp_contexts, __ATOMIC_RELAXED);
    out[1] = jp_recorded;
    out[2] = __atomic_load_n(&jp_dropped, __ATOMIC_RELAXED);
    jp_unlock();
}

static int jn_profiler_record_bytes() { return (int) sizeof(jp_record); }

#endif /* JCCL_PROFILER_H */
