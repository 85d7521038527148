/*
 * NCCL's profiler plugin interface, version 5 (NCCL 2.28 and 2.29 both look it up by the symbol name
 * "ncclProfiler_v5"), declared from its documented layout: the event-type bits, the event descriptor NCCL passes to
 * startEvent, and the table of functions a plugin exports. Only what jccl's plugin (jccl_profiler.h) and the test stub
 * of NCCL read is named; the rest keeps its size and place. Plain C, so the stub (gcc) and the JNI library (g++) share it.
 */
#ifndef JCCL_PROFILER_ABI_H
#define JCCL_PROFILER_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Event types, one bit each: the activation mask a plugin returns from init is their union. */
enum {
    JP_GROUP = 1 << 0,
    JP_COLL = 1 << 1,
    JP_P2P = 1 << 2,
    JP_PROXY_OP = 1 << 3,
    JP_PROXY_STEP = 1 << 4,
    JP_PROXY_CTRL = 1 << 5,
    JP_KERNEL_CH = 1 << 6,
    JP_NET_PLUGIN = 1 << 7,
    JP_GROUP_API = 1 << 8,
    JP_COLL_API = 1 << 9,
    JP_P2P_API = 1 << 10,
    JP_KERNEL_LAUNCH = 1 << 11
};

typedef struct {
    uint64_t type;   /* one JP_* bit */
    void* parentObj; /* the handle the plugin returned for the parent event (a Coll's CollApi, a ProxyOp's Coll) */
    int rank;
    union {
        struct { bool graphCaptured; int groupDepth; } groupApi;
        struct { const char* func; size_t count; const char* datatype; int root; void* stream; bool graphCaptured; } collApi;
        struct { const char* func; size_t count; const char* datatype; void* stream; bool graphCaptured; } p2pApi;
        struct { void* stream; } kernelLaunch;
        struct {
            uint64_t seqNumber; /* NCCL's count of earlier collectives of this function on the communicator */
            const char* func;
            const void* sendBuff;
            void* recvBuff;
            size_t count;
            int root;
            const char* datatype;
            uint8_t nChannels;
            uint8_t nWarps;
            const char* algo;
            const char* proto;
            void* parentGroup;
        } coll;
        struct { const char* func; void* buff; const char* datatype; size_t count; int peer; uint8_t nChannels; void* parentGroup; } p2p;
        struct { pid_t pid; uint8_t channelId; int peer; int nSteps; int chunkSize; int isSend; } proxyOp;
        struct { int step; } proxyStep;
        struct { uint8_t channelId; uint64_t pTimer; } kernelCh;
        struct { int64_t id; void* data; } netPlugin;
    };
} jp_event_descr;

/* The library's log function NCCL hands to init (unused: jccl logs through SLF4J). */
typedef void (*jp_logger)(int level, unsigned long flags, const char* file, int line, const char* fmt, ...);

/* What "ncclProfiler_v5" points at. Results are ncclResult_t values: 0 is success. */
typedef struct {
    const char* name;
    int (*init)(void** context, uint64_t commId, int* eActivationMask, const char* commName, int nNodes, int nranks,
                int rank, jp_logger logfn);
    int (*startEvent)(void* context, void** eHandle, jp_event_descr* eDescr);
    int (*stopEvent)(void* eHandle);
    int (*recordEventState)(void* eHandle, int eState, void* eStateArgs);
    int (*finalize)(void* context);
} jp_profiler_v5;

#endif /* JCCL_PROFILER_ABI_H */
