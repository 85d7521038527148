package org.jccl.reactive;

import static org.awaitility.Awaitility.await;
import static org.jccl.reactive.Ranks.WAIT;
import static org.jccl.reactive.Ranks.f32;
import static org.jccl.reactive.Ranks.read;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.jccl.core.Backend;
import org.jccl.core.Buffer;
import org.jccl.core.CommOptions;
import org.jccl.core.Operation;
import org.jccl.core.ReduceOp;
import org.jccl.core.error.InvalidArgumentException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.test.subscriber.TestSubscriber;

/** Pipelines: launch order, bounded in-flight work, backpressure, steady memory and threads. On each backend. */
abstract class PipelineSuite {
    private final List<Ranks> opened = new ArrayList<>();

    /** The backend under test. */
    protected abstract Backend backend();

    /** How many ranks each test uses (at least 2). */
    protected abstract int ranks();

    Ranks open() {
        Ranks r = Ranks.open(backend(), ranks(), CommOptions.defaults());
        opened.add(r);
        return r;
    }

    @AfterEach
    void closeEverything() {
        for (Ranks r : opened) r.close();
    }

    @Test
    void itemsLaunchInOrderAndEmitInOrderWithCorrectResults() {
        Ranks r = open();
        int items = 200;
        int maxInFlight = 4;
        int count = 3;
        // One slot per in-flight operation: item i may reuse slot i % maxInFlight because item i - maxInFlight is done.
        Buffer[][] slots = new Buffer[r.size()][maxInFlight];
        for (int rank = 0; rank < r.size(); rank++) for (int s = 0; s < maxInFlight; s++) slots[rank][s] = r.zeros(rank, count);
        List<List<Integer>> emitted = new ArrayList<>();
        List<List<String>> mismatches = new ArrayList<>();
        for (int rank = 0; rank < r.size(); rank++) {
            emitted.add(new ArrayList<>());
            mismatches.add(new ArrayList<>());
        }
        StepVerifier.create(r.all(rank -> r.comm(rank).pipeline(Flux.range(0, items), i -> {
                    Buffer slot = slots[rank][i % maxInFlight];
                    Ranks.write(slot, Ranks.filled(count, i + rank));
                    return Operation.allReduce(slot, slot, count, f32(), ReduceOp.SUM);
                }, maxInFlight).doOnNext(i -> {
                    // Read while the item is emitted: the slot is not reused before this returns.
                    float expected = r.size() * (float) i + r.size() * (r.size() - 1) / 2f;
                    float[] got = read(slots[rank][i % maxInFlight], count);
                    if (got[0] != expected) mismatches.get(rank).add("item " + i + ": " + got[0] + " != " + expected);
                    emitted.get(rank).add(i);
                })))
                .expectComplete().verify(WAIT);
        List<Integer> inOrder = new ArrayList<>();
        for (int i = 0; i < items; i++) inOrder.add(i);
        for (int rank = 0; rank < r.size(); rank++) {
            assertEquals(List.of(), mismatches.get(rank));
            assertEquals(inOrder, emitted.get(rank));
        }
    }

    @Test
    void launchOrderIsItemOrderEvenWithAnAsynchronousSource() {
        Ranks r = open();
        int items = 100;
        int maxInFlight = 8;
        Buffer[][] slots = new Buffer[r.size()][maxInFlight];
        for (int rank = 0; rank < r.size(); rank++) for (int s = 0; s < maxInFlight; s++) slots[rank][s] = r.zeros(rank, 5);
        List<String> mismatches = new java.util.concurrent.CopyOnWriteArrayList<>();
        // Rank 0 takes its items from another thread, in bursts; the others from a plain range. The counts differ
        // from item to item, so launching in any order but item order would pair different operations across ranks.
        StepVerifier.create(r.all(rank -> {
                    Flux<Integer> source = rank == 0
                            ? Flux.range(0, items).publishOn(reactor.core.scheduler.Schedulers.single(), 3)
                            : Flux.range(0, items);
                    return r.comm(rank).pipeline(source, i -> {
                        Buffer slot = slots[rank][i % maxInFlight];
                        Ranks.write(slot, Ranks.filled(5, i));
                        return Operation.allReduce(slot, slot, 1 + i % 5, f32(), ReduceOp.SUM);
                    }, maxInFlight).doOnNext(i -> {
                        float[] got = read(slots[rank][i % maxInFlight], 1 + i % 5);
                        for (float g : got) if (g != (float) i * r.size()) mismatches.add("rank " + rank + " item " + i + ": " + g);
                    });
                }))
                .expectComplete().verify(WAIT);
        assertEquals(List.of(), mismatches);
    }

