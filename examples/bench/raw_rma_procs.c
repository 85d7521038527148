/*
 * NCCL's one-sided calls with one process per GPU, measured from C with the method of jccl's RmaProcessBench, to run
 * in the same sitting. The program forks one process per rank (rank r on GPU r); rank 0 makes the unique id and hands
 * it to the others through pipes, before any of them touches CUDA.
 *   raw_rma_procs pingpong [N]   rank 0 puts 8 B into rank 1, whose stream waits and puts 8 B back; rank 0's wait
 *                                seen complete by its host (cudaEventQuery spun): p50/p99/p99.9 of 5000 samples
 *   raw_rma_procs ring [N]       every rank puts into the next and waits for the previous, 8 B to 32 MiB back to back
 *   raw_rma_procs channel [N]    the block channel's calls per block from rank 0 to rank 1 (producer: the credit wait,
 *                                header from pinned memory, block into the slot, one put; consumer: the wait, the header
 *                                read back, its credit), 64 KiB to 16 MiB, 8 slots, timed by the consumer
 *   raw_rma_procs pairs [N [self]] puts between every pair of ranks, every block checked (see pairs())
 * N defaults to 2. Needs NCCL 2.29.2+. Build on the GPU machine:
 *   gcc -O2 -o raw_rma_procs raw_rma_procs.c -I$NCCL/include -I$CUDA/include -L$NCCL/lib -lnccl -L$CUDA/lib64 -lcudart
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
#define MAXB ((size_t) 32 << 20)
#define SLOTS 8
#define HEADER 64
#define MAXN 16

static int rank, n;
static ncclComm_t comm;
static cudaStream_t stream;
static int *one;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

static void barrier(void) {
    NC(ncclAllReduce(one, one, 1, ncclInt32, ncclSum, comm, stream));
    CU(cudaStreamSynchronize(stream));
}

static void spin(cudaEvent_t ev) {
    CU(cudaEventRecord(ev, stream));
    while (cudaEventQuery(ev) == cudaErrorNotReady) { }
}

static char *open_window(size_t bytes, ncclWindow_t *win) {
    char *buf;
    NC(ncclMemAlloc((void **) &buf, bytes));
    CU(cudaMemset(buf, 0, bytes));
    NC(ncclCommWindowRegister(comm, buf, bytes, win, NCCL_WIN_COLL_SYMMETRIC));
    return buf;
}

static void close_window(char *buf, ncclWindow_t win) {
    CU(cudaStreamSynchronize(stream));
    NC(ncclCommWindowDeregister(comm, win));
    NC(ncclMemFree(buf));
}

static void pingpong(void) {
    ncclWindow_t win;
    char *buf = open_window(1 << 20, &win);
    int samples = 5000;
    double *t = malloc(sizeof(double) * samples);
    ncclWaitSignalDesc_t from_peer = {1, rank == 0 ? 1 : 0, 0, 0};
    cudaEvent_t ev;
    CU(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    barrier();
    for (int i = -500; i < samples; i++) {
        if (rank == 0) {
            double t0 = now();
            NC(ncclPutSignal(buf + (1 << 19), 8, ncclUint8, 1, win, 0, 0, 0, 0, comm, stream));
            NC(ncclWaitSignal(1, &from_peer, comm, stream));
            spin(ev);
            if (i >= 0) t[i] = (now() - t0) * 1e6;
        } else if (rank == 1) {
            NC(ncclWaitSignal(1, &from_peer, comm, stream));
            NC(ncclPutSignal(buf + (1 << 19), 8, ncclUint8, 0, win, 0, 0, 0, 0, comm, stream));
            spin(ev);
        }
    }
    if (rank == 0) {
        qsort(t, samples, sizeof(double), cmp);
        printf("8 B ping-pong seen by rank 0's host: p50 %.2f us, p99 %.2f us, p99.9 %.2f us (%d samples)\n",
               t[samples / 2], t[samples * 99 / 100], t[samples * 999 / 1000], samples);
    }
    free(t);
    close_window(buf, win);
}

static void ring(void) {
    int next = (rank + 1) % n, previous = (rank + n - 1) % n;
    ncclWindow_t win;
    char *buf = open_window(2 * MAXB, &win);
    ncclWaitSignalDesc_t from_previous = {1, previous, 0, 0};
    if (rank == 0) printf("#     bytes  iters    us/put    GB/s\n");
    for (size_t bytes = 8; bytes <= MAXB; bytes *= 4) {
        int iters = bytes <= (1 << 20) ? 500 : 50;
        for (int round = 0; round < 2; round++) {
            barrier();
            double t0 = now();
            for (int i = 0; i < iters; i++) {
                NC(ncclPutSignal(buf + MAXB, bytes, ncclUint8, next, win, 0, 0, 0, 0, comm, stream));
                NC(ncclWaitSignal(1, &from_previous, comm, stream));
            }
            CU(cudaStreamSynchronize(stream));
            double s = now() - t0;
            if (round == 1 && rank == 0) printf("%11zu %6d %10.2f %7.2f\n", bytes, iters, s * 1e6 / iters, bytes * iters / s / 1e9);
        }
    }
    close_window(buf, win);
}

static void channel(void) {
    if (rank == 1) printf("#     block  blocks    blocks/s    GB/s\n");
    for (size_t block = 64 << 10; block <= ((size_t) 16 << 20); block *= 4) {
        size_t stride = (HEADER + block + 255) / 256 * 256;
        int count = (int) (((size_t) 2 << 30) / block);
        if (count > 2000) count = 2000;
        if (count < 64) count = 64;
        ncclWindow_t win;
        char *buf = open_window(SLOTS * stride + 256, &win), *src, *pinned;
        CU(cudaMalloc((void **) &src, block));
        CU(cudaHostAlloc((void **) &pinned, SLOTS * HEADER, cudaHostAllocDefault));
        memset(pinned, 0, SLOTS * HEADER);
        ncclWaitSignalDesc_t from_producer = {1, 0, 0, 0}, from_consumer = {1, 1, 0, 0};
        barrier();
        double t0 = now();
        for (int i = 0; i < count; i++) {
            size_t slot = (size_t) (i % SLOTS) * stride;
            if (rank == 0) {
                if (i >= SLOTS) NC(ncclWaitSignal(1, &from_consumer, comm, stream));
                CU(cudaMemcpyAsync(buf + slot, pinned + (i % SLOTS) * HEADER, 24, cudaMemcpyHostToDevice, stream));
                CU(cudaMemcpyAsync(buf + slot + HEADER, src, block, cudaMemcpyDeviceToDevice, stream));
                NC(ncclPutSignal(buf + slot, HEADER + block, ncclUint8, 1, win, slot, 0, 0, 0, comm, stream));
            } else if (rank == 1) {
                NC(ncclWaitSignal(1, &from_producer, comm, stream));
                CU(cudaMemcpyAsync(pinned + (i % SLOTS) * HEADER, buf + slot, 24, cudaMemcpyDeviceToHost, stream));
                NC(ncclSignal(0, 0, 0, 0, comm, stream));
            }
        }
        if (rank == 0) { /* settle the credits the producer did not wait for, so the window can be deregistered */
            ncclWaitSignalDesc_t rest = {count < SLOTS ? count : SLOTS, 1, 0, 0};
            NC(ncclWaitSignal(1, &rest, comm, stream));
        }
        CU(cudaStreamSynchronize(stream));
        double s = now() - t0;
        if (rank == 1) printf("%11zu %7d %11.0f %7.2f\n", block, count, count / s, block * count / s / 1e9);
        CU(cudaFree(src));
        CU(cudaFreeHost(pinned));
        barrier();
        close_window(buf, win);
    }
}

