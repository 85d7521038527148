package org.jccl.core;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.jccl.core.error.JcclException;
import org.jccl.core.module.Holds;
import org.jccl.core.module.ModuleContext;
import org.jccl.core.module.StreamOperation;
import org.jccl.core.spi.MemoryRef;
import org.junit.jupiter.api.Test;

/**
 * Chaos for steps on the host backend, ranks as threads of this JVM. Each round three ranks replay a step over their
 * clique's communicator and a communicator of their own (an all-reduce, a module's operation holding a resource — a
 * window's stand-in — and a broadcast) eight times, while one action at a random replay of a random rank closes its
 * step, closes a buffer of it, closes the held resource, aborts or closes the clique's communicator, or does nothing.
 * Rounds and actions come from a seed printed first ({@code -Djccl.chaos.seed=...} reruns one; {@code
 * -Djccl.stepChaos.rounds=N} soaks).
 *
 * <p>Held true: every replay either is refused at the call or ends, succeeded or failed typed, within the timeout
 * and a margin — nothing is left pending; with no action, or only the resource closed, every replay succeeds with the
 * right values and the resource is released only once the steps are closed; every step's close completes, every
 * hold is released, and no launch thread of the round is left.
 */
class StepChaosTest {
    private static final int RANKS = 3;
    private static final int REPLAYS = 8;
    /** Long enough that a healthy replay on a loaded two-core machine never reaches it. */
    private static final Duration TIMEOUT = Duration.ofSeconds(4);
    /** Added to every bound: threads time-sliced on two cores can be late by seconds, never by this much. */
    private static final Duration MARGIN = Duration.ofSeconds(10);
    private static final long SEED = Long.getLong("jccl.chaos.seed", System.nanoTime());
    private static final int ROUNDS = Integer.getInteger("jccl.stepChaos.rounds", 10);

    enum Action {
        NONE, CLOSE_STEP, CLOSE_BUFFER, CLOSE_RESOURCE, ABORT, CLOSE_COMMUNICATOR
    }

    final Backend host = Jccl.backend(BackendKind.HOST);

    @Test
    void everyReplayEndsTypedAndEveryHoldIsReleasedWhateverHappensMidway() throws Exception {
        System.out.println("StepChaosTest seed " + SEED + " (-Djccl.chaos.seed=" + SEED + "), " + ROUNDS + " rounds");
        for (int round = 0; round < ROUNDS; round++) {
            Random random = new Random(SEED + round);
            Action action = round < Action.values().length ? Action.values()[round] : Action.values()[random.nextInt(Action.values().length)];
            new Round(round, action, random.nextInt(RANKS), random.nextInt(REPLAYS)).run();
        }
    }

    /** One round: {@code action} by rank {@code victim} just before its replay number {@code moment}. */
    private final class Round {
        final String name;
        final Action action;
        final int victim;
        final int moment;
        final List<Communicator> comms = new ArrayList<>();
        final List<Communicator> own = new ArrayList<>();
        final List<Buffer> data = new ArrayList<>();
        final List<Buffer> scratch = new ArrayList<>();
        final List<Holds> resources = new ArrayList<>();
        final List<Step> steps = new ArrayList<>();
        final Queue<Work> works = new ConcurrentLinkedQueue<>();
        final Queue<String> problems = new ConcurrentLinkedQueue<>();

        Round(int round, Action action, int victim, int moment) {
            this.name = "round " + round + " (" + action + " by rank " + victim + " before replay " + moment + ")";
            this.action = action;
            this.victim = victim;
            this.moment = moment;
        }

        void run() throws Exception {
            System.out.println(name);
            CommOptions options = CommOptions.defaults().withTimeout(TIMEOUT);
            comms.addAll(host.initAll(new int[RANKS], options).get(30, TimeUnit.SECONDS));
            for (int r = 0; r < RANKS; r++) {
                own.add(host.initAll(new int[1], options).get(30, TimeUnit.SECONDS).get(0));
                Buffer b = host.allocate(-1, 8);
                b.write(0, new float[] {r + 1, 1});
                data.add(b);
                scratch.add(host.allocate(-1, 64));
                resources.add(new Holds("resource of rank " + r));
                steps.add(Step.builder(comms.get(r))
                        .add(Operation.allReduce(b, b, 2, DataType.FLOAT32, ReduceOp.SUM))
                        .add(own.get(r), holding(own.get(r), scratch.get(r), resources.get(r)))
                        .add(Operation.broadcast(b, b, 2, DataType.FLOAT32, 0))
                        .build().get(30, TimeUnit.SECONDS));
            }
            List<Thread> ranks = new ArrayList<>();
            for (int r = 0; r < RANKS; r++) {
                int rank = r;
                Thread t = new Thread(() -> replay(rank), "step-chaos-rank-" + r);
                ranks.add(t);
                t.start();
            }
            for (Thread t : ranks) t.join(MARGIN.toMillis());
            for (Thread t : ranks) assertFalse(t.isAlive(), name + ": a rank's replay call blocked");
            everyWorkEnds();
            assertEquals(List.of(), List.copyOf(problems), name);
            closeAndCheckReleased();
            assertEquals(List.of(), List.copyOf(problems), name);
        }