    @Test
    void backpressureLaunchesOnlyWhatTheConsumerMakesRoomFor() {
        Ranks r = open();
        int maxInFlight = 3;
        AtomicInteger[] launched = new AtomicInteger[r.size()];
        List<TestSubscriber<Integer>> subscribers = new ArrayList<>();
        for (int rank = 0; rank < r.size(); rank++) {
            AtomicInteger mine = launched[rank] = new AtomicInteger();
            Buffer b = r.zeros(rank, 2);
            TestSubscriber<Integer> s = TestSubscriber.<Integer>builder().initialRequest(0).build();
            subscribers.add(s);
            r.comm(rank).pipeline(Flux.range(0, 1_000), i -> {
                mine.incrementAndGet();
                return Operation.allReduce(b, b, 2, f32(), ReduceOp.SUM);
            }, maxInFlight).subscribe(s);
        }
        // With no demand, maxInFlight operations launch, complete, and nothing more is taken from the source.
        for (int rank = 0; rank < r.size(); rank++) {
            int k = rank;
            await().atMost(WAIT).until(() -> launched[k].get() == maxInFlight && r.core(k).pendingCount() == 0);
        }
        for (AtomicInteger l : launched) assertEquals(maxInFlight, l.get());
        // Each item taken makes room for one more launch.
        for (TestSubscriber<Integer> s : subscribers) s.request(2);
        for (int rank = 0; rank < r.size(); rank++) {
            int k = rank;
            await().atMost(WAIT).until(() -> subscribers.get(k).getReceivedOnNext().size() == 2
                    && launched[k].get() == maxInFlight + 2 && r.core(k).pendingCount() == 0);
        }
        for (AtomicInteger l : launched) assertEquals(maxInFlight + 2, l.get());
        for (TestSubscriber<Integer> s : subscribers) s.cancel();
    }

    @Test
    void aFailedOperationEndsThePipelineWithItsError() {
        Ranks r = open();
        Buffer b = r.zeros(0, 2);
        StepVerifier.create(r.comm(0).pipeline(Flux.range(0, 10), i -> Operation.allReduce(b, b, 1_000, f32(), ReduceOp.SUM), 2))
                .expectError(InvalidArgumentException.class).verify(WAIT);
        StepVerifier.create(Mono.defer(() -> r.comm(0).pipeline(Flux.just(1), i -> Operation.allReduce(b, b, 1, f32(), ReduceOp.SUM), 0).then()))
                .expectError(InvalidArgumentException.class).verify(WAIT);
        assertEquals(0, r.core(0).pendingCount());
    }

    /**
     * 100,000 small operations per rank with at most 16 in flight: in-flight work stays within the bound at every
     * launch, the heap retained after GC does not grow with the number of operations, and no thread is left behind.
     */
    @Test
    void aHundredThousandOperationsRunInBoundedMemoryAndThreads() {
        Ranks r = open();
        int total = 100_000;
        int maxInFlight = 16;
        int threadsBefore = Thread.activeCount();
        AtomicLongArray launched = new AtomicLongArray(r.size());
        AtomicLongArray completed = new AtomicLongArray(r.size());
        AtomicLong worstInFlight = new AtomicLong();
        AtomicLong worstPending = new AtomicLong();
        List<Mono<Void>> runs = new ArrayList<>();
        for (int rank = 0; rank < r.size(); rank++) {
            int k = rank;
            Buffer b = r.zeros(rank, 4);
            runs.add(r.comm(rank).pipeline(Flux.range(0, total), i -> {
                long inFlight = launched.incrementAndGet(k) - completed.get(k);
                worstInFlight.accumulateAndGet(inFlight, Math::max);
                worstPending.accumulateAndGet(r.core(k).pendingCount(), Math::max);
                return Operation.allReduce(b, b, 4, f32(), ReduceOp.MAX);
            }, maxInFlight).doOnNext(i -> completed.incrementAndGet(k)).then());
        }
        var run = Mono.when(runs).toFuture();
        await().atMost(Duration.ofMinutes(3)).pollInSameThread().until(() -> completed.get(0) >= 20_000 || run.isDone());
        long early = heapAfterGc();
        await().atMost(Duration.ofMinutes(3)).pollInSameThread().until(() -> completed.get(0) >= 90_000 || run.isDone());
        long late = heapAfterGc();
        run.join();
        for (int rank = 0; rank < r.size(); rank++) assertEquals(total, completed.get(rank));
        assertTrue(worstInFlight.get() <= maxInFlight, "in flight: " + worstInFlight.get());
        // The work whose completion triggers a launch leaves the communicator's pending set just after its callbacks.
        assertTrue(worstPending.get() <= maxInFlight + 1, "pending: " + worstPending.get());
        // 70,000 operations per rank between the samples: retaining even 60 bytes each would exceed this.
        assertTrue(late - early < 8L << 20, "heap grew from " + early + " to " + late + " bytes");
        await().atMost(WAIT).pollInSameThread().until(() -> Thread.activeCount() <= threadsBefore);
    }

    private static long heapAfterGc() {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        System.gc();
        System.gc();
        return memory.getHeapMemoryUsage().getUsed();
    }

    @Test
    void cancellingAPipelineDetachesLaunchedWork() {
        Ranks r = open();
        Buffer b0 = r.zeros(0, 1);
        AtomicInteger launched = new AtomicInteger();
        var subscription = r.comm(0).pipeline(Flux.range(0, 100), i -> {
            launched.incrementAndGet();
            return Operation.allReduce(b0, b0, 1, f32(), ReduceOp.SUM);
        }, 4).subscribe();
        await().atMost(WAIT).until(() -> r.core(0).pendingCount() == 4);
        subscription.dispose();
        assertEquals(4, launched.get());
        // The other ranks issue the matching four: rank 0's detached operations complete.
        StepVerifier.create(r.all(rank -> rank == 0 ? Mono.empty() : Flux.range(0, 4)
                        .concatMap(i -> r.comm(rank).allReduce(r.zeros(rank, 1), r.zeros(rank, 1), 1, f32(), ReduceOp.SUM)).then()))
                .expectComplete().verify(WAIT);
        await().atMost(WAIT).until(() -> r.core(0).pendingCount() == 0);
        assertEquals(4, launched.get());
        assertArrayEquals(new float[] {0f}, read(b0, 1));
    }
}
