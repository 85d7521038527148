/*
 * A serving loop's step from C, for jccl's StepBench to be run beside it in the same sitting, on one GPU (one rank):
 * broadcast the batch, a "kernel" (a memset), an all-reduce, a "kernel", an all-gather; then an event recorded and
 * cudaEventQuery spun until it completes. Two ways:
 *   raw_step_bench eager [ITERS]   the five calls issued every time
 *   raw_step_bench graph [ITERS]   the five calls captured once into a CUDA graph, then one cudaGraphLaunch each time
 * For 8 B, 4 KiB, 64 KiB and 1 MiB per operation prints p50, p99 and p99.9 of the round trip in microseconds.
 * Build on the GPU machine:
 *   gcc -O2 -o raw_step_bench raw_step_bench.c -I$NCCL/include -I$CUDA/include -L$NCCL/lib -lnccl -L$CUDA/lib64 -lcudart
 */
#include <cuda_runtime.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NC(x) do { ncclResult_t r_ = (x); if (r_ != ncclSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, ncclGetErrorString(r_)); exit(1); } } while (0)
#define CU(x) do { cudaError_t r_ = (x); if (r_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(r_)); exit(1); } } while (0)

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

static void step(ncclComm_t comm, cudaStream_t s, float *batch, float *hidden, float *gathered, size_t n) {
    NC(ncclBroadcast(batch, batch, n, ncclFloat32, 0, comm, s));
    CU(cudaMemsetAsync(hidden, 0, n * sizeof(float), s));
    NC(ncclAllReduce(batch, hidden, n, ncclFloat32, ncclSum, comm, s));
    CU(cudaMemsetAsync(batch, 0, n * sizeof(float), s));
    NC(ncclAllGather(hidden, gathered, n, ncclFloat32, comm, s));
}

int main(int argc, char **argv) {
    int graph = argc > 1 && strcmp(argv[1], "graph") == 0;
    int iters = argc > 2 ? atoi(argv[2]) : 5000;
    int dev = 0;
    ncclComm_t comm;
    NC(ncclCommInitAll(&comm, 1, &dev));
    cudaStream_t s;
    CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t done;
    CU(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    size_t sizes[] = {8, 4096, 65536, 1 << 20};
    double *us = malloc(iters * sizeof(double));
    printf("# %s step of 5 operations, one GPU: bytes p50 p99 p99.9 (us)\n", graph ? "graph" : "eager");
    for (int k = 0; k < 4; k++) {
        size_t n = sizes[k] / sizeof(float) ? sizes[k] / sizeof(float) : 1;
        float *batch, *hidden, *gathered;
        CU(cudaMalloc((void **) &batch, n * 4));
        CU(cudaMalloc((void **) &hidden, n * 4));
        CU(cudaMalloc((void **) &gathered, n * 4));
        cudaGraphExec_t exec = NULL;
        if (graph) {
            cudaGraph_t g;
            CU(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
            step(comm, s, batch, hidden, gathered, n);
            CU(cudaStreamEndCapture(s, &g));
            CU(cudaGraphInstantiateWithFlags(&exec, g, 0));
            CU(cudaGraphDestroy(g));
        }
        for (int i = -iters / 10; i < iters; i++) { /* the first tenth warms up */
            double t0 = now_us();
            if (graph) CU(cudaGraphLaunch(exec, s));
            else step(comm, s, batch, hidden, gathered, n);
            CU(cudaEventRecord(done, s));
            while (cudaEventQuery(done) == cudaErrorNotReady) { }
            if (i >= 0) us[i] = now_us() - t0;
        }
        qsort(us, iters, sizeof(double), cmp);
        printf("%8zu %7.2f %7.2f %7.2f\n", sizes[k], us[iters / 2], us[(int) (iters * 0.99)], us[(int) (iters * 0.999)]);
        if (exec) CU(cudaGraphExecDestroy(exec));
        CU(cudaFree(batch));
        CU(cudaFree(hidden));
        CU(cudaFree(gathered));
    }
    NC(ncclCommDestroy(comm));
    return 0;
}
