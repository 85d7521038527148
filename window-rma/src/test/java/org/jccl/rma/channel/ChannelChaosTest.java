package org.jccl.rma.channel;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.awaitility.core.ConditionTimeoutException;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Jccl;
import org.jccl.core.ReduceOp;
import org.jccl.core.Work;
import org.jccl.core.error.JcclException;
import org.jccl.rma.OneSided;
import org.jccl.rma.channel.ChaosPlan.Channel;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Chaos for the block channel and the one-sided layer, as core's {@code ChaosTest} does for collectives: each round
 * draws from a seed ({@link ChaosPlan}) one to three host ranks of this JVM, several channels at once (between ranks
 * and into a rank itself) with slow and fast sides, producers whose upstream fails or whose result is cancelled,
 * consumers that cancel or hold their blocks, a moment at which each rank closes everything, sometimes a rank killed
 * (its communicators aborted) at a random moment, and raw puts, signals and waits on a communicator of their own with
 * a window closed and a wait cancelled at random steps.
 *
 * <p>After every round: every side and every close ended (no hang), each either normally — a producer or consumer
 * that ended normally moved every block, and one no fault touched must — or with an exception of jccl's hierarchy;
 * every block and every put delivered arrived intact; no window is left registered, no host stream or launch thread
 * is left once the communicators are closed; without a kill the communicators work (an all-reduce) and a new channel
 * on the same lanes carries intact blocks (no signal or slot was left over), with one an all-reduce ends typed.
 *
 * <p>CI runs {@value #CI_ROUNDS} rounds (a few seconds). The soak, outside {@code mvn verify}:
 * <pre>
 * mvn -B -pl window-rma -am test -Dtest=ChannelChaosTest -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Djccl.channelChaos.rounds=2000 [-Djccl.channelChaos.seed=N]
 * ... -Djccl.channelChaos.round=R        # replays one round's seed, printed with a failure
 * </pre>
 */
class ChannelChaosTest {
    static final int CI_ROUNDS = 12;
    static final long SEED = Long.getLong("jccl.channelChaos.seed", System.nanoTime());
    static final int ROUNDS = Integer.getInteger("jccl.channelChaos.rounds", CI_ROUNDS);
    static final Long ONE_ROUND = Long.getLong("jccl.channelChaos.round");
    static final Duration LIMIT = Duration.ofSeconds(30);
    static final String UPSTREAM_FAILURE = "chaos: upstream fails";
    final Backend backend = Jccl.backend(BackendKind.HOST);

    @Test
    void randomClosesCancelsAndKillsEndTypedAndLeaveNothingBehind() throws Exception {
        if (ONE_ROUND != null) {
            play(ChaosPlan.draw(ONE_ROUND), "round seed " + ONE_ROUND);
            return;
        }
        System.out.println("ChannelChaosTest seed " + SEED + " (-Djccl.channelChaos.seed=" + SEED + "), " + ROUNDS + " rounds");
        Random seeds = new Random(SEED);
        for (int round = 0; round < ROUNDS; round++) {
            long seed = seeds.nextLong();
            play(ChaosPlan.draw(seed), "ChannelChaosTest seed " + SEED + ", round " + round + " (replay it alone: "
                    + "-Djccl.channelChaos.round=" + seed + ")");
        }
    }

    private void play(ChaosPlan plan, String where) throws Exception {
        String what = where + "\n  " + plan;
        int threadsBefore = jcclThreads();
        try (ChaosRound round = new ChaosRound(plan, backend)) {
            List<Communicator> rmaComms = Flux.fromIterable(round.comms).flatMapSequential(c -> Mono.fromFuture(c.split(0, c.rank())))
                    .collectList().block(LIMIT);
            round.killedWith.addAll(rmaComms);
            try {
                round.start(LIMIT);
                OneSidedChaos rma = new OneSidedChaos(plan.oneSided(), rmaComms);
                rma.run(LIMIT);
                try {
                    await().atMost(LIMIT).until(round::finished);
                } catch (ConditionTimeoutException e) {
                    fail("hangs: " + what + "\n  " + round.state() + "\n" + stacks());
                }
                check(round, rma, rmaComms, what);
            } finally {
                rmaComms.forEach(Communicator::close);
            }
        }
        try {
            await().atMost(LIMIT).until(() -> jcclThreads() <= threadsBefore);
        } catch (ConditionTimeoutException e) {
            fail("threads left: " + jcclThreads() + " > " + threadsBefore + "\n" + what);
        }
    }

    private void check(ChaosRound round, OneSidedChaos rma, List<Communicator> rmaComms, String what) throws Exception {
        for (CompletableFuture<Void> close : round.closes) endedNormallyOrTyped(close, "a close", what);
        for (Channel c : round.plan.channels()) {
            Long sent = endedNormallyOrTyped(round.sent.get(c.index()), "producer #" + c.index(), what);
            Long received = endedNormallyOrTyped(round.received.get(c.index()), "consumer #" + c.index(), what);
            if (sent != null && sent != ChaosRound.CANCELLED_BY_TEST) assertEquals(c.blocks(), sent, "sent #" + c.index() + ": " + what);
            if (received != null && received != ChaosRound.CANCELLED_BY_TEST) {
                assertEquals(c.blocks(), received, "received #" + c.index() + ": " + what);
            }
            if (round.undisturbed(c)) {
                assertTrue(sent != null && received != null, "channel #" + c.index() + " was not disturbed, yet failed: "
                        + what + "\n  " + round.state());
            }
        }
        assertEquals(0, round.wrongBlocks.get(), "blocks delivered wrong: " + what);
        assertEquals(0, rma.wrong.get(), "puts delivered wrong: " + what);
        assertEquals(List.of(), rma.untyped(), "untyped one-sided failures: " + what);
        for (Communicator c : round.comms) {
            if (c.isOpen()) assertEquals(List.of(), OneSided.of(c).windows(), "windows left registered: " + what);
        }
        if (!round.killed.get()) {
            BlockChannelHostTest.communicatorsStillWork(backend, round.comms);
            BlockChannelHostTest.communicatorsStillWork(backend, rmaComms);
            for (Communicator c : round.comms) assertEquals(0, c.pendingCount(), what);
            freshChannelIsIntact(round, what);
        } else {
            allReduceEndsTyped(round.comms, round.plan.victim(), what);
        }
    }

    /** A new channel on the first channel's ranks (and so its lane) carries every block intact. */
    private void freshChannelIsIntact(ChaosRound round, String what) {
        Channel first = round.plan.channels().get(0);
        List<BlockChannel> ch = BlockChannelLanesTest.openOnEveryRank(round.comms, first.producer(), first.consumer(),
                first.slots(), first.blockBytes()).block(LIMIT);
        Channel fresh = new Channel(99, first.producer(), first.consumer(), first.slots(), first.blockBytes(), 20,
                ChaosPlan.Pace.FAST, ChaosPlan.Pace.FAST, ChaosPlan.ProducerFault.NONE, 0, ChaosPlan.ConsumerFault.NONE, 0);
        List<Buffer> blocks = new ArrayList<>();
        try {
            for (int i = 0; i < fresh.blocks(); i++) {
                byte[] b = ChaosRound.content(fresh, i);
                Buffer buf = backend.allocate(-1, b.length);
                buf.write(0, ByteBuffer.wrap(b));
                blocks.add(buf);
            }
            List<Boolean> intact = new CopyOnWriteArrayList<>();
            Mono.zip(ch.get(first.producer()).send(Flux.fromIterable(blocks)), ch.get(first.consumer()).receive().doOnNext(b -> {
                ByteBuffer got = ByteBuffer.allocate((int) b.data().byteSize());
                b.data().read(0, got);
                intact.add(Arrays.equals(got.array(), ChaosRound.content(fresh, (int) b.sequence())));
                b.release();
            }).count()).block(LIMIT);
            assertEquals(Collections.nCopies(fresh.blocks(), true), intact, "a fresh channel after the round: " + what);
        } finally {
            BlockChannelLanesTest.closeAll(ch).block(LIMIT);
            blocks.forEach(Buffer::close);
        }
    }

    /** After a kill, an all-reduce of the survivors either works or fails typed; it never hangs. */
    private void allReduceEndsTyped(List<Communicator> comms, int victim, String what) throws Exception {
        List<Work> works = new ArrayList<>();
        List<Buffer> bufs = new ArrayList<>();
        try {
            for (Communicator c : comms) {
                if (c.rank() == victim) continue;
                Buffer b = backend.allocate(-1, 4);
                bufs.add(b);
                try {
                    works.add(c.allReduce(b, b, 1, DataType.INT32, ReduceOp.SUM));
                } catch (JcclException refused) {
                    // refused at once, typed: the communicator is aborted
                }
            }
            for (Work w : works) {
                try {
                    w.get(LIMIT.toSeconds(), TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    assertTrue(e.getCause() instanceof JcclException, "untyped: " + e.getCause() + "\n" + what);
                }
            }
        } finally {
            bufs.forEach(Buffer::close);
        }
    }

    /** The value, null if it failed typed; fails the test if it failed otherwise. */
    private static <T> T endedNormallyOrTyped(CompletableFuture<T> f, String side, String what) {
        assertTrue(f.isDone(), side + " still runs: " + what);
        try {
            return f.join();
        } catch (CompletionException e) {
            Throwable cause = e.getCause();
            // a send fails with its upstream's own error, as documented
            boolean upstreams = cause instanceof IllegalStateException && UPSTREAM_FAILURE.equals(cause.getMessage());
            assertTrue(cause instanceof JcclException || upstreams, side + " ended untyped: " + cause + "\n" + what);
            return null;
        }
    }

    /** The stacks of jccl's threads, for a round that hangs. */
    static String stacks() {
        StringBuilder b = new StringBuilder();
        Thread.getAllStackTraces().forEach((t, stack) -> {
            if (!t.getName().startsWith("jccl-")) return;
            b.append("  thread ").append(t.getName()).append(' ').append(t.getState()).append('\n');
            for (int i = 0; i < Math.min(stack.length, 12); i++) b.append("      at ").append(stack[i]).append('\n');
        });
        return b.toString();
    }

    /** The host backend's stream and launch threads alive, and abort threads. */
    static int jcclThreads() {
        int n = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            String name = t.getName();
            if (t.isAlive() && (name.startsWith("jccl-host-stream-") || name.startsWith("jccl-launch-")
                    || name.startsWith("jccl-abort-"))) n++;
        }
        return n;
    }
}
