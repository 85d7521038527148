/*
 * The raw library, measured like jccl's Bench in the same sitting, with Bench's command line, modes and output, so
 * the figures sit side by side. One process drives GPUs 0..N-1 (ncclCommInitAll); each operation is issued on every
 * communicator inside one ncclGroupStart/End from this one thread (NCCL's rule for one thread driving several GPUs;
 * Bench instead hands each rank's operation to that rank's launch thread). Data type float, like Bench's default.
 *
 *   --mode bandwidth  nccl-tests' method, as Bench: -w warm-up iterations, each waited; then the wall clock from the
 *                     first issue of -n iterations to the end of the last stream synchronize, divided by -n.
 *                     Out-of-place and in-place columns, nccl-tests' bus-bandwidth factors; #wrong is N/A (no check).
 *   --mode latency    as Bench's core path: after max(-w, 1000) waited warm-ups, each of -n samples is the wall clock
 *                     from issuing the operation to seeing it complete: an event (timing disabled, as jccl's) is
 *                     recorded on each stream after the operation and this thread spins on cudaEventQuery. jccl
 *                     records the same event and its event thread polls it, so what differs is jccl's hand-offs.
 *                     Percentiles p50, p99, p99.9 and the mean, picked as Bench picks them. --pause-us N sleeps N µs
 *                     before each sample, as a server whose requests arrive now and then.
 *   --mode pipeline   as Bench's core path: -n operations per rank with at most --inflight in flight; before
 *                     reusing an in-flight slot this thread spins until that slot's event completed; ops/s.
 *   --window          the buffers come from ncclMemAlloc and are registered as collective-symmetric windows, so NCCL
 *                     (2.27+) may run its symmetric kernels; as Bench --symmetric. The path is then "raw-window".
 *
 * Build on the GPU machine (examples/bench/gpu-figures.sh does):
 *   gcc -O2 -o raw_nccl_bench raw_nccl_bench.c -I$NCCL_INCLUDE -I/usr/local/cuda/include -L$NCCL_LIB -lnccl -L$CUDART_DIR -lcudart
 */
#include <nccl.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK_CUDA(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)
#define CHECK_NCCL(x) do { ncclResult_t r_ = (x); if (r_ != ncclSuccess) { fprintf(stderr, "%s: %s\n", #x, ncclGetErrorString(r_)); exit(1); } } while (0)

/* Bench's operations in BenchOp's order, so "-o all" lists them as Bench does. */
enum op { ALL_REDUCE, BROADCAST, REDUCE, ALL_GATHER, REDUCE_SCATTER, ALL_TO_ALL, GATHER, SCATTER, SEND_RECV, NOPS };
static const char *const OP_NAMES[NOPS] = {"allreduce", "broadcast", "reduce", "allgather", "reducescatter", "alltoall",
                                           "gather", "scatter", "sendrecv"};
static const int REDUCES[NOPS] = {1, 0, 1, 0, 1, 0, 0, 0, 0};
static const int ROOTED[NOPS] = {0, 1, 1, 0, 0, 0, 1, 1, 0};
#define ELEMENT 4 /* sizeof(float) */

struct options {
    size_t min, max;
    double factor;
    int ops[NOPS], nops;
    int root, warmup, iters, inflight, ranks, pause_us;
    int out_of_place, in_place; /* which placements bandwidth mode measures; latency and pipeline take one */
    int json, two_column, window;
    const char *mode;
    const char *path; /* "raw", or "raw-window" with --window */
};

struct gpus {
    int n;
    ncclComm_t *comms;
    cudaStream_t *streams;
    char **send, **recv;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
    ncclWindow_t *send_win, *recv_win; /* with --window */
#endif
};

