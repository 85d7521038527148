package org.jccl.examples.bench;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.Jccl;
import org.jccl.core.Operation;
import org.jccl.core.UniqueId;
import org.jccl.core.rendezvous.Rendezvous;
import org.jccl.rma.SymmetricPool;

/**
 * jccl's benchmark, nccl-tests style: bus bandwidth over a size sweep ({@code --mode bandwidth}), round-trip
 * latency percentiles ({@code --mode latency}) and pipelined operations per second ({@code --mode pipeline}),
 * through the core ({@code Work}) or reactive ({@code Mono}) path, with the event thread's CPU time per operation.
 * One process drives every local GPU (or {@code --ranks} host ranks), or, with {@code --per-process} under jccl's
 * launcher, one process per GPU joined through the rendezvous. Results on stdout (nccl-tests' table, or JSON lines),
 * progress on stderr; with {@code --plot}, an SVG chart of bus bandwidth against size as well.
 */
public final class Bench {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private static final long COMPILER_WARMUP_MAX_BYTES = 64 << 10;

    private final BenchOptions options;
    private final Backend backend;
    private final List<Communicator> comms;
    private final Report report;
    private final List<Buffer[]> buffers = new ArrayList<>();
    private final List<BandwidthRow> rows = new ArrayList<>();
    /** The curves --compare read, drawn beside this run's; null when this process writes no plot. */
    private final List<Series> compared;

    private Bench(BenchOptions options, Backend backend, List<Communicator> comms, PrintStream out, List<Series> compared) {
        this.options = options;
        this.backend = backend;
        this.comms = comms;
        this.report = Report.to(out, options.json(), options.ops().size() > 1);
        this.compared = compared;
    }

    public static void main(String[] args) throws Exception {
        System.exit(run(args, System.out));
    }

    /** Runs the benchmark on the process's backend; returns the exit status (2: bad arguments). */
    public static int run(String[] args, PrintStream out) throws Exception {
        BenchOptions options;
        try {
            options = BenchOptions.parse(args);
        } catch (IllegalArgumentException e) {
            if (!e.getMessage().isEmpty()) System.err.println("bench: " + e.getMessage());
            System.err.print(BenchOptions.USAGE);
            return 2;
        }
        List<Series> compared;
        try {
            compared = readCompared(options);
        } catch (IOException | IllegalArgumentException e) {
            System.err.println("bench: --compare: " + e.getMessage()); // before any GPU work, like a bad option
            return 2;
        }
        Backend backend = Jccl.backend();
        if (options.perProcess()) return runPerProcess(options, backend, out, compared);
        int ranks = options.ranks() > 0 ? options.ranks() : backend.kind() == BackendKind.HOST ? 4 : backend.deviceCount();
        List<Communicator> comms = backend.initAll(ranks).get(5, TimeUnit.MINUTES);
        try {
            new Bench(options, backend, comms, out, compared).run();
        } finally {
            for (Communicator c : comms) c.close();
        }
        return 0;
    }

    /**
     * One rank per process, started by jccl's launcher: the ranks join through the rendezvous (rank 0 makes the
     * unique id), each drives GPU {@code LOCAL_RANK} (or one host rank), and rank 0 prints the results.
     */
    private static int runPerProcess(BenchOptions options, Backend backend, PrintStream out, List<Series> compared) throws Exception {
        try (Rendezvous rdzv = Rendezvous.fromEnvironment()) {
            UniqueId id = rdzv.shareUniqueIdNow("bench/communicator", backend::newUniqueId);
            int device = backend.kind() == BackendKind.HOST ? -1 : rdzv.localRank();
            try (Communicator comm = backend.initRank(id, rdzv.worldSize(), rdzv.rank(), device).get(5, TimeUnit.MINUTES)) {
                boolean reports = rdzv.rank() == 0;
                PrintStream results = reports ? out : new PrintStream(OutputStream.nullOutputStream());
                new Bench(options, backend, List.of(comm), results, reports ? compared : null).run();
            }
            rdzv.barrierNow("bench/done");
        }
        return 0;
    }