/*
 * Every rank puts a block to every other rank, then waits once for one signal from each peer (one descriptor per
 * peer) and checks every block on the host: the data check behind jccl's EveryPairPuts, in C. Two rounds, each into
 * its own slots; "self" as a third argument first signals the rank itself and waits for it, as jccl's set-up does.
 */
static void pairs(int self_setup) {
    const int ints = 1 << 14, rounds = 2;
    size_t block = (size_t) ints * sizeof(int), received = (size_t) rounds * n * block;
    ncclWindow_t win;
    char *buf = open_window(2 * received, &win);
    int *host = malloc(block);
    if (self_setup) {
        ncclWaitSignalDesc_t me = {1, rank, 0, 0};
        NC(ncclSignal(rank, 0, 0, 0, comm, stream));
        NC(ncclWaitSignal(1, &me, comm, stream));
        CU(cudaStreamSynchronize(stream));
    }
    long wrong = 0;
    for (int round = 0; round < rounds; round++) {
        ncclWaitSignalDesc_t waits[MAXN];
        int nw = 0;
        for (int peer = 0; peer < n; peer++) {
            if (peer == rank) continue;
            size_t source = received + (size_t) (round * n + peer) * block;
            for (int i = 0; i < ints; i++) host[i] = round * 100000000 + rank * 10000000 + peer * 1000000 + i;
            CU(cudaMemcpy(buf + source, host, block, cudaMemcpyHostToDevice));
            NC(ncclPutSignal(buf + source, ints, ncclInt32, peer, win, (size_t) (round * n + rank) * block, 0, 0, 0, comm, stream));
            waits[nw++] = (ncclWaitSignalDesc_t) {1, peer, 0, 0};
        }
        NC(ncclWaitSignal(nw, waits, comm, stream));
        CU(cudaStreamSynchronize(stream));
        for (int peer = 0; peer < n; peer++) {
            if (peer == rank) continue;
            CU(cudaMemcpy(host, buf + (size_t) (round * n + peer) * block, block, cudaMemcpyDeviceToHost));
            for (int i = 0; i < ints; i++) if (host[i] != round * 100000000 + peer * 10000000 + rank * 1000000 + i) wrong++;
        }
        barrier();
    }
    printf("rank %d: puts from %d peers in %d rounds, %ld wrong ints%s\n", rank, n - 1, rounds, wrong, self_setup ? " (self set-up first)" : "");
    free(host);
    close_window(buf, win);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "pingpong";
    n = argc > 2 ? atoi(argv[2]) : 2;
    if (n < 2 || n > MAXN) { fprintf(stderr, "2 to %d processes\n", MAXN); return 2; }
    int pipes[MAXN][2];
    pid_t children[MAXN];
    for (int r = 1; r < n; r++) {
        if (pipe(pipes[r])) { perror("pipe"); return 1; }
        children[r] = fork();
        if (children[r] == 0) { rank = r; break; }
    }
    ncclUniqueId id;
    if (rank == 0) {
        NC(ncclGetUniqueId(&id));
        for (int r = 1; r < n; r++) if (write(pipes[r][1], &id, sizeof(id)) != sizeof(id)) { perror("write"); return 1; }
    } else if (read(pipes[rank][0], &id, sizeof(id)) != sizeof(id)) {
        perror("read");
        return 1;
    }
    int v;
    NC(ncclGetVersion(&v));
    CU(cudaSetDevice(rank));
    CU(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    NC(ncclCommInitRank(&comm, n, id, rank));
    CU(cudaMalloc((void **) &one, sizeof(int)));
    if (rank == 0) printf("# raw NCCL %d, %d processes, mode %s\n", v, n, mode);
    fflush(stdout);
    if (!strcmp(mode, "pingpong")) pingpong();
    else if (!strcmp(mode, "ring")) ring();
    else if (!strcmp(mode, "channel")) channel();
    else if (!strcmp(mode, "pairs")) pairs(argc > 3 && !strcmp(argv[3], "self"));
    else { fprintf(stderr, "mode: pingpong, ring, channel or pairs\n"); return 2; }
    fflush(stdout);
    NC(ncclCommDestroy(comm));
    int failed = 0;
    if (rank == 0) {
        for (int r = 1; r < n; r++) {
            int status;
            waitpid(children[r], &status, 0);
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failed = 1;
        }
    }
    return failed;
}