/* One measured placement of a bandwidth row; time < 0 when that placement was not measured. */
struct timing {
    double us, algbw, busbw;
};

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void usage(const char *why) {
    if (why) fprintf(stderr, "raw_nccl_bench: %s\n", why);
    fprintf(stderr, "usage: raw_nccl_bench [-b SIZE] [-e SIZE] [-f FACTOR] [-o OPS|all] [-R ROOT] [-w N] [-n N]\n"
                    "         [--mode bandwidth|latency|pipeline] [--inflight N] [--pause-us N] [--ranks N] [--in-place|--out-of-place]\n"
                    "         [--json | --two-column] [--window]\n"
                    "  as Bench's options (float data, no data check); --two-column prints 'size busbw' lines per\n"
                    "  operation for Bench's --compare\n");
    exit(2);
}

static size_t parse_size(const char *s) {
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s) usage("bad size");
    if (*end == 'K' || *end == 'k') v <<= 10;
    else if (*end == 'M' || *end == 'm') v <<= 20;
    else if (*end == 'G' || *end == 'g') v <<= 30;
    else if (*end) usage("bad size suffix");
    return (size_t) v;
}

static void parse_ops(struct options *o, char *list) {
    o->nops = 0;
    if (!strcmp(list, "all")) {
        for (int i = 0; i < NOPS; i++) o->ops[o->nops++] = i;
        return;
    }
    for (char *name = strtok(list, ","); name; name = strtok(NULL, ",")) {
        int found = -1;
        for (int i = 0; i < NOPS; i++) if (!strcmp(name, OP_NAMES[i])) found = i;
        if (found < 0 || o->nops == NOPS) usage("unknown or repeated operation");
        o->ops[o->nops++] = found;
    }
}

static struct options parse(int argc, char **argv) {
    struct options o = {.min = 8, .max = 128ull << 20, .factor = 2, .ops = {ALL_REDUCE}, .nops = 1, .root = 0, .warmup = 5,
                        .iters = 20, .inflight = 64, .ranks = 0, .pause_us = 0, .out_of_place = 1, .in_place = 1, .mode = "bandwidth",
                        .path = "raw"};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc;
#define VALUE (has ? argv[++i] : (usage("an option needs a value"), ""))
        if (!strcmp(a, "-b")) o.min = parse_size(VALUE);
        else if (!strcmp(a, "-e")) o.max = parse_size(VALUE);
        else if (!strcmp(a, "-f")) o.factor = atof(VALUE);
        else if (!strcmp(a, "-o")) parse_ops(&o, VALUE);
        else if (!strcmp(a, "-R")) o.root = atoi(VALUE);
        else if (!strcmp(a, "-w")) o.warmup = atoi(VALUE);
        else if (!strcmp(a, "-n")) o.iters = atoi(VALUE);
        else if (!strcmp(a, "--mode")) o.mode = VALUE;
        else if (!strcmp(a, "--inflight")) o.inflight = atoi(VALUE);
        else if (!strcmp(a, "--pause-us")) o.pause_us = atoi(VALUE);
        else if (!strcmp(a, "--ranks")) o.ranks = atoi(VALUE);
        else if (!strcmp(a, "--in-place")) { o.in_place = 1; o.out_of_place = 0; }
        else if (!strcmp(a, "--out-of-place")) { o.out_of_place = 1; o.in_place = 0; }
        else if (!strcmp(a, "--json")) o.json = 1;
        else if (!strcmp(a, "--two-column")) o.two_column = 1;
        else if (!strcmp(a, "--window")) { o.window = 1; o.path = "raw-window"; }
        else usage(!strcmp(a, "-h") || !strcmp(a, "--help") ? NULL : "unknown option");
#undef VALUE
    }
    if (strcmp(o.mode, "bandwidth") && strcmp(o.mode, "latency") && strcmp(o.mode, "pipeline")) usage("unknown mode");
    if (o.min == 0 || o.max < o.min) usage("need 0 < -b <= -e");
    if (o.factor <= 1) usage("-f must be > 1");
    if (o.iters <= 0 || o.warmup < 0 || o.inflight <= 0) usage("-n, --inflight must be positive, -w not negative");
    if (o.pause_us < 0) usage("--pause-us must not be negative");
    if (o.pause_us > 0 && strcmp(o.mode, "latency")) usage("--pause-us needs --mode latency");
    if (o.json && o.two_column) usage("--json or --two-column, not both");
    if (o.two_column && strcmp(o.mode, "bandwidth")) usage("--two-column is for bandwidth mode");
