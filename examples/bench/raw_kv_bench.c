/*
 * A paged KV-cache transfer done with NCCL's calls from C, one process per GPU, for jccl's KvBench to be measured
 * beside in the same sitting:
 *   raw_kv_bench contiguous TOKENS [REPEATS]  each layer's K and V of the request, contiguous, one ncclPutSignal each:
 *                                             the best NCCL's host API does with the same bytes
 *   raw_kv_bench per-block TOKENS [REPEATS]   one ncclPutSignal per 32 KiB block, from random source blocks to random
 *                                             destination blocks: the per-block loop
 * The model: Llama-3-8B's KV cache (32 layers, K and V, 8 KV heads, head dim 128, bf16, 16-token blocks: 32 KiB per
 * block and tensor). Rank 0 (prefill) puts into rank 1's (decode) window; rank 1 waits for every signal, then signals
 * back; rank 0 times from its first put to that signal. Prints one line per repeat and the median, as
 * "mode tokens bytes ms GB/s". The process forks after ncclGetUniqueId, so each GPU has a process of its own.
 * Needs NCCL 2.29.2+ (ncclPutSignal) and two GPUs. Build on the GPU machine:
 *   gcc -O2 -o raw_kv_bench raw_kv_bench.c -I$NCCL/include -I$CUDA/include -L$NCCL/lib -lnccl -L$CUDA/lib64 -lcudart
 */
#include <cuda_runtime.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NC(x) do { ncclResult_t r_ = (x); if (r_ != ncclSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, ncclGetErrorString(r_)); exit(1); } } while (0)
#define CU(x) do { cudaError_t r_ = (x); if (r_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(r_)); exit(1); } } while (0)

#define LAYERS 32
#define TENSORS 2
#define TOKENS_PER_BLOCK 16
#define BLOCK_BYTES ((size_t) TOKENS_PER_BLOCK * 8 * 128 * 2)

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

/* Distinct random block ids. */
static void shuffle_ids(int *ids, int pool, unsigned seed) {
    srand(seed);
    for (int i = 0; i < pool; i++) ids[i] = i;
    for (int i = pool - 1; i > 0; i--) { int j = rand() % (i + 1); int t = ids[i]; ids[i] = ids[j]; ids[j] = t; }
}

static void run(int rank, ncclUniqueId id, int contiguous, int tokens, int repeats) {
    CU(cudaSetDevice(rank));
    ncclComm_t comm;
    NC(ncclCommInitRank(&comm, 2, id, rank));
    cudaStream_t stream;
    CU(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    int blocks = tokens / TOKENS_PER_BLOCK;
    int pool = blocks * 2; /* room to scatter into */
    size_t tensor_bytes = (size_t) pool * BLOCK_BYTES;
    size_t window_bytes = (size_t) LAYERS * TENSORS * tensor_bytes;
    char *buf;
    ncclWindow_t win;
    NC(ncclMemAlloc((void **) &buf, window_bytes));
    CU(cudaMemset(buf, rank + 1, window_bytes));
    NC(ncclCommWindowRegister(comm, buf, window_bytes, &win, NCCL_WIN_COLL_SYMMETRIC));
    int *src = malloc(pool * sizeof(int)), *dst = malloc(pool * sizeof(int));
    shuffle_ids(src, pool, 1);
    shuffle_ids(dst, pool, 2);
    size_t bytes = (size_t) LAYERS * TENSORS * blocks * BLOCK_BYTES;
    int puts = contiguous ? LAYERS * TENSORS : LAYERS * TENSORS * blocks;
    double *ms = malloc(repeats * sizeof(double));
    for (int r = -1; r < repeats; r++) { /* r = -1 warms up */
        CU(cudaStreamSynchronize(stream));
        if (rank == 0) {
            double t0 = now();
            for (int l = 0; l < LAYERS; l++) {
                for (int t = 0; t < TENSORS; t++) {
                    size_t base = ((size_t) l * TENSORS + t) * tensor_bytes;
                    if (contiguous) {
                        NC(ncclPutSignal(buf + base, (size_t) blocks * BLOCK_BYTES, ncclUint8, 1, win, base, 0, 0, 0, comm, stream));
                    } else {
                        for (int b = 0; b < blocks; b++) {
                            NC(ncclPutSignal(buf + base + src[b] * BLOCK_BYTES, BLOCK_BYTES, ncclUint8, 1, win,
                                             base + dst[b] * BLOCK_BYTES, 0, 0, 0, comm, stream));
                        }
                    }
                }
            }
            ncclWaitSignalDesc_t back = {1, 1, 0, 0};
            NC(ncclWaitSignal(1, &back, comm, stream));
            CU(cudaStreamSynchronize(stream));
            if (r >= 0) {
                ms[r] = (now() - t0) * 1e3;
                printf("%s %d %zu %.3f %.1f\n", contiguous ? "contiguous" : "per-block", tokens, bytes, ms[r], bytes / ms[r] / 1e6);
                fflush(stdout);
            }
        } else {
            ncclWaitSignalDesc_t all = {puts, 0, 0, 0};
            NC(ncclWaitSignal(1, &all, comm, stream));
            NC(ncclSignal(0, 0, 0, 0, comm, stream));
            CU(cudaStreamSynchronize(stream));
        }
    }
    if (rank == 0) {
        qsort(ms, repeats, sizeof(double), cmp);
        printf("median %s %d tokens: %.3f ms, %.1f GB/s\n", contiguous ? "contiguous" : "per-block", tokens, ms[repeats / 2],
               bytes / ms[repeats / 2] / 1e6);
    }
    CU(cudaStreamSynchronize(stream));
    NC(ncclCommWindowDeregister(comm, win));
    NC(ncclMemFree(buf));
    NC(ncclCommDestroy(comm));
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: raw_kv_bench contiguous|per-block TOKENS [REPEATS]\n");
        return 2;
    }
    int contiguous = strcmp(argv[1], "contiguous") == 0;
    int tokens = atoi(argv[2]);
    int repeats = argc > 3 ? atoi(argv[3]) : 10;
    ncclUniqueId id;
    NC(ncclGetUniqueId(&id));
    pid_t child = fork();
    if (child < 0) { perror("fork"); return 1; }
    run(child == 0 ? 1 : 0, id, contiguous, tokens, repeats);
    if (child != 0) {
        int status;
        waitpid(child, &status, 0);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    }
    return 0;
}
