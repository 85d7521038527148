/*
 * NCCL's one-sided calls measured from C with the method of jccl's RmaBench, to run in the same sitting:
 *   raw_rma_bench bandwidth [GPUs]   putSignal + waitSignal pairs (one group each), 8 B to 32 MiB, back to back, wall clock
 *   raw_rma_bench latency [GPUs]     8 B put, then cudaEventQuery spun until the wait completed: p50/p99
 *   raw_rma_bench channel [GPUs]     the block channel's calls per block (header staged from pinned memory, block
 *                                    copied into the slot, one put, the consumer's wait and header read, its credit
 *                                    and the producer's credit wait on two GPUs), 64 KiB to 16 MiB, 8 slots
 * Rank 0 puts into the last rank's window (on one GPU, its own). Needs NCCL 2.29.2+. Build on the GPU machine:
 *   nvcc -O2 -o raw_rma_bench raw_rma_bench.c -I$NCCL/include -L$NCCL/lib -lnccl
 */
#include <cuda_runtime.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NC(x) do { ncclResult_t r_ = (x); if (r_ != ncclSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, ncclGetErrorString(r_)); exit(1); } } while (0)
#define CU(x) do { cudaError_t r_ = (x); if (r_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(r_)); exit(1); } } while (0)
#define MAXB ((size_t) 64 << 20)
#define SLOTS 8
#define HEADER 64

typedef struct { int n; ncclComm_t comm[2]; cudaStream_t stream[2]; char *win_buf[2]; ncclWindow_t win[2]; } ranks_t;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

static void open_windows(ranks_t *g, size_t bytes) {
    NC(ncclGroupStart());
    for (int i = 0; i < g->n; i++) {
        CU(cudaSetDevice(i));
        NC(ncclMemAlloc((void **) &g->win_buf[i], bytes));
        CU(cudaMemset(g->win_buf[i], 0, bytes));
        NC(ncclCommWindowRegister(g->comm[i], g->win_buf[i], bytes, &g->win[i], NCCL_WIN_COLL_SYMMETRIC));
    }
    NC(ncclGroupEnd());
}

static void close_windows(ranks_t *g) {
    for (int i = 0; i < g->n; i++) { CU(cudaSetDevice(i)); CU(cudaStreamSynchronize(g->stream[i])); }
    NC(ncclGroupStart());
    for (int i = 0; i < g->n; i++) NC(ncclCommWindowDeregister(g->comm[i], g->win[i]));
    NC(ncclGroupEnd());
    for (int i = 0; i < g->n; i++) NC(ncclMemFree(g->win_buf[i]));
}

/* One pair: rank 0 puts bytes from the upper half of its window into the last rank's lower half; that rank waits. */
static void pair(ranks_t *g, size_t bytes) {
    int last = g->n - 1;
    ncclWaitSignalDesc_t d = {1, 0, 0, 0};
    NC(ncclGroupStart());
    CU(cudaSetDevice(0));
    NC(ncclPutSignal(g->win_buf[0] + MAXB, bytes, ncclUint8, last, g->win[0], 0, 0, 0, 0, g->comm[0], g->stream[0]));
    CU(cudaSetDevice(last));
    NC(ncclWaitSignal(1, &d, g->comm[last], g->stream[last]));
    NC(ncclGroupEnd());
}

static void bandwidth(ranks_t *g) {
    open_windows(g, 2 * MAXB);
    printf("#     bytes  iters    us/pair    GB/s\n");
    for (size_t bytes = 8; bytes <= MAXB; bytes *= 4) {
        int iters = bytes <= (1 << 20) ? 500 : 50;
        for (int round = 0; round < 2; round++) {
            double t0 = now();
            for (int i = 0; i < iters; i++) pair(g, bytes);
            for (int i = 0; i < g->n; i++) { CU(cudaSetDevice(i)); CU(cudaStreamSynchronize(g->stream[i])); }
            double s = now() - t0;
            if (round == 1) printf("%11zu %6d %10.2f %7.2f\n", bytes, iters, s * 1e6 / iters, bytes * iters / s / 1e9);
        }
    }
    close_windows(g);
}