#if NCCL_VERSION_CODE < NCCL_VERSION(2, 27, 0)
    if (o.window) usage("--window needs NCCL 2.27 or later at build time");
#endif
    return o;
}

/* nccl-tests' "count": the total for gather-like operations (a multiple of the ranks), else per rank (BenchOp.count). */
static size_t op_count(int op, size_t bytes, int n) {
    size_t count = bytes / ELEMENT;
    int gather_like = op == ALL_GATHER || op == REDUCE_SCATTER || op == ALL_TO_ALL || op == GATHER || op == SCATTER;
    return gather_like ? count / n * n : count;
}

/* nccl-tests' bus-bandwidth factors (BenchOp.busFactor). */
static double bus_factor(int op, int n) {
    if (op == ALL_REDUCE) return 2.0 * (n - 1) / n;
    if (op == ALL_GATHER || op == REDUCE_SCATTER || op == ALL_TO_ALL || op == GATHER || op == SCATTER) return (double) (n - 1) / n;
    return 1.0;
}

/* Issues the operation on every rank inside one group, with Bench's buffer use for each placement (BenchOp.operation). */
static void issue(const struct gpus *g, int op, size_t count, int in_place, int root) {
    int n = g->n;
    size_t part = count / n, slice = part * ELEMENT;
    CHECK_NCCL(ncclGroupStart());
    for (int r = 0; r < n; r++) {
        char *s = g->send[r], *d = g->recv[r];
        ncclComm_t c = g->comms[r];
        cudaStream_t st = g->streams[r];
        switch (op) {
            case ALL_REDUCE: CHECK_NCCL(ncclAllReduce(in_place ? d : s, d, count, ncclFloat, ncclSum, c, st)); break;
            case BROADCAST: CHECK_NCCL(ncclBroadcast(in_place ? d : s, d, count, ncclFloat, root, c, st)); break;
            case REDUCE: CHECK_NCCL(ncclReduce(in_place ? d : s, d, count, ncclFloat, ncclSum, root, c, st)); break;
            case ALL_GATHER: CHECK_NCCL(ncclAllGather(in_place ? d + r * slice : s, d, part, ncclFloat, c, st)); break;
            case REDUCE_SCATTER: CHECK_NCCL(ncclReduceScatter(s, in_place ? s + r * slice : d, part, ncclFloat, ncclSum, c, st)); break;
            case ALL_TO_ALL: CHECK_NCCL(ncclAlltoAll(s, d, part, ncclFloat, c, st)); break;
            case GATHER: CHECK_NCCL(ncclGather(in_place && r == root ? d + r * slice : s, d, part, ncclFloat, root, c, st)); break;
            case SCATTER: CHECK_NCCL(ncclScatter(s, in_place && r == root ? s + r * slice : d, part, ncclFloat, root, c, st)); break;
            case SEND_RECV:
                CHECK_NCCL(ncclSend(s, count, ncclFloat, (r + 1) % n, c, st));
                CHECK_NCCL(ncclRecv(d, count, ncclFloat, (r + n - 1) % n, c, st));
                break;
        }
    }
    CHECK_NCCL(ncclGroupEnd());
}

static void synchronize(const struct gpus *g) {
    for (int r = 0; r < g->n; r++) {
        CHECK_CUDA(cudaSetDevice(r));
        CHECK_CUDA(cudaStreamSynchronize(g->streams[r]));
    }
}

