/* A fake CUDA runtime: "device" memory is host memory, so copies can be checked; events report fixed statuses. */
#include "stub_log.h"

typedef struct { int id; unsigned flags; } stub_event;
typedef struct { int id; unsigned flags; } stub_stream;
static int current_device = 0;
static int next_event = 1;
static int next_stream = 1;

int cudaGetDeviceCount(int* n) { *n = 2; return 0; }
int cudaSetDevice(int d) { stub_log("cudaSetDevice device=%d", d); if (d < 0 || d > 1) return 101; current_device = d; return 0; }
int cudaGetDevice(int* d) { *d = current_device; return 0; }
int cudaDeviceGetAttribute(int* v, int attribute, int device) {
    switch (attribute) {
        case 75: *v = 9; return 0;
        case 76: *v = 0; return 0;
        case 16: *v = 132 + device; return 0;
        default: return 1;
    }
}
int cudaDeviceGetPCIBusId(char* out, int len, int device) { snprintf(out, len, "0000:1%d:00.0", device); return 0; }
int cudaGetDeviceProperties_v2(void* properties, int device) { sprintf((char*) properties, "Stub GPU %d", device); return 0; }
int cudaMemGetInfo(size_t* free_bytes, size_t* total) { *free_bytes = 1UL << 30; *total = (80UL << 30) + current_device; return 0; }
int cudaMalloc(void** p, size_t n) { *p = malloc(n); stub_log("cudaMalloc bytes=%zu device=%d ptr=%p", n, current_device, *p); return 0; }
int cudaFree(void* p) { stub_log("cudaFree ptr=%p", p); free(p); return 0; }
int cudaHostAlloc(void** p, size_t n, unsigned flags) { *p = malloc(n); stub_log("cudaHostAlloc bytes=%zu flags=%u ptr=%p", n, flags, *p); return 0; }
int cudaFreeHost(void* p) { stub_log("cudaFreeHost ptr=%p", p); free(p); return 0; }
int cudaMemcpy(void* dst, const void* src, size_t n, int kind) {
    stub_log("cudaMemcpy dst=%p src=%p bytes=%zu kind=%d", dst, src, n, kind);
    memmove(dst, src, n);
    return 0;
}
int cudaMemcpyAsync(void* dst, const void* src, size_t n, int kind, void* stream) {
    stub_log("cudaMemcpyAsync dst=%p src=%p bytes=%zu kind=%d stream=%p", dst, src, n, kind, stream);
    memmove(dst, src, n);
    return 0;
}
int cudaMemsetAsync(void* dst, int value, size_t n, void* stream) {
    stub_log("cudaMemsetAsync dst=%p value=%d bytes=%zu stream=%p", dst, value, n, stream);
    memset(dst, value, n);
    return 0;
}
int cudaStreamCreateWithFlags(void** s, unsigned flags) {
    stub_stream* st = (stub_stream*) malloc(sizeof(stub_stream));
    st->id = next_stream++;
    st->flags = flags;
    *s = st;
    stub_log("cudaStreamCreateWithFlags flags=%u stream=%p", flags, *s);
    return 0;
}
int cudaStreamDestroy(void* s) { stub_log("cudaStreamDestroy stream=%p", s); free(s); return 0; }
int cudaStreamWaitEvent(void* s, void* e, unsigned flags) { stub_log("cudaStreamWaitEvent stream=%p event=%p flags=%u", s, e, flags); return 0; }
int cudaStreamSynchronize(void* s) { stub_log("cudaStreamSynchronize stream=%p", s); return 0; }
int cudaEventCreateWithFlags(void** e, unsigned flags) {
    stub_event* ev = (stub_event*) malloc(sizeof(stub_event));
    ev->id = next_event++;
    ev->flags = flags;
    *e = ev;
    stub_log("cudaEventCreateWithFlags flags=%u event=%p id=%d", flags, *e, ev->id);
    return 0;
}
int cudaEventRecord(void* e, void* s) { stub_log("cudaEventRecord event=%p stream=%p", e, s); return 0; }
/*
 * Event i reports: i % 3 == 1 done (0), == 2 not ready (600), == 0 an illegal address (700); built with
 * STUB_EVENTS_COMPLETE every event is done, so that a whole backend runs on the stubs.
 */
int cudaEventQuery(void* e) {
    int id = ((stub_event*) e)->id;
    stub_log("cudaEventQuery id=%d", id);
#ifdef STUB_EVENTS_COMPLETE
    return 0;
#else
    return id % 3 == 1 ? 0 : id % 3 == 2 ? 600 : 700;
#endif
}
int cudaEventSynchronize(void* e) { stub_log("cudaEventSynchronize event=%p", e); return 0; }
int cudaEventElapsedTime(float* ms, void* start, void* end) { stub_log("cudaEventElapsedTime start=%p end=%p", start, end); *ms = 1.5f; return 0; }
int cudaEventDestroy(void* e) { stub_log("cudaEventDestroy event=%p", e); free(e); return 0; }
const char* cudaGetErrorString(int code) {
    static char text[64];
    snprintf(text, sizeof(text), "stub cuda error %d", code);
    return text;
}
int cudaRuntimeGetVersion(int* v) { *v = 13000; return 0; }