    /**
     * The curves of {@code --compare}; one whose label this run's curves (or an earlier file's) already use is
     * told apart by its file's name.
     */
    private static List<Series> readCompared(BenchOptions options) throws IOException {
        Set<String> labels = new HashSet<>();
        for (BenchOp op : options.ops()) labels.add(Series.label(op, options.path()));
        List<Series> compared = new ArrayList<>();
        for (Path file : options.compare()) {
            for (Series s : CompareFile.read(file)) {
                String label = labels.contains(s.label()) ? s.label() + " from " + file.getFileName() : s.label();
                labels.add(label);
                compared.add(new Series(label, s.key(), true, s.points()));
            }
        }
        return compared;
    }

    /** Ranks of the communicators (all of them here, or spread over processes with {@code --per-process}). */
    private int world() {
        return comms.get(0).size();
    }

    private void run() throws Exception {
        THREADS.setThreadCpuTimeEnabled(true);
        report.header(String.format("jccl bench %s: backend %s (%s), %d rank(s), path %s, %s%s", LocalDate.now(),
                backend.kind().id(), backend.describe(), world(), options.path(), options.formsMeasured(),
                options.symmetric() ? ", symmetric buffers" : ""), options.mode());
        long maxBytes = options.mode().equals("bandwidth") ? options.maxBytes() : options.minBytes();
        List<SymmetricPool> pools = options.symmetric()
                ? SymmetricPool.createAll(comms, SymmetricPool.bytesFor(maxBytes, maxBytes)).get(120, TimeUnit.SECONDS) : List.of();
        for (int i = 0; i < comms.size(); i++) {
            Communicator c = comms.get(i);
            buffers.add(pools.isEmpty() ? new Buffer[] {backend.allocate(c.device(), maxBytes), backend.allocate(c.device(), maxBytes)}
                    : new Buffer[] {pools.get(i).allocate(maxBytes), pools.get(i).allocate(maxBytes)});
        }
        try {
            for (BenchOp op : options.ops()) {
                switch (options.mode()) {
                    case "latency" -> latency(op, options.minBytes());
                    case "pipeline" -> pipeline(op, options.minBytes());
                    case "idle" -> idle(op, options.minBytes());
                    default -> {
                        warmCompiler(op);
                        for (long bytes : options.sizes()) bandwidth(op, bytes);
                    }
                }
            }
        } finally {
            for (Buffer[] pair : buffers) for (Buffer b : pair) b.close();
            List<CompletableFuture<Void>> closing = new ArrayList<>();
            for (SymmetricPool p : pools) closing.add(p.closeAsync());
            CompletableFuture.allOf(closing.toArray(new CompletableFuture<?>[0])).get(120, TimeUnit.SECONDS);
        }
        if (!options.mode().equals("bandwidth")) return;
        report.bandwidthFooter();
        if (options.plot() != null && compared != null) writePlot();
    }

    /** This run's curves, one per operation, and the compared ones beside them. */
    private void writePlot() throws IOException {
        List<Series> curves = new ArrayList<>(Series.byOperation(rows));
        curves.addAll(compared);
        SvgPlot.write(options.plot(), String.format("Bus bandwidth, jccl bench %s: backend %s, %d rank(s), path %s",
                LocalDate.now(), backend.kind().id(), world(), options.path()), backend.describe(), curves);
        System.err.println("bench: wrote " + options.plot());
    }

    /**
     * The JVM compiles jccl's issue path (and the bench's) only after some thousands of calls; until then a call takes
     * tens of microseconds, which nccl-tests' few warm-up iterations ({@code -w}, meant for the GPU) do not cover.
     * So before an operation's first size, {@code --compile-warmup} small ones (the sweep's smallest size, at most
     * {@value #COMPILER_WARMUP_MAX_BYTES} bytes, in bursts of 64), as a long-running service's calls are compiled.
     */
    private void warmCompiler(BenchOp op) throws Exception {
        long count = op.count(Math.min(options.minBytes(), COMPILER_WARMUP_MAX_BYTES), options.type(), world());
        if (count == 0) return;
        Issuer issuer = issuer(operations(op, count, false));
        for (int burst = 0; burst < options.compileWarmup() / 64; burst++) {
            CompletableFuture<?>[] last = null;
            for (int i = 0; i < 64; i++) last = issueAll(issuer);
            waitAll(last);
        }
    }