static void record(const struct gpus *g, cudaEvent_t *events) {
    for (int r = 0; r < g->n; r++) CHECK_CUDA(cudaEventRecord(events[r], g->streams[r]));
}

/* Spins on cudaEventQuery until every rank's event completed: the completion Bench's event thread sees. */
static void spin(const struct gpus *g, cudaEvent_t *events) {
    for (int r = 0; r < g->n; r++) {
        cudaError_t e;
        while ((e = cudaEventQuery(events[r])) == cudaErrorNotReady) {
        }
        CHECK_CUDA(e);
    }
}

static cudaEvent_t *create_events(const struct gpus *g) {
    cudaEvent_t *events = calloc(g->n, sizeof(cudaEvent_t));
    for (int r = 0; r < g->n; r++) {
        CHECK_CUDA(cudaSetDevice(r));
        CHECK_CUDA(cudaEventCreateWithFlags(&events[r], cudaEventDisableTiming));
    }
    return events;
}

static void destroy_events(const struct gpus *g, cudaEvent_t *events) {
    for (int r = 0; r < g->n; r++) CHECK_CUDA(cudaEventDestroy(events[r]));
    free(events);
}

static struct timing time_bandwidth(const struct gpus *g, const struct options *o, int op, size_t bytes, size_t count, int in_place) {
    for (int i = 0; i < o->warmup; i++) {
        issue(g, op, count, in_place, o->root);
        synchronize(g);
    }
    double t0 = now();
    for (int i = 0; i < o->iters; i++) issue(g, op, count, in_place, o->root);
    synchronize(g);
    struct timing t;
    t.us = (now() - t0) / o->iters * 1e6;
    t.algbw = bytes / t.us / 1e3;
    t.busbw = t.algbw * bus_factor(op, g->n);
    return t;
}

/* The placement columns of Bench's text table: time, algbw, busbw, #wrong (never checked here). */
static void print_cells(const struct timing *t) {
    if (t->us < 0) printf("  %10s %8s %8s %7s", "-", "-", "-", "-");
    else printf("  %10.2f %8.2f %8.2f %7s", t->us, t->algbw, t->busbw, "N/A");
}

static void print_json_timing(const char *name, const struct timing *t) {
    if (t->us < 0) printf(",\"%s\":null", name);
    else printf(",\"%s\":{\"time_us\":%.3f,\"algbw_gbs\":%.3f,\"busbw_gbs\":%.3f,\"wrong\":null,\"event_cpu_ns_per_op\":null}",
                name, t->us, t->algbw, t->busbw);
}

/* Bench's bandwidth header (Report's text table), with the operation column when several are measured. */
static void print_table_header(const struct options *o) {
    const char *opcol = o->nops > 1 ? "              " : "";
    printf("# %s%49s  %24s%12s  %22s\n", opcol, "", "out-of-place", "", "in-place"); /* each centred over its 36 columns */
    printf("# %s%12s %12s %9s %7s %5s", o->nops > 1 ? "operation     " : "", "size", "count", "type", "redop", "root");
    for (int p = 0; p < 2; p++) printf("  %10s %8s %8s %7s", "time", "algbw", "busbw", "#wrong");
    printf("\n# %s%12s %12s %9s %7s %5s", opcol, "(B)", "(elements)", "", "", "");
    printf("  %10s %8s %8s %7s  %10s %8s %8s\n", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)"); /* no trailing blanks */
}