        private StreamOperation holding(Communicator c, Buffer b, Holds resource) {
            ModuleContext context = Modules.context(c);
            MemoryRef ref = context.memory(b);
            return new StreamOperation("touch()", List.of(b), stream -> context.driver().memsetAsync(ref.block(), ref.offset(), 1, 8, stream),
                    resource.retention());
        }

        private void replay(int rank) {
            for (int i = 0; i < REPLAYS; i++) {
                if (rank == victim && i == moment) act();
                try {
                    works.add(steps.get(rank).replay());
                } catch (JcclException refused) {
                    // typed, at the call: a closed step, buffer or communicator
                } catch (RuntimeException e) {
                    problems.add("rank " + rank + " replay " + i + " refused untyped: " + e);
                }
            }
        }

        private void act() {
            switch (action) {
                case NONE -> { }
                case CLOSE_STEP -> steps.get(victim).closeAsync();
                case CLOSE_BUFFER -> data.get(victim).close();
                case CLOSE_RESOURCE -> resources.get(victim).closing();
                case ABORT -> comms.get(victim).abort();
                case CLOSE_COMMUNICATOR -> comms.get(victim).closeAsync();
            }
        }

        private void everyWorkEnds() {
            Duration bound = TIMEOUT.plus(TIMEOUT).plus(MARGIN);
            int failed = 0;
            for (Work w : works) {
                try {
                    w.handle((v, e) -> e).get(bound.toMillis(), TimeUnit.MILLISECONDS);
                } catch (Exception e) {
                    problems.add("a replay was still pending after " + bound + ": " + w);
                    continue;
                }
                Throwable error = w.isCompletedExceptionally() ? w.handle((v, e) -> e).join() : null;
                if (error == null) continue;
                failed++;
                Throwable cause = error instanceof java.util.concurrent.CompletionException && error.getCause() != null ? error.getCause() : error;
                if (!(cause instanceof JcclException)) problems.add("a replay failed untyped: " + cause);
            }
            if (action == Action.NONE || action == Action.CLOSE_RESOURCE) {
                assertEquals(0, failed, name + ": nothing failed, yet a replay did");
                assertEquals(RANKS * REPLAYS, works.size(), name);
                float first = 6 * (float) Math.pow(3, REPLAYS - 1);
                for (Buffer b : data) assertArrayEquals(new float[] {first, (float) Math.pow(3, REPLAYS)}, b.readFloats(0, 2), name);
            }
        }

        private void closeAndCheckReleased() throws Exception {
            if (action == Action.CLOSE_RESOURCE) {
                assertFalse(resources.get(victim).closing().isDone(), name + ": released while its step was open");
            }
            List<CompletableFuture<Void>> closing = new ArrayList<>();
            for (Step s : steps) closing.add(s.closeAsync());
            for (CompletableFuture<Void> c : closing) c.get(MARGIN.toMillis(), TimeUnit.MILLISECONDS);
            for (Holds h : resources) {
                assertEquals(0, h.count(), name + ": a hold outlived its step");
                assertTrue(h.closing().isDone(), name);
            }
            for (Buffer b : data) b.close();
            for (Buffer b : scratch) b.close();
            List<String> ids = new ArrayList<>();
            for (Communicator c : comms) {
                ids.add(c.id());
                c.closeAsync().handle((v, e) -> null).get(MARGIN.toMillis(), TimeUnit.MILLISECONDS);
            }
            for (Communicator c : own) {
                ids.add(c.id());
                c.close();
            }
            await().atMost(MARGIN).untilAsserted(() -> assertEquals(List.of(), launchThreadsOf(ids), name));
        }
    }

    private static List<String> launchThreadsOf(List<String> ids) {
        List<String> left = new ArrayList<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            for (String id : ids) if (t.isAlive() && t.getName().startsWith("jccl-launch-" + id + "-")) left.add(t.getName());
        }
        return left;
    }
}