    private void bandwidth(BenchOp op, long bytes) throws Exception {
        long count = op.count(bytes, options.type(), world());
        if (count == 0) return;
        System.err.printf("bench: %s %d B%n", op.id, bytes);
        Timing outOfPlace = options.outOfPlace() ? bandwidth(op, bytes, count, false) : null;
        Timing inPlace = options.inPlace() ? bandwidth(op, bytes, count, true) : null;
        BandwidthRow row = new BandwidthRow(op, options.path(), bytes, count, options.type().toString(),
                op.reduces ? options.redop().toString() : "none", op.rooted ? options.root() : -1, outOfPlace, inPlace);
        rows.add(row);
        report.bandwidth(row);
    }

    /** One form of one row: nccl-tests' timed burst, then (with -c 1) one checked operation. */
    private Timing bandwidth(BenchOp op, long bytes, long count, boolean inPlace) throws Exception {
        List<List<Operation>> ops = operations(op, count, inPlace);
        Issuer issuer = issuer(ops);
        for (int i = 0; i < options.warmup(); i++) waitAll(issueAll(issuer));
        long cpu0 = eventThreadCpu();
        long done0 = backend.completedWorkCount();
        long t0 = System.nanoTime();
        CompletableFuture<?>[] last = null;
        for (int i = 0; i < options.iters(); i++) last = issueAll(issuer);
        spinUntilDone(last); // like nccl-tests' synchronize: no thread wake-up inside the measurement
        waitAll(last);
        double micros = (System.nanoTime() - t0) / 1e3 / options.iters();
        double cpuPerOp = perOp(eventThreadCpu() - cpu0, backend.completedWorkCount() - done0);
        double algbw = bytes / micros / 1e3;
        long wrong = -1;
        if (options.check() && DataCheck.supports(options.type())) {
            DataCheck.fillInputs(comms, ops, options.type());
            waitAll(issueAll(issuer));
            wrong = DataCheck.countWrong(op, comms, ops, count, options.type(), options.redop(), options.root());
        }
        return new Timing(micros, algbw, algbw * op.busFactor(world()), wrong, cpuPerOp);
    }

    private void latency(BenchOp op, long bytes) throws Exception {
        long count = op.count(bytes, options.type(), world());
        List<List<Operation>> ops = operations(op, count, options.singleFormInPlace());
        Issuer issuer = issuer(ops);
        for (int i = 0; i < Math.max(options.warmup(), 1000); i++) waitAll(issueAll(issuer));
        long[] samples = new long[options.iters()];
        long cpu0 = eventThreadCpu();
        long done0 = backend.completedWorkCount();
        for (int i = 0; i < samples.length; i++) {
            if (options.pauseMicros() > 0) pause(options.pauseMicros());
            long t0 = System.nanoTime();
            CompletableFuture<?>[] futures = issueAll(issuer);
            spinUntilDone(futures);
            samples[i] = System.nanoTime() - t0;
            for (CompletableFuture<?> f : futures) f.join();
        }
        double cpuPerOp = perOp(eventThreadCpu() - cpu0, backend.completedWorkCount() - done0);
        Arrays.sort(samples);
        double mean = Arrays.stream(samples).average().orElse(0) / 1e3;
        report.latency(op, issuer.path(), bytes, samples.length, pct(samples, 0.50), pct(samples, 0.99), pct(samples, 0.999), mean, cpuPerOp);
    }

    /** Sleeps {@code micros}, as the time between a server's requests. */
    private static void pause(long micros) throws InterruptedException {
        Thread.sleep(micros / 1000, (int) (micros % 1000) * 1000);
    }