static void bandwidth(const struct gpus *g, const struct options *o) {
    double sum_all = 0;
    int n_all = 0;
    double sum_op[NOPS] = {0};
    int n_op[NOPS] = {0};
    if (!o->json && !o->two_column) print_table_header(o);
    for (int k = 0; k < o->nops; k++) {
        int op = o->ops[k];
        int root = ROOTED[op] ? o->root : -1;
        if (o->two_column) printf("# %s (raw)\n", OP_NAMES[op]);
        size_t last = 0;
        for (double s = o->min; s <= o->max; s *= o->factor) {
            size_t bytes = (size_t) s / ELEMENT * ELEMENT;
            if (bytes < ELEMENT) bytes = ELEMENT;
            if (bytes == last) continue;
            last = bytes;
            size_t count = op_count(op, bytes, g->n);
            if (count == 0) continue;
            fprintf(stderr, "raw_nccl_bench: %s %zu B\n", OP_NAMES[op], bytes);
            struct timing oop = {-1, 0, 0}, ip = {-1, 0, 0};
            if (o->out_of_place) oop = time_bandwidth(g, o, op, bytes, count, 0);
            if (o->in_place) ip = time_bandwidth(g, o, op, bytes, count, 1);
            for (int p = 0; p < 2; p++) {
                const struct timing *t = p ? &ip : &oop;
                if (t->us < 0) continue;
                sum_all += t->busbw; n_all++;
                sum_op[op] += t->busbw; n_op[op]++;
            }
            const char *redop = REDUCES[op] ? "sum" : "none";
            if (o->two_column) {
                printf("%zu %.3f\n", bytes, (oop.us >= 0 ? oop : ip).busbw);
            } else if (o->json) {
                printf("{\"mode\":\"bandwidth\",\"op\":\"%s\",\"path\":\"%s\",\"size\":%zu,\"count\":%zu,\"type\":\"float32\","
                       "\"redop\":\"%s\",\"root\":%d", OP_NAMES[op], o->path, bytes, count, redop, root);
                print_json_timing("out_of_place", &oop);
                print_json_timing("in_place", &ip);
                printf("}\n");
            } else {
                printf("  ");
                if (o->nops > 1) printf("%-13s ", OP_NAMES[op]);
                printf("%12zu %12zu %9s %7s %5d", bytes, count, "float32", redop, root);
                print_cells(&oop);
                print_cells(&ip);
                printf("\n");
            }
            fflush(stdout);
        }
    }
    if (o->json || o->two_column) return;
    printf("# Out of bounds values : N/A (not checked)\n");
    if (o->nops > 1) {
        for (int k = 0; k < o->nops; k++) {
            int op = o->ops[k];
            if (n_op[op]) printf("# Avg bus bandwidth    : %.3f (%s)\n", sum_op[op] / n_op[op], OP_NAMES[op]);
        }
    }
    printf("# Avg bus bandwidth    : %.3f\n", n_all ? sum_all / n_all : 0.0);
}

static int compare_longs(const void *a, const void *b) {
    long long x = *(const long long *) a, y = *(const long long *) b;
    return (x > y) - (x < y);
}

/* Bench's percentile: the sample at rank ceil(p * n) of the sorted samples, in microseconds. */
static double pct(const long long *sorted, int n, double p) {
    double at = p * n;
    int i = (int) at;
    if (i < at) i++; /* ceil */
    i--;
    if (i > n - 1) i = n - 1;
    if (i < 0) i = 0;
    return sorted[i] / 1e3;
}

