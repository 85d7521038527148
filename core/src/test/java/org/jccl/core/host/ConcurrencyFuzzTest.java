package org.jccl.core.host;

import static org.jccl.core.host.HostTesting.host;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.jccl.core.Buffer;
import org.jccl.core.CommOptions;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.ReduceOp;
import org.jccl.core.error.JcclException;
import org.jccl.core.spi.DriverConstants;
import org.junit.jupiter.api.Test;

/**
 * Concurrency fuzz on host ranks of one JVM: several threads issue random mixes of whole-communicator collectives,
 * lone operations that no peer matches, splits, closes and aborts over the same communicators. The rule checked is
 * the one users depend on: every future jccl returned completes (with a result or a typed {@link JcclException}),
 * once, within the timeouts — no deadlock, no lost work. A round that does not finish dumps every thread's stack.
 * Seeded: a failure names its seed.
 */
class ConcurrencyFuzzTest {
    private static final int ROUNDS = 30;
    private static final int RANKS = 3;
    private static final int THREADS = 4;
    private static final int ACTIONS_PER_THREAD = 25;
    /** Short, so that lone operations fail by timeout (aborting their communicator) within the round. */
    private static final Duration WORK_TIMEOUT = Duration.ofMillis(800);
    private static final long ROUND_DEADLINE_SECONDS = 60;

    @Test
    void everyFutureCompletesWhateverTheInterleaving() throws Exception {
        long base = System.nanoTime();
        for (int round = 0; round < ROUNDS; round++) {
            runRound(base + round);
        }
    }

    private void runRound(long seed) throws Exception {
        int[] devices = new int[RANKS];
        Arrays.fill(devices, DriverConstants.HOST_DEVICE);
        CommOptions options = CommOptions.defaults().withTimeout(WORK_TIMEOUT).withCloseTimeout(Duration.ofSeconds(2));
        List<Communicator> comms = host().initAll(devices, options).get(30, TimeUnit.SECONDS);
        List<Buffer> buffers = new ArrayList<>();
        for (int r = 0; r < RANKS; r++) buffers.add(host().allocate(0, 4096));
        ConcurrentLinkedQueue<CompletableFuture<?>> issued = new ConcurrentLinkedQueue<>();
        List<Throwable> unexpected = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch done = new CountDownLatch(THREADS);
        for (int t = 0; t < THREADS; t++) {
            Random random = new Random(seed * 31 + t);
            Thread thread = new Thread(() -> {
                try {
                    for (int a = 0; a < ACTIONS_PER_THREAD; a++) act(random, comms, buffers, issued);
                } catch (Throwable e) {
                    unexpected.add(e);
                } finally {
                    done.countDown();
                }
            }, "fuzz-" + t);
            thread.setDaemon(true);
            thread.start();
        }
        if (!done.await(ROUND_DEADLINE_SECONDS, TimeUnit.SECONDS)) fail("seed " + seed + ": issuing threads stuck\n" + threads());
        AtomicInteger completions = new AtomicInteger();
        List<CompletableFuture<?>> observed = new ArrayList<>(); // complete once their callback ran
        for (CompletableFuture<?> f : issued) observed.add(f.whenComplete((v, e) -> {
            completions.incrementAndGet();
            if (e != null && !(unwrap(e) instanceof JcclException)) unexpected.add(unwrap(e));
        }));
        List<CompletableFuture<Void>> closing = new ArrayList<>();
        for (Communicator c : comms) closing.add(c.closeAsync().exceptionally(e -> null));
        try {
            CompletableFuture.allOf(observed.toArray(new CompletableFuture<?>[0])).exceptionally(e -> null)
                    .get(ROUND_DEADLINE_SECONDS, TimeUnit.SECONDS);
            CompletableFuture.allOf(closing.toArray(new CompletableFuture<?>[0])).get(ROUND_DEADLINE_SECONDS, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            List<String> pending = issued.stream().filter(f -> !f.isDone()).map(f -> labels.getOrDefault(f, f.toString())).toList();
            fail("seed " + seed + ": " + pending.size() + " of " + issued.size() + " futures never completed: " + pending
                    + "\n" + threads());
        }
        assertEquals(issued.size(), completions.get(), "seed " + seed + ": every future completed once");
        assertTrue(unexpected.isEmpty(), "seed " + seed + ": failures outside jccl's typed exceptions: " + unexpected);
        for (Buffer b : buffers) b.close();
    }

    /** One random action; whatever it returns is recorded; a typed refusal thrown at once is fine too. */
    /** What each issued future is, for the message of a round that does not finish. */
    private static final Map<CompletableFuture<?>, String> labels = new ConcurrentHashMap<>();

    private static <T extends CompletableFuture<?>> T labelled(String label, T f) {
        labels.put(f, label);
        return f;
    }

    private static void act(Random random, List<Communicator> comms, List<Buffer> buffers, ConcurrentLinkedQueue<CompletableFuture<?>> issued) {
        int rank = random.nextInt(RANKS);
        try {
            int pick = random.nextInt(40); // mostly live traffic, so that the rarer aborts and closes land among it
            switch (pick < 20 ? 0 : pick < 26 ? 4 : pick < 29 ? 5 : pick < 34 ? 6 : pick == 34 ? 7 : pick == 35 ? 8 : 9) {
                case 0 -> { // the same collective on every rank, from this thread
                    for (int r = 0; r < RANKS; r++) {
                        issued.add(comms.get(r).allReduce(buffers.get(r), buffers.get(r), 16, DataType.FLOAT32, ReduceOp.SUM));
                    }
                }
                case 4 -> { // a send/recv pair between two ranks, as a group on each side
                    int peer = (rank + 1) % RANKS;
                    issued.add(comms.get(rank).send(buffers.get(rank), 8, DataType.FLOAT32, peer));
                    issued.add(comms.get(peer).recv(buffers.get(peer), 8, DataType.FLOAT32, rank));
                }
                case 5 -> // a lone collective no peer matches: pending until its timeout aborts the communicator
                        issued.add(comms.get(rank).broadcast(buffers.get(rank), buffers.get(rank), 4, DataType.FLOAT32, 0));
                case 6 -> { // a split on every rank
                    for (int r = 0; r < RANKS; r++) {
                        CompletableFuture<Communicator> split = comms.get(r).split(r % 2, r);
                        issued.add(labelled("split on rank " + r + " (" + comms.get(r) + ")", split));
                        issued.add(labelled("close of the split of rank " + r, split.thenCompose(Communicator::closeAsync)));
                    }
                }
                case 7 -> issued.add(labelled("abort of rank " + rank + " (" + comms.get(rank) + ")", comms.get(rank).abort()));
                case 8 -> issued.add(labelled("closeAsync of rank " + rank + " (" + comms.get(rank) + ")", comms.get(rank).closeAsync()));
                default -> Thread.onSpinWait();
            }
        } catch (JcclException refused) {
            // refused at once (closed, aborted, bad state): nothing was issued
        }
    }

    private static Throwable unwrap(Throwable e) {
        return e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    }

    private static String threads() {
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
            sb.append(e.getKey()).append('\n');
            for (StackTraceElement s : e.getValue()) sb.append("    at ").append(s).append('\n');
        }
        return sb.toString();
    }
}
