/*
 * The NCCL stub's side of the profiler plugin interface (version 5), as NCCL 2.28/2.29 drive it: the plugin is the
 * library NCCL_PROFILER_PLUGIN names, opened at the first communicator and initialised for each; an operation outside
 * a group reports GroupApi (around the call), its CollApi or P2pApi (stopped before the task starts), a KernelLaunch
 * under the GroupApi, then its Coll or P2p task whose parent is the stopped API event. The task events start on a
 * thread of their own, as NCCL's host callbacks may, so only the parent can attribute them. Inside ncclGroupStart/End
 * one GroupApi spans the group. Built with STUB_NO_PROFILER, it loads no plugin. Nothing here is logged: the call log stays what the contract tests expect.
 */
#ifndef STUB_PROFILER_H
#define STUB_PROFILER_H
#include <pthread.h>
#include "../../main/cpp/jccl_profiler_abi.h"

static jp_profiler_v5* stub_plugin;
static int stub_plugin_looked;
static void* stub_group_api;   /* the open GroupApi of an explicit group */
static uint64_t stub_seq[16];  /* NCCL's per-function collective counters (one communicator is enough here) */

static void stub_profiler_init(void** context, int* mask, int rank, int nranks, const void* comm) {
#ifdef STUB_NO_PROFILER /* an NCCL that does not load the plugin */
    stub_plugin_looked = 1;
#endif
    if (!stub_plugin_looked) {
        stub_plugin_looked = 1;
        const char* name = getenv("NCCL_PROFILER_PLUGIN");
        void* lib = name == NULL ? NULL : dlopen(name, RTLD_NOW | RTLD_LOCAL);
        stub_plugin = lib == NULL ? NULL : (jp_profiler_v5*) dlsym(lib, "ncclProfiler_v5");
    }
    *context = NULL;
    *mask = 0;
    if (stub_plugin != NULL) stub_plugin->init(context, 0xc0ffee00u + (uintptr_t) comm % 256, mask, "", 1, nranks, rank, NULL);
}

static void stub_profiler_finalize(void* context) {
    if (stub_plugin != NULL && context != NULL) stub_plugin->finalize(context);
}

typedef struct { void* context; jp_event_descr descr; } stub_task;

static void* stub_run_task(void* arg) {
    stub_task* t = (stub_task*) arg;
    void* handle = NULL;
    stub_plugin->startEvent(t->context, &handle, &t->descr);
    if (handle != NULL) stub_plugin->stopEvent(handle);
    return NULL;
}

/* One operation's events: api is JP_COLL_API or JP_P2P_API; peer is the root or the peer. */
static void stub_profile(void* context, int mask, int rank, int api, const char* func, size_t count, int peer) {
    if (stub_plugin == NULL || context == NULL) return;
    jp_event_descr d;
    void* group_api = stub_group_api;
    if (group_api == NULL && (mask & JP_GROUP_API)) {
        memset(&d, 0, sizeof(d));
        d.type = JP_GROUP_API;
        d.rank = rank;
        stub_plugin->startEvent(context, &group_api, &d);
    }
    void* call = NULL;
    memset(&d, 0, sizeof(d));
    d.type = (uint64_t) api;
    d.rank = rank;
    if (api == JP_COLL_API) {
        d.collApi.func = func; d.collApi.count = count; d.collApi.datatype = "ncclFloat32"; d.collApi.root = peer;
    } else {
        d.p2pApi.func = func; d.p2pApi.count = count; d.p2pApi.datatype = "ncclFloat32";
    }
    if (mask & api) stub_plugin->startEvent(context, &call, &d);
    if (call != NULL) stub_plugin->stopEvent(call);
    void* launch = NULL;
    memset(&d, 0, sizeof(d));
    d.type = JP_KERNEL_LAUNCH;
    d.parentObj = group_api;
    if (mask & JP_KERNEL_LAUNCH) stub_plugin->startEvent(context, &launch, &d);
    if (launch != NULL) stub_plugin->stopEvent(launch);
    stub_task task = {context, {0}};
    task.descr.parentObj = call;
    task.descr.rank = rank;
    if (api == JP_COLL_API) {
        task.descr.type = JP_COLL;
        task.descr.coll.seqNumber = stub_seq[0]++;
        task.descr.coll.func = func; task.descr.coll.count = count; task.descr.coll.root = peer;
        task.descr.coll.datatype = "ncclFloat32"; task.descr.coll.nChannels = 2; task.descr.coll.algo = "RING";
        task.descr.coll.proto = "SIMPLE";
    } else {
        task.descr.type = JP_P2P;
        task.descr.p2p.func = func; task.descr.p2p.count = count; task.descr.p2p.peer = peer;
        task.descr.p2p.datatype = "ncclFloat32"; task.descr.p2p.nChannels = 1;
    }
    if (mask & (int) task.descr.type) {
        pthread_t worker;
        if (pthread_create(&worker, NULL, stub_run_task, &task) == 0) pthread_join(worker, NULL);
    }
    if (stub_group_api == NULL && group_api != NULL) {
        if (group_depth > 0) stub_group_api = group_api; /* stopped at the outermost ncclGroupEnd */
        else stub_plugin->stopEvent(group_api);
    }
}

static void stub_profile_group_end(void) {
    if (group_depth == 0 && stub_group_api != NULL) {
        stub_plugin->stopEvent(stub_group_api);
        stub_group_api = NULL;
    }
}
#endif