static void latency(const struct gpus *g, const struct options *o, int op) {
    size_t count = op_count(op, o->min, g->n);
    int in_place = !o->out_of_place;
    cudaEvent_t *events = create_events(g);
    int warm = o->warmup > 1000 ? o->warmup : 1000;
    for (int i = 0; i < warm; i++) {
        issue(g, op, count, in_place, o->root);
        record(g, events);
        spin(g, events);
    }
    long long *samples = malloc(o->iters * sizeof(long long));
    double sum = 0;
    for (int i = 0; i < o->iters; i++) {
        if (o->pause_us > 0) {
            struct timespec pause = {o->pause_us / 1000000, (o->pause_us % 1000000) * 1000L};
            nanosleep(&pause, NULL);
        }
        double t0 = now();
        issue(g, op, count, in_place, o->root);
        record(g, events);
        spin(g, events);
        samples[i] = (long long) ((now() - t0) * 1e9);
        sum += samples[i];
    }
    qsort(samples, o->iters, sizeof(long long), compare_longs);
    double p50 = pct(samples, o->iters, 0.50), p99 = pct(samples, o->iters, 0.99), p999 = pct(samples, o->iters, 0.999);
    double mean = sum / o->iters / 1e3;
    if (o->json) {
        printf("{\"mode\":\"latency\",\"op\":\"%s\",\"path\":\"%s\",\"size\":%zu,\"samples\":%d,\"p50_us\":%.2f,\"p99_us\":%.2f,"
               "\"p999_us\":%.2f,\"mean_us\":%.2f,\"event_cpu_ns_per_op\":null}\n", OP_NAMES[op], o->path, o->min, o->iters, p50, p99, p999, mean);
    } else {
        printf("  %s %zu B via %s: round trip p50 %.2f us, p99 %.2f us, p99.9 %.2f us, mean %.2f us (%d samples);"
               " no event thread: the issuing thread spins on cudaEventQuery\n", OP_NAMES[op], o->min, o->path, p50, p99, p999, mean, o->iters);
    }
    free(samples);
    destroy_events(g, events);
}

static void pipeline(const struct gpus *g, const struct options *o, int op) {
    size_t count = op_count(op, o->min, g->n);
    int in_place = !o->out_of_place, window = o->inflight;
    cudaEvent_t *probe = create_events(g);
    int warm = o->warmup > 1000 ? o->warmup : 1000;
    for (int i = 0; i < warm; i++) {
        issue(g, op, count, in_place, o->root);
        record(g, probe);
        spin(g, probe);
    }
    destroy_events(g, probe);
    cudaEvent_t **slots = calloc(window, sizeof(cudaEvent_t *));
    for (int s = 0; s < window; s++) slots[s] = create_events(g);
    double t0 = now();
    for (int i = 0; i < o->iters; i++) {
        int slot = i % window;
        if (i >= window) spin(g, slots[slot]); /* the operation issued --inflight ago must be done first */
        issue(g, op, count, in_place, o->root);
        record(g, slots[slot]);
    }
    for (int s = 0; s < window && s < o->iters; s++) spin(g, slots[s]);
    double seconds = now() - t0;
    double rate = o->iters / seconds;
    if (o->json) {
        printf("{\"mode\":\"pipeline\",\"op\":\"%s\",\"path\":\"%s\",\"size\":%zu,\"inflight\":%d,\"ops\":%d,\"ops_per_s\":%.0f,"
               "\"event_cpu_ns_per_op\":null}\n", OP_NAMES[op], o->path, o->min, window, o->iters, rate);
    } else {
        printf("  %s %zu B via %s, %d in flight: %.0f ops/s (%d ops per rank in %.3f s); no event thread: the issuing thread"
               " spins on cudaEventQuery\n", OP_NAMES[op], o->min, o->path, window, rate, o->iters, seconds);
    }
    for (int s = 0; s < window; s++) destroy_events(g, slots[s]);
    free(slots);
}