    private void pipeline(BenchOp op, long bytes) throws Exception {
        long count = op.count(bytes, options.type(), world());
        List<List<Operation>> ops = operations(op, count, options.singleFormInPlace());
        Issuer issuer = issuer(ops);
        for (int i = 0; i < Math.max(options.warmup(), 1000); i++) waitAll(issueAll(issuer));
        int n = comms.size();
        int window = options.inFlight();
        CompletableFuture<?>[][] inFlight = new CompletableFuture<?>[n][window];
        long cpu0 = eventThreadCpu();
        long done0 = backend.completedWorkCount();
        long t0 = System.nanoTime();
        if (issuer instanceof ReactiveIssuer reactive) {
            CompletableFuture<?>[] pipelines = new CompletableFuture<?>[n];
            for (int r = 0; r < n; r++) pipelines[r] = reactive.pipeline(r, options.iters(), window);
            waitAll(pipelines);
        } else {
            for (int i = 0; i < options.iters(); i++) {
                int slot = i % window;
                for (int r = 0; r < n; r++) {
                    CompletableFuture<?> previous = inFlight[r][slot];
                    if (previous != null) {
                        while (!previous.isDone()) Thread.onSpinWait();
                    }
                    inFlight[r][slot] = issuer.issue(r);
                }
            }
            for (CompletableFuture<?>[] rank : inFlight) for (CompletableFuture<?> f : rank) if (f != null) f.get(5, TimeUnit.MINUTES);
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        double cpuPerOp = perOp(eventThreadCpu() - cpu0, backend.completedWorkCount() - done0);
        report.pipeline(op, issuer.path(), bytes, window, options.iters(), seconds, cpuPerOp);
    }

    /**
     * The CPU time of the event thread, and of every jccl thread, while nothing is pending, after some work (they
     * should park, spending none).
     */
    private void idle(BenchOp op, long bytes) throws Exception {
        long count = op.count(bytes, options.type(), world());
        Issuer issuer = issuer(operations(op, count, options.singleFormInPlace()));
        for (int i = 0; i < Math.max(options.warmup(), 1000); i++) waitAll(issueAll(issuer));
        Thread.sleep(100); // let the threads reach their parked state; the measurement starts after
        long cpu0 = eventThreadCpu();
        long[] jccl = jcclThreadIds();
        long jccl0 = cpuOf(jccl);
        long t0 = System.nanoTime();
        Thread.sleep(2000);
        double seconds = (System.nanoTime() - t0) / 1e9;
        report.idle(seconds, (eventThreadCpu() - cpu0) / 1e3, backend.eventThread().getState().toString(),
                (cpuOf(jccl) - jccl0) / 1e3, jccl.length);
    }

    /** The ids of the process's jccl threads (their names start with {@code jccl-}). */
    private static long[] jcclThreadIds() {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith("jccl-"))
                .mapToLong(Thread::getId).toArray();
    }

    /** The CPU time of these threads together; one that ended counts nothing. */
    private static long cpuOf(long[] threadIds) {
        long sum = 0;
        for (long id : threadIds) sum += Math.max(0, THREADS.getThreadCpuTime(id));
        return sum;
    }

    private List<List<Operation>> operations(BenchOp op, long count, boolean inPlace) {
        List<List<Operation>> ops = new ArrayList<>();
        long bytes = op.bufferBytes(count, options.type());
        for (int r = 0; r < comms.size(); r++) {
            Communicator c = comms.get(r);
            Buffer send = buffers.get(r)[0].slice(0, bytes);
            Buffer recv = buffers.get(r)[1].slice(0, bytes);
            ops.add(op == BenchOp.SEND_RECV ? List.of(op.pair(c, send, recv, count, options.type()))
                    : List.of(op.operation(c, send, recv, count, options.type(), options.redop(), options.root(), inPlace)));
        }
        return ops;
    }

    private Issuer issuer(List<List<Operation>> ops) {
        if (options.path().equals("reactive")) return new ReactiveIssuer(comms, ops);
        return new CoreIssuer(comms, ops);
    }

    private CompletableFuture<?>[] issueAll(Issuer issuer) {
        CompletableFuture<?>[] futures = new CompletableFuture<?>[comms.size()];
        for (int r = 0; r < futures.length; r++) futures[r] = issuer.issue(r);
        return futures;
    }

    private static void spinUntilDone(CompletableFuture<?>[] futures) {
        for (CompletableFuture<?> f : futures) {
            while (!f.isDone()) Thread.onSpinWait();
        }
    }

    private static void waitAll(CompletableFuture<?>[] futures) throws Exception {
        CompletableFuture.allOf(futures).get(10, TimeUnit.MINUTES);
    }

    private long eventThreadCpu() {
        long cpu = THREADS.getThreadCpuTime(backend.eventThread().getId());
        return Math.max(cpu, 0);
    }

    private static double perOp(long cpuNanos, long ops) {
        return ops <= 0 ? 0 : (double) cpuNanos / ops;
    }

    private static double pct(long[] sorted, double p) {
        int i = (int) Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1);
        return sorted[Math.max(0, i)] / 1e3;
    }
}
