/*
 * The raw library, measured like jccl's bench in the same sitting: one process drives every GPU (ncclCommInitAll),
 * each iteration issues the operation on every communicator inside one ncclGroupStart/End, and the time per
 * iteration is wall clock from the first issue to the end of the last stream synchronize, over -n iterations
 * after -w warm-up ones (nccl-tests' method). Bus bandwidth uses nccl-tests' factors.
 * Build and run on the GPU machine (see examples/bench/gpu-figures.sh):
 *   gcc -O2 -o raw_nccl_bench raw_nccl_bench.c -I$NCCL_INCLUDE -I/usr/local/cuda/include -L$NCCL_LIB -lnccl -L$CUDART_DIR -lcudart
 */
#include <nccl.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK_CUDA(x) do { cudaError_t e = (x); if (e != cudaSuccess) { fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)
#define CHECK_NCCL(x) do { ncclResult_t r = (x); if (r != ncclSuccess) { fprintf(stderr, "%s: %s\n", #x, ncclGetErrorString(r)); exit(1); } } while (0)

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    const char *op = argc > 1 ? argv[1] : "allreduce";
    size_t min = argc > 2 ? strtoull(argv[2], 0, 10) : (64ull << 20), max = argc > 3 ? strtoull(argv[3], 0, 10) : (2ull << 30);
    int warm = 5, iters = 20, n = 0;
    CHECK_CUDA(cudaGetDeviceCount(&n));
    ncclComm_t *comms = calloc(n, sizeof(ncclComm_t));
    cudaStream_t *streams = calloc(n, sizeof(cudaStream_t));
    void **send = calloc(n, sizeof(void *)), **recv = calloc(n, sizeof(void *));
    CHECK_NCCL(ncclCommInitAll(comms, n, NULL));
    for (int i = 0; i < n; i++) {
        CHECK_CUDA(cudaSetDevice(i));
        CHECK_CUDA(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking));
        CHECK_CUDA(cudaMalloc(&send[i], max));
        CHECK_CUDA(cudaMalloc(&recv[i], max));
        CHECK_CUDA(cudaMemset(send[i], 1, max));
    }
    printf("# raw NCCL %s, %d GPUs, one process, wall clock over %d iterations\n#%13s %9s %8s\n", op, n, iters, "size", "time(us)", "busbw");
    for (size_t bytes = min; bytes <= max; bytes *= 2) {
        size_t count = bytes / 4, part = count / n;
        double factor = !strcmp(op, "allreduce") ? 2.0 * (n - 1) / n : (!strcmp(op, "allgather") || !strcmp(op, "alltoall") || !strcmp(op, "reducescatter")) ? (double) (n - 1) / n : 1.0;
        double t0 = 0;
        for (int it = -warm; it < iters; it++) {
            if (it == 0) t0 = now();
            CHECK_NCCL(ncclGroupStart());
            for (int i = 0; i < n; i++) {
                if (!strcmp(op, "allreduce")) CHECK_NCCL(ncclAllReduce(send[i], recv[i], count, ncclFloat, ncclSum, comms[i], streams[i]));
                else if (!strcmp(op, "allgather")) CHECK_NCCL(ncclAllGather(send[i], recv[i], part, ncclFloat, comms[i], streams[i]));
                else if (!strcmp(op, "reducescatter")) CHECK_NCCL(ncclReduceScatter(send[i], recv[i], part, ncclFloat, ncclSum, comms[i], streams[i]));
                else if (!strcmp(op, "broadcast")) CHECK_NCCL(ncclBroadcast(send[i], recv[i], count, ncclFloat, 0, comms[i], streams[i]));
                else if (!strcmp(op, "alltoall")) CHECK_NCCL(ncclAlltoAll(send[i], recv[i], part, ncclFloat, comms[i], streams[i]));
                else if (!strcmp(op, "sendrecv")) {
                    CHECK_NCCL(ncclSend(send[i], count, ncclFloat, (i + 1) % n, comms[i], streams[i]));
                    CHECK_NCCL(ncclRecv(recv[i], count, ncclFloat, (i + n - 1) % n, comms[i], streams[i]));
                } else { fprintf(stderr, "unknown op %s\n", op); return 2; }
            }
            CHECK_NCCL(ncclGroupEnd());
            if (it < 0 || it == iters - 1) for (int i = 0; i < n; i++) { CHECK_CUDA(cudaSetDevice(i)); CHECK_CUDA(cudaStreamSynchronize(streams[i])); }
        }
        double us = (now() - t0) / iters * 1e6;
        printf(" %13zu %9.2f %8.2f\n", bytes, us, bytes / us / 1e3 * factor);
    }
    for (int i = 0; i < n; i++) ncclCommDestroy(comms[i]);
    return 0;
}