int main(int argc, char **argv) {
    struct options o = parse(argc, argv);
    int devices = 0, version = 0;
    CHECK_CUDA(cudaGetDeviceCount(&devices));
    CHECK_NCCL(ncclGetVersion(&version));
    struct gpus g;
    g.n = o.ranks > 0 ? o.ranks : devices;
    if (g.n > devices) usage("--ranks is more than the GPUs present");
    if (o.root < 0 || o.root >= g.n) usage("-R must name a rank");
    size_t bytes = !strcmp(o.mode, "bandwidth") ? o.max : o.min;
    g.comms = calloc(g.n, sizeof(ncclComm_t));
    g.streams = calloc(g.n, sizeof(cudaStream_t));
    g.send = calloc(g.n, sizeof(char *));
    g.recv = calloc(g.n, sizeof(char *));
    CHECK_NCCL(ncclCommInitAll(g.comms, g.n, NULL));
    for (int r = 0; r < g.n; r++) {
        CHECK_CUDA(cudaSetDevice(r));
        CHECK_CUDA(cudaStreamCreateWithFlags(&g.streams[r], cudaStreamNonBlocking));
        if (o.window) {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
            CHECK_NCCL(ncclMemAlloc((void **) &g.send[r], bytes));
            CHECK_NCCL(ncclMemAlloc((void **) &g.recv[r], bytes));
#endif
        } else {
            CHECK_CUDA(cudaMalloc((void **) &g.send[r], bytes));
            CHECK_CUDA(cudaMalloc((void **) &g.recv[r], bytes));
        }
        CHECK_CUDA(cudaMemset(g.send[r], 1, bytes));
    }
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
    if (o.window) { /* registration is collective: every communicator's call inside one group from this thread */
        g.send_win = calloc(g.n, sizeof(ncclWindow_t));
        g.recv_win = calloc(g.n, sizeof(ncclWindow_t));
        CHECK_NCCL(ncclGroupStart());
        for (int r = 0; r < g.n; r++) {
            CHECK_NCCL(ncclCommWindowRegister(g.comms[r], g.send[r], bytes, &g.send_win[r], NCCL_WIN_COLL_SYMMETRIC));
            CHECK_NCCL(ncclCommWindowRegister(g.comms[r], g.recv[r], bytes, &g.recv_win[r], NCCL_WIN_COLL_SYMMETRIC));
        }
        CHECK_NCCL(ncclGroupEnd());
    }
#endif
    int both = o.out_of_place && o.in_place && !strcmp(o.mode, "bandwidth"); /* latency and pipeline take one placement */
    const char *placement = both ? "out-of-place and in-place" : o.out_of_place ? "out-of-place" : "in-place";
    if (o.two_column) {
        printf("# raw NCCL %d.%d.%d, %d rank(s): bus bandwidth (GB/s) by size (B), %s\n", version / 10000, version / 100 % 100,
               version % 100, g.n, o.out_of_place ? "out-of-place" : "in-place");
    } else if (!o.json) {
        printf("# raw NCCL %d.%d.%d: %d rank(s) in one process, one group per iteration from one thread, path %s, %s%s\n",
               version / 10000, version / 100 % 100, version % 100, g.n, o.path, placement,
               o.window ? ", buffers in collective-symmetric windows" : "");
    }
    if (!strcmp(o.mode, "bandwidth")) bandwidth(&g, &o);
    else for (int k = 0; k < o.nops; k++) {
        if (!strcmp(o.mode, "latency")) latency(&g, &o, o.ops[k]);
        else pipeline(&g, &o, o.ops[k]);
        fflush(stdout);
    }
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
    if (o.window) {
        CHECK_NCCL(ncclGroupStart());
        for (int r = 0; r < g.n; r++) {
            CHECK_NCCL(ncclCommWindowDeregister(g.comms[r], g.send_win[r]));
            CHECK_NCCL(ncclCommWindowDeregister(g.comms[r], g.recv_win[r]));
        }
        CHECK_NCCL(ncclGroupEnd());
    }
#endif
    for (int r = 0; r < g.n; r++) {
        CHECK_CUDA(cudaSetDevice(r));
        if (o.window) {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
            CHECK_NCCL(ncclMemFree(g.send[r]));
            CHECK_NCCL(ncclMemFree(g.recv[r]));
#endif
        } else {
            CHECK_CUDA(cudaFree(g.send[r]));
            CHECK_CUDA(cudaFree(g.recv[r]));
        }
        CHECK_CUDA(cudaStreamDestroy(g.streams[r]));
        CHECK_NCCL(ncclCommDestroy(g.comms[r]));
    }
    return 0;
}
