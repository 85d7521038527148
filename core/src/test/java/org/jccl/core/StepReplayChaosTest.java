package org.jccl.core;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jccl.core.error.JcclException;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * Chaos for replays without a future ({@link Step#replay(Completion)}), whose engine records the step reuses. Each
 * round three ranks, threads of this JVM on the host backend, each issue twelve replays of a step (an all-reduce and
 * a broadcast) back to back with one {@link Completion}, so that several are in flight and records are reused, while
 * one action at a random replay of a random rank closes its step, closes its buffer, aborts or closes the
 * communicator, or does nothing. Seeded ({@code -Djccl.chaos.seed=...}; {@code -Djccl.replayChaos.rounds=N} soaks).
 *
 * <p>Held true: every replay is refused at the call (typed) or told exactly once, succeeded or failed typed, within
 * the timeout and a margin; with no action every replay succeeds with the right values; every step's close
 * completes, and every communicator's books are empty.
 */
class StepReplayChaosTest {
    private static final int RANKS = 3;
    private static final int REPLAYS = 12;
    private static final Duration TIMEOUT = Duration.ofSeconds(4);
    private static final Duration MARGIN = Duration.ofSeconds(10);
    private static final long SEED = Long.getLong("jccl.chaos.seed", System.nanoTime());
    private static final int ROUNDS = Integer.getInteger("jccl.replayChaos.rounds", 8);

    enum Action {
        NONE, CLOSE_STEP, CLOSE_BUFFER, ABORT, CLOSE_COMMUNICATOR
    }

    final Backend host = Jccl.backend(BackendKind.HOST);

    @Test
    void everyReplayIsToldOnceTypedWhateverHappensMidway() throws Exception {
        System.out.println("StepReplayChaosTest seed " + SEED + " (-Djccl.chaos.seed=" + SEED + "), " + ROUNDS + " rounds");
        for (int round = 0; round < ROUNDS; round++) {
            Random random = new Random(SEED + round);
            Action action = round < Action.values().length ? Action.values()[round] : Action.values()[random.nextInt(Action.values().length)];
            new Round(round, action, random.nextInt(RANKS), random.nextInt(REPLAYS)).run();
        }
    }

    /** What one rank's completion was told. */
    private static final class Told implements Completion {
        final AtomicInteger accepted = new AtomicInteger();
        final AtomicInteger succeeded = new AtomicInteger();
        final Queue<Throwable> failed = new ConcurrentLinkedQueue<>();

        @Override
        public void completed(@Nullable Throwable failure) {
            if (failure == null) succeeded.incrementAndGet();
            else failed.add(failure);
        }

        int told() {
            return succeeded.get() + failed.size();
        }
    }

    private final class Round {
        final String name;
        final Action action;
        final int victim;
        final int moment;
        final List<Communicator> comms = new ArrayList<>();
        final List<Buffer> data = new ArrayList<>();
        final List<Step> steps = new ArrayList<>();
        final List<Told> told = new ArrayList<>();
        final Queue<String> problems = new ConcurrentLinkedQueue<>();

        Round(int round, Action action, int victim, int moment) {
            this.name = "round " + round + " (" + action + " by rank " + victim + " before replay " + moment + ")";
            this.action = action;
            this.victim = victim;
            this.moment = moment;
        }

        void run() throws Exception {
            System.out.println(name);
            comms.addAll(host.initAll(new int[RANKS], CommOptions.defaults().withTimeout(TIMEOUT)).get(30, TimeUnit.SECONDS));
            for (int r = 0; r < RANKS; r++) {
                Buffer b = host.allocate(-1, 8);
                b.write(0, new float[] {r + 1, 1});
                data.add(b);
                told.add(new Told());
                steps.add(Step.builder(comms.get(r))
                        .add(Operation.allReduce(b, b, 2, DataType.FLOAT32, ReduceOp.SUM))
                        .add(Operation.broadcast(b, b, 2, DataType.FLOAT32, 0))
                        .build().get(30, TimeUnit.SECONDS));
            }
            List<Thread> ranks = new ArrayList<>();
            for (int r = 0; r < RANKS; r++) {
                int rank = r;
                Thread t = new Thread(() -> replay(rank), "replay-chaos-rank-" + r);
                ranks.add(t);
                t.start();
            }
            for (Thread t : ranks) t.join(MARGIN.toMillis());
            for (Thread t : ranks) assertFalse(t.isAlive(), name + ": a rank's replay call blocked");
            everyReplayIsToldOnce();
            closeAndCheckBooks();
            assertEquals(List.of(), List.copyOf(problems), name);
        }

        private void replay(int rank) {
            Told t = told.get(rank);
            for (int i = 0; i < REPLAYS; i++) {
                if (rank == victim && i == moment) act();
                try {
                    t.accepted.incrementAndGet(); // before the call: a refusal may tell the completion within it
                    steps.get(rank).replay(t);
                } catch (JcclException refused) {
                    t.accepted.decrementAndGet(); // typed, at the call: a closed step or buffer
                } catch (RuntimeException e) {
                    t.accepted.decrementAndGet();
                    problems.add("rank " + rank + " replay " + i + " refused untyped: " + e);
                }
            }
        }

        private void act() {
            switch (action) {
                case NONE -> { }
                case CLOSE_STEP -> steps.get(victim).closeAsync();
                case CLOSE_BUFFER -> data.get(victim).close();
                case ABORT -> comms.get(victim).abort();
                case CLOSE_COMMUNICATOR -> comms.get(victim).closeAsync();
            }
        }

        private void everyReplayIsToldOnce() {
            Duration bound = TIMEOUT.plus(TIMEOUT).plus(MARGIN);
            for (int r = 0; r < RANKS; r++) {
                Told t = told.get(r);
                try {
                    await().atMost(bound).until(() -> t.told() >= t.accepted.get());
                } catch (org.awaitility.core.ConditionTimeoutException e) {
                    problems.add(name + ": rank " + r + " told " + t.told() + " of " + t.accepted.get() + " replays after " + bound);
                }
                for (Throwable f : t.failed) if (!(f instanceof JcclException)) problems.add("rank " + r + " told untyped: " + f);
            }
            if (action == Action.NONE) {
                float first = 6 * (float) Math.pow(3, REPLAYS - 1);
                for (int r = 0; r < RANKS; r++) {
                    assertEquals(REPLAYS, told.get(r).succeeded.get(), name + ": rank " + r + " " + told.get(r).failed);
                    assertArrayEquals(new float[] {first, (float) Math.pow(3, REPLAYS)}, data.get(r).readFloats(0, 2), name);
                }
            }
        }

        private void closeAndCheckBooks() throws Exception {
            List<CompletableFuture<Void>> closing = new ArrayList<>();
            for (Step s : steps) closing.add(s.closeAsync());
            for (CompletableFuture<Void> c : closing) c.get(MARGIN.toMillis(), TimeUnit.MILLISECONDS);
            for (int r = 0; r < RANKS; r++) {
                assertEquals(told.get(r).accepted.get(), told.get(r).told(), name + ": rank " + r + " told twice or not at all");
                assertEquals(0, comms.get(r).pendingCount(), name + ": rank " + r + "'s books");
            }
            for (Buffer b : data) b.close();
            for (Communicator c : comms) c.closeAsync().handle((v, e) -> null).get(MARGIN.toMillis(), TimeUnit.MILLISECONDS);
        }
    }
}
