package org.jccl.examples.bench;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.jccl.core.DataType;
import org.jccl.core.ReduceOp;

/**
 * The benchmark's command line, nccl-tests style: {@code -b 8 -e 128M -f 2 -o allreduce -d float -r sum -w 5 -n 20
 * -c 1}, plus jccl's own {@code --path core|reactive}, {@code --mode bandwidth|latency|pipeline},
 * {@code --inflight N}, {@code --pause-us N}, {@code --compile-warmup N}, {@code --ranks N}, {@code --in-place},
 * {@code --out-of-place}, {@code --json}, {@code --per-process}, {@code --plot FILE}, {@code --compare FILE}.
 * {@code outOfPlace} and {@code inPlace} say which forms bandwidth mode measures (both, as nccl-tests, unless one
 * is asked for); latency and pipeline modes measure one form, the in-place one only when it alone is asked for.
 * {@code plot} is null when no plot is asked for.
 */
record BenchOptions(long minBytes, long maxBytes, double factor, List<BenchOp> ops, DataType type, ReduceOp redop,
                    int root, int warmup, int iters, boolean check, boolean outOfPlace, boolean inPlace, String path,
                    String mode, int inFlight, long pauseMicros, int compileWarmup, int ranks, boolean json,
                    boolean perProcess, Path plot, List<Path> compare, boolean symmetric) {

    static final String USAGE = """
            usage: bench [options]
              -b SIZE        smallest size in bytes (K, M, G suffixes), default 8
              -e SIZE        largest size, default 128M
              -f FACTOR      size multiplier between steps, default 2
              -o OPS         allreduce,broadcast,reduce,allgather,reducescatter,alltoall,gather,scatter,sendrecv or all; default allreduce
              -d TYPE        int8 uint8 int32 uint32 int64 uint64 half float double bfloat16 fp8e4m3 fp8e5m2; default float
              -r OP          sum prod max min avg; default sum
              -R ROOT        root rank of rooted operations, default 0
              -w N           warm-up iterations, default 5
              -n N           timed iterations, default 20
              -c 0|1         check the results (#wrong column), default 1
              --in-place     in-place forms only (default: out-of-place and in-place side by side, as nccl-tests;
                             latency and pipeline modes measure out-of-place unless this is given)
              --out-of-place out-of-place forms only
              --path P       core (Work) or reactive (Mono), default core
              --mode M       bandwidth (default), latency (round trips: p50/p99/p999), pipeline (ops/s with --inflight in flight),
                             idle (the CPU time of the event thread and of every jccl thread over 2 s with nothing pending)
              --inflight N   operations in flight per rank in pipeline mode, default 64
              --pause-us N   latency mode: sleep N microseconds before each sample, as a server whose requests arrive
                             now and then (the engine's threads have gone to sleep: what waking them costs); default 0
              --compile-warmup N
                             bandwidth mode: before an operation's first size, N small operations of it (bursts of
                             64, at most 64 KiB) so that the JVM has compiled the issue path; 0 skips; default 20000
              --ranks N      ranks (GPUs used, or host ranks); default: every GPU, or 4 host ranks
              --json         one JSON object per result line on stdout
              --plot FILE    bandwidth mode: also write an SVG chart of bus bandwidth against size, one curve per operation
              --compare FILE draw another run beside jccl's in the plot: Bench's --json output, or raw_nccl_bench's
                             --two-column output ('size busbw' lines, a '#' line naming each curve); may be repeated
              --per-process  one process per GPU (or host rank), started by jccl's launcher: ranks join through the
                             rendezvous (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR/PORT); rank 0 prints the results
              --symmetric    the buffers come from a SymmetricPool (one collective-symmetric window per rank), where
                             NCCL 2.27+ runs its symmetric kernels; default: plain device memory
            """;

    static BenchOptions parse(String[] args) {
        long minBytes = 8;
        long maxBytes = 128L << 20;
        double factor = 2;
        List<BenchOp> ops = List.of(BenchOp.ALL_REDUCE);
        DataType type = DataType.FLOAT32;
        ReduceOp redop = ReduceOp.SUM;
        int root = 0;
        int warmup = 5;
        int iters = 20;
        boolean check = true;
        boolean outOfPlace = true;
        boolean inPlace = true;
        String path = "core";
        String mode = "bandwidth";
        int inFlight = 64;
        long pauseMicros = 0;
        int compileWarmup = 20_000;
        int ranks = 0;
        boolean json = false;
        boolean perProcess = false;
        boolean symmetric = false;
        Path plot = null;
        List<Path> compare = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "-b" -> minBytes = size(value(args, ++i, a));
                case "-e" -> maxBytes = size(value(args, ++i, a));
                case "-f" -> factor = Double.parseDouble(value(args, ++i, a));
                case "-o" -> ops = opList(value(args, ++i, a));
                case "-d" -> type = type(value(args, ++i, a));
                case "-r" -> redop = redop(value(args, ++i, a));
                case "-R" -> root = Integer.parseInt(value(args, ++i, a));
                case "-w" -> warmup = Integer.parseInt(value(args, ++i, a));
                case "-n" -> iters = Integer.parseInt(value(args, ++i, a));
                case "-c" -> check = !value(args, ++i, a).equals("0");
                case "--in-place" -> {
                    inPlace = true;
                    outOfPlace = false;
                }
                case "--out-of-place" -> {
                    outOfPlace = true;
                    inPlace = false;
                }
                case "--path" -> path = oneOf(value(args, ++i, a), a, "core", "reactive");
                case "--mode" -> mode = oneOf(value(args, ++i, a), a, "bandwidth", "latency", "pipeline", "idle");
                case "--inflight" -> inFlight = Integer.parseInt(value(args, ++i, a));
                case "--pause-us" -> pauseMicros = Long.parseLong(value(args, ++i, a));
                case "--compile-warmup" -> compileWarmup = Integer.parseInt(value(args, ++i, a));
                case "--ranks" -> ranks = Integer.parseInt(value(args, ++i, a));
                case "--json" -> json = true;
                case "--symmetric" -> symmetric = true;
                case "--per-process" -> perProcess = true;
                case "--plot" -> plot = Path.of(value(args, ++i, a));
                case "--compare" -> compare.add(Path.of(value(args, ++i, a)));
                case "-h", "--help" -> throw new IllegalArgumentException("");
                default -> throw new IllegalArgumentException("unknown option " + a);
            }
        }
        if (minBytes <= 0 || maxBytes < minBytes) throw new IllegalArgumentException("need 0 < -b <= -e");
        if (factor <= 1) throw new IllegalArgumentException("-f must be > 1");
        if (iters <= 0 || warmup < 0 || inFlight <= 0) throw new IllegalArgumentException("-n, --inflight must be positive, -w not negative");
        if (pauseMicros < 0) throw new IllegalArgumentException("--pause-us must not be negative");
        if (compileWarmup < 0) throw new IllegalArgumentException("--compile-warmup must not be negative");
        if (pauseMicros > 0 && !mode.equals("latency")) throw new IllegalArgumentException("--pause-us needs --mode latency");
        if (plot != null && !mode.equals("bandwidth")) throw new IllegalArgumentException("--plot needs --mode bandwidth");
        if (!compare.isEmpty() && plot == null) throw new IllegalArgumentException("--compare needs --plot");
        return new BenchOptions(minBytes, maxBytes, factor, ops, type, redop, root, warmup, iters, check, outOfPlace, inPlace,
                path, mode, inFlight, pauseMicros, compileWarmup, ranks, json, perProcess, plot, List.copyOf(compare), symmetric);
    }

    /** The one form latency and pipeline modes measure. */
    boolean singleFormInPlace() {
        return !outOfPlace;
    }

    /** What the results' title says about the forms measured. */
    String formsMeasured() {
        if (mode.equals("bandwidth") && outOfPlace && inPlace) return "out-of-place and in-place";
        return singleFormInPlace() ? "in-place" : "out-of-place";
    }

    /** The sizes of the sweep, each a multiple of the element size. */
    List<Long> sizes() {
        List<Long> sizes = new ArrayList<>();
        for (double s = minBytes; s <= maxBytes; s *= factor) {
            long bytes = Math.max(type.size(), (long) s / type.size() * type.size());
            if (sizes.isEmpty() || sizes.get(sizes.size() - 1) != bytes) sizes.add(bytes);
        }
        return sizes;
    }

    private static String value(String[] args, int i, String option) {
        if (i >= args.length) throw new IllegalArgumentException(option + " needs a value");
        return args[i];
    }

    private static String oneOf(String v, String option, String... allowed) {
        for (String a : allowed) if (a.equals(v)) return v;
        throw new IllegalArgumentException(option + " must be one of " + String.join(", ", allowed) + ", not " + v);
    }

    static long size(String s) {
        String t = s.trim().toUpperCase(Locale.ROOT);
        long mult = 1;
        if (t.endsWith("K")) mult = 1L << 10;
        else if (t.endsWith("M")) mult = 1L << 20;
        else if (t.endsWith("G")) mult = 1L << 30;
        if (mult > 1) t = t.substring(0, t.length() - 1);
        return Long.parseLong(t) * mult;
    }

    private static List<BenchOp> opList(String s) {
        if (s.equals("all")) return List.of(BenchOp.values());
        List<BenchOp> ops = new ArrayList<>();
        for (String part : s.split(",")) ops.add(BenchOp.parse(part.trim()));
        return ops;
    }

    private static DataType type(String s) {
        return switch (s.toLowerCase(Locale.ROOT)) {
            case "int8", "char" -> DataType.INT8;
            case "uint8" -> DataType.UINT8;
            case "int32", "int" -> DataType.INT32;
            case "uint32" -> DataType.UINT32;
            case "int64" -> DataType.INT64;
            case "uint64" -> DataType.UINT64;
            case "half", "float16" -> DataType.FLOAT16;
            case "float", "float32" -> DataType.FLOAT32;
            case "double", "float64" -> DataType.FLOAT64;
            case "bfloat16", "bf16" -> DataType.BFLOAT16;
            case "fp8e4m3", "f8e4m3" -> DataType.FLOAT8_E4M3;
            case "fp8e5m2", "f8e5m2" -> DataType.FLOAT8_E5M2;
            default -> throw new IllegalArgumentException("unknown type " + s);
        };
    }

    private static ReduceOp redop(String s) {
        return switch (s.toLowerCase(Locale.ROOT)) {
            case "sum" -> ReduceOp.SUM;
            case "prod" -> ReduceOp.PROD;
            case "max" -> ReduceOp.MAX;
            case "min" -> ReduceOp.MIN;
            case "avg" -> ReduceOp.AVG;
            default -> throw new IllegalArgumentException("unknown reduction " + s);
        };
    }
}