static void latency(ranks_t *g) {
    open_windows(g, 2 * MAXB);
    int last = g->n - 1, samples = 2000;
    cudaEvent_t ev;
    CU(cudaSetDevice(last));
    CU(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    double *t = malloc(sizeof(double) * samples);
    for (int i = -500; i < samples; i++) {
        double t0 = now();
        pair(g, 8);
        CU(cudaSetDevice(last));
        CU(cudaEventRecord(ev, g->stream[last]));
        while (cudaEventQuery(ev) == cudaErrorNotReady) { }
        if (i >= 0) t[i] = (now() - t0) * 1e6;
    }
    qsort(t, samples, sizeof(double), cmp);
    printf("8 B put -> wait seen by the host: p50 %.2f us, p99 %.2f us (%d samples)\n", t[samples / 2], t[samples * 99 / 100], samples);
    free(t);
    close_windows(g);
}

static void channel(ranks_t *g) {
    int last = g->n - 1;
    printf("#     block  blocks    blocks/s    GB/s\n");
    for (size_t block = 64 << 10; block <= ((size_t) 16 << 20); block *= 4) {
        size_t stride = (HEADER + block + 255) / 256 * 256;
        int count = (int) (((size_t) 2 << 30) / block);
        if (count > 2000) count = 2000;
        if (count < 64) count = 64;
        open_windows(g, SLOTS * stride + 256);
        char *src, *pinned;
        CU(cudaSetDevice(0));
        CU(cudaMalloc((void **) &src, block));
        CU(cudaHostAlloc((void **) &pinned, 2 * SLOTS * HEADER, cudaHostAllocDefault));
        memset(pinned, 0, 2 * SLOTS * HEADER);
        ncclWaitSignalDesc_t from_producer = {1, 0, 0, 0}, from_consumer = {1, last, 0, 0};
        double t0 = now();
        for (int i = 0; i < count; i++) {
            size_t slot = (size_t) (i % SLOTS) * stride;
            NC(ncclGroupStart());
            CU(cudaSetDevice(0));
            if (g->n > 1 && i >= SLOTS) NC(ncclWaitSignal(1, &from_consumer, g->comm[0], g->stream[0]));
            CU(cudaMemcpyAsync(g->win_buf[0] + slot, pinned + (i % SLOTS) * HEADER, 24, cudaMemcpyHostToDevice, g->stream[0]));
            CU(cudaMemcpyAsync(g->win_buf[0] + slot + HEADER, src, block, cudaMemcpyDeviceToDevice, g->stream[0]));
            NC(ncclPutSignal(g->win_buf[0] + slot, HEADER + block, ncclUint8, last, g->win[0], slot, 0, 0, 0, g->comm[0], g->stream[0]));
            CU(cudaSetDevice(last));
            NC(ncclWaitSignal(1, &from_producer, g->comm[last], g->stream[last]));
            CU(cudaMemcpyAsync(pinned + (SLOTS + i % SLOTS) * HEADER, g->win_buf[last] + slot, 24, cudaMemcpyDeviceToHost, g->stream[last]));
            if (g->n > 1) NC(ncclSignal(0, 0, 0, 0, g->comm[last], g->stream[last]));
            NC(ncclGroupEnd());
        }
        /* settle the credits the producer did not wait for, so the windows can be deregistered */
        if (g->n > 1) {
            ncclWaitSignalDesc_t rest = {count < SLOTS ? count : SLOTS, last, 0, 0};
            CU(cudaSetDevice(0));
            NC(ncclWaitSignal(1, &rest, g->comm[0], g->stream[0]));
        }
        for (int i = 0; i < g->n; i++) { CU(cudaSetDevice(i)); CU(cudaStreamSynchronize(g->stream[i])); }
        double s = now() - t0;
        printf("%11zu %7d %11.0f %7.2f\n", block, count, count / s, block * count / s / 1e9);
        CU(cudaSetDevice(0));
        CU(cudaFree(src));
        CU(cudaFreeHost(pinned));
        close_windows(g);
    }
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "bandwidth";
    ranks_t g;
    memset(&g, 0, sizeof(g));
    int devices;
    CU(cudaGetDeviceCount(&devices));
    g.n = argc > 2 ? atoi(argv[2]) : (devices >= 2 ? 2 : 1);
    if (g.n < 1 || g.n > 2 || g.n > devices) { fprintf(stderr, "1 or 2 GPUs, at most %d here\n", devices); return 2; }
    int devs[2] = {0, 1}, v;
    NC(ncclGetVersion(&v));
    NC(ncclCommInitAll(g.comm, g.n, devs));
    for (int i = 0; i < g.n; i++) { CU(cudaSetDevice(i)); CU(cudaStreamCreateWithFlags(&g.stream[i], cudaStreamNonBlocking)); }
    printf("# raw NCCL %d, %d rank(s), rank 0 puts into rank %d\n", v, g.n, g.n - 1);
    if (!strcmp(mode, "bandwidth")) bandwidth(&g);
    else if (!strcmp(mode, "latency")) latency(&g);
    else if (!strcmp(mode, "channel")) channel(&g);
    else { fprintf(stderr, "mode: bandwidth, latency or channel\n"); return 2; }
    for (int i = 0; i < g.n; i++) NC(ncclCommDestroy(g.comm[i]));
    return 0;
}
