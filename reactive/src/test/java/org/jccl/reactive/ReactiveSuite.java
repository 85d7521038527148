package org.jccl.reactive;

import static org.awaitility.Awaitility.await;
import static org.jccl.reactive.Ranks.WAIT;
import static org.jccl.reactive.Ranks.f32;
import static org.jccl.reactive.Ranks.filled;
import static org.jccl.reactive.Ranks.read;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.jccl.core.Backend;
import org.jccl.core.Buffer;
import org.jccl.core.CommOptions;
import org.jccl.core.Operation;
import org.jccl.core.PreMulSum;
import org.jccl.core.ReduceOp;
import org.jccl.core.TimeoutPolicy;
import org.jccl.core.Work;
import org.jccl.core.error.CommunicatorAbortedException;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.WorkTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/**
 * The reactive API's behaviour, written once and run on each backend: subclasses name the backend and the number of
 * ranks (at least 2). Every test makes its own communicators and closes them.
 */
abstract class ReactiveSuite {
    private static final int N = 8;

    private final List<Ranks> opened = new ArrayList<>();

    /** The backend under test. */
    protected abstract Backend backend();

    /** How many ranks each test uses (at least 2). */
    protected abstract int ranks();

    Ranks open(CommOptions options) {
        Ranks r = Ranks.open(backend(), ranks(), options);
        opened.add(r);
        return r;
    }

    Ranks open() {
        return open(CommOptions.defaults());
    }

    @AfterEach
    void closeEverything() {
        for (Ranks r : opened) r.close();
    }

    private static CommOptions shortTimeout(TimeoutPolicy policy) {
        return CommOptions.defaults().withTimeout(Duration.ofMillis(300)).withTimeoutPolicy(policy);
    }

    // ---- cold Monos: one operation per subscription

    @Test
    void operationsAreColdAndEachSubscriptionIssuesOneOperation() {
        Ranks r = open();
        List<Buffer> bufs = new ArrayList<>();
        List<Mono<Void>> monos = new ArrayList<>();
        for (int i = 0; i < r.size(); i++) {
            Buffer b = r.floats(i, filled(N, 1f));
            bufs.add(b);
            monos.add(r.comm(i).allReduce(b, b, N, f32(), ReduceOp.SUM));
        }
        for (int i = 0; i < r.size(); i++) assertEquals(0, r.core(i).pendingCount(), "nothing issued before subscription");

        StepVerifier.create(r.all(monos::get)).expectComplete().verify(WAIT);
        StepVerifier.create(r.all(monos::get)).expectComplete().verify(WAIT);

        // Two subscriptions, two in-place sums: 1 -> n -> n*n.
        float n = r.size();
        for (Buffer b : bufs) assertArrayEquals(filled(N, n * n), read(b, N));
    }

    @Test
    void everyCollectiveCompletesWithTheExpectedResult() {
        Ranks r = open();
        int n = r.size();
        Buffer[] in = new Buffer[n];
        Buffer[] sum = new Buffer[n];
        Buffer[] bcast = new Buffer[n];
        Buffer[] gathered = new Buffer[n];
        Buffer[] scattered = new Buffer[n];
        Buffer[] reduced = new Buffer[n];
        for (int i = 0; i < n; i++) {
            in[i] = r.floats(i, filled(n, i + 1));
            sum[i] = r.zeros(i, n);
            bcast[i] = r.zeros(i, n);
            gathered[i] = r.zeros(i, n);
            scattered[i] = r.zeros(i, 1);
            reduced[i] = r.zeros(i, n);
        }
        StepVerifier.create(r.all(i -> r.comm(i).allReduce(in[i], sum[i], n, f32(), ReduceOp.SUM)
                        .then(r.comm(i).broadcast(in[i], bcast[i], n, f32(), 0))
                        .then(r.comm(i).allGather(in[i].slice(0, 4), gathered[i], 1, f32()))
                        .then(r.comm(i).reduceScatter(in[i], scattered[i], 1, f32(), ReduceOp.MAX))
                        .then(r.comm(i).reduce(in[i], reduced[i], n, f32(), ReduceOp.SUM, 0))))
                .expectComplete().verify(WAIT);
        float total = n * (n + 1) / 2f;
        float[] ranksPlusOne = new float[n];
        for (int i = 0; i < n; i++) ranksPlusOne[i] = i + 1;
        for (int i = 0; i < n; i++) {
            assertArrayEquals(filled(n, total), read(sum[i], n));
            assertArrayEquals(filled(n, 1f), read(bcast[i], n));
            assertArrayEquals(ranksPlusOne, read(gathered[i], n));
            assertArrayEquals(new float[] {n}, read(scattered[i], 1));
        }
        assertArrayEquals(filled(n, total), read(reduced[0], n));
    }

    @Test
    void sendAndRecvPairAcrossRanks() {
        Ranks r = open();
        Buffer out = r.floats(0, 4f, 5f, 6f);
        Buffer in = r.zeros(1, 3);
        StepVerifier.create(Mono.when(r.comm(0).send(out, 3, f32(), 1), r.comm(1).recv(in, 3, f32(), 0)))
                .expectComplete().verify(WAIT);
        assertArrayEquals(new float[] {4f, 5f, 6f}, read(in, 3));
    }

    @Test
    void badArgumentsFailTheSubscriptionAndIssueNothing() {
        Ranks r = open();
        Buffer small = r.zeros(0, 2);
        Mono<Void> tooMany = r.comm(0).allReduce(small, small, 1_000, f32(), ReduceOp.SUM); // must not throw here

        StepVerifier.create(tooMany).expectError(InvalidArgumentException.class).verify(WAIT);
        StepVerifier.create(r.comm(0).broadcast(small, small, 2, f32(), r.size())).expectError(InvalidArgumentException.class).verify(WAIT);
        StepVerifier.create(r.comm(0).submit(Operation.allReduce(small, small, 1_000, f32(), ReduceOp.SUM), Duration.ofSeconds(1)))
                .expectError(InvalidArgumentException.class).verify(WAIT);
        assertEquals(0, r.core(0).pendingCount());

        // No sequence number was consumed: the next operation is the communicator's first.
        Work first = r.comm(0).issue(Operation.allReduce(small, small, 2, f32(), ReduceOp.SUM)).block(WAIT);
        assertEquals(1, first.sequence());
        StepVerifier.create(r.all(i -> i == 0 ? Mono.fromFuture(first)
                : r.comm(i).allReduce(r.zeros(i, 2), r.zeros(i, 2), 2, f32(), ReduceOp.SUM))).expectComplete().verify(WAIT);
    }

    // ---- ordering

    @Test
    void concurrentSubscribersLaunchInTheirSubscriptionOrder() throws Exception {
        Ranks r = open();
        int threads = 4;
        int perThread = 50;
        List<List<Work>> issued = new ArrayList<>();
        for (int rank = 0; rank < r.size(); rank++) {
            List<Thread> workers = new ArrayList<>();
            List<List<Work>> perWorker = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                List<Work> mine = new ArrayList<>();
                perWorker.add(mine);
                Buffer b = r.zeros(rank, N);
                ReactiveCommunicator comm = r.comm(rank);
                workers.add(new Thread(() -> {
                    for (int k = 0; k < perThread; k++) mine.add(comm.issue(Operation.allReduce(b, b, N, f32(), ReduceOp.SUM)).block(WAIT));
                }));
            }
            for (Thread w : workers) w.start();
            for (Thread w : workers) w.join();
            issued.addAll(perWorker);
            // Each thread's subscriptions launched in its order; together they used every sequence number once.
            List<Long> all = new ArrayList<>();
            for (List<Work> mine : perWorker) {
                for (int k = 1; k < mine.size(); k++) assertTrue(mine.get(k - 1).sequence() < mine.get(k).sequence());
                for (Work w : mine) all.add(w.sequence());
            }
            all.sort(null);
            for (int k = 0; k < all.size(); k++) assertEquals(k + 1, all.get(k));
        }
        // Same shape everywhere, so every rank's operations pair up and complete.
        for (List<Work> mine : issued) for (Work w : mine) w.get(WAIT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS);
    }

    @Test
    void concatMapKeepsEveryRankInTheSameOrder() {
        Ranks r = open();
        int steps = 20;
        Buffer[][] bufs = new Buffer[r.size()][steps];
        for (int rank = 0; rank < r.size(); rank++) {
            for (int s = 0; s < steps; s++) bufs[rank][s] = r.floats(rank, filled(s + 1, s));
        }
        // Counts differ per step: any mismatch between ranks would fail or hang instead of producing these sums.
        StepVerifier.create(r.all(rank -> Flux.range(0, steps)
                        .concatMap(s -> r.comm(rank).allReduce(bufs[rank][s], bufs[rank][s], s + 1, f32(), ReduceOp.SUM))
                        .then()))
                .expectComplete().verify(WAIT);
        for (int rank = 0; rank < r.size(); rank++) {
            for (int s = 0; s < steps; s++) assertArrayEquals(filled(s + 1, (float) s * r.size()), read(bufs[rank][s], s + 1));
        }
    }

    // ---- groups

    @Test
    void groupExchangesARingOfSendsAndReceives() {
        Ranks r = open();
        int n = r.size();
        Buffer[] in = new Buffer[n];
        ReactiveGroup group = ReactiveGroup.create();
        for (int i = 0; i < n; i++) {
            in[i] = r.zeros(i, 2);
            // Receive first on purpose: inside a group the order of sends and receives cannot deadlock.
            group = group.add(r.comm(i), Operation.recv(in[i], 2, f32(), (i + n - 1) % n))
                    .add(r.comm(i), Operation.send(r.floats(i, i, 10 * i), 2, f32(), (i + 1) % n));
        }
        assertEquals(2 * n, group.size());
        StepVerifier.create(group.submit()).expectComplete().verify(WAIT);
        for (int i = 0; i < n; i++) {
            int from = (i + n - 1) % n;
            assertArrayEquals(new float[] {from, 10 * from}, read(in[i], 2));
        }
    }

    @Test
    void aGroupIsIssuedOncePerSubscription() {
        Ranks r = open();
        Buffer[] b = new Buffer[r.size()];
        ReactiveGroup group = ReactiveGroup.create();
        for (int i = 0; i < r.size(); i++) {
            b[i] = r.floats(i, filled(N, 1f));
            group = group.add(r.comm(i), Operation.allReduce(b[i], b[i], N, f32(), ReduceOp.SUM));
        }
        Mono<Void> mono = group.submit();
        assertEquals(0, r.core(0).pendingCount());
        StepVerifier.create(mono).expectComplete().verify(WAIT);
        StepVerifier.create(mono).expectComplete().verify(WAIT);
        float n = r.size();
        for (Buffer x : b) assertArrayEquals(filled(N, n * n), read(x, N));
    }

    @Test
    void aBadGroupFailsAtSubscriptionAndIssuesNothing() {
        Ranks r = open();
        Buffer small = r.zeros(0, 1);
        StepVerifier.create(ReactiveGroup.create().submit()).expectError(InvalidArgumentException.class).verify(WAIT);
        Mono<Void> bad = ReactiveGroup.create()
                .add(r.comm(0), Operation.allReduce(small, small, 1, f32(), ReduceOp.SUM))
                .add(r.comm(0), Operation.allReduce(small, small, 99, f32(), ReduceOp.SUM))
                .submit();
        StepVerifier.create(bad).expectError(InvalidArgumentException.class).verify(WAIT);
        assertEquals(0, r.core(0).pendingCount());
    }

    @Test
    void submitGroupIssuesSeveralOperationsAsOne() {
        Ranks r = open();
        Buffer[] a = new Buffer[r.size()];
        Buffer[] b = new Buffer[r.size()];
        for (int i = 0; i < r.size(); i++) {
            a[i] = r.floats(i, filled(N, 1f));
            b[i] = r.floats(i, filled(N, 2f));
        }
        StepVerifier.create(r.all(i -> r.comm(i).submitGroup(List.of(
                        Operation.allReduce(a[i], a[i], N, f32(), ReduceOp.SUM),
                        Operation.allReduce(b[i], b[i], N, f32(), ReduceOp.MAX)))))
                .expectComplete().verify(WAIT);
        for (int i = 0; i < r.size(); i++) {
            assertArrayEquals(filled(N, r.size()), read(a[i], N));
            assertArrayEquals(filled(N, 2f), read(b[i], N));
        }
    }

    // ---- timeouts and errors

    @Test
    void aMissingPeerOperationTimesOutNamingThePendingWork() {
        Ranks r = open(shortTimeout(TimeoutPolicy.REPORT));
        Buffer b0 = r.floats(0, filled(N, 1f));
        // Only rank 0 issues: as if the ranks disagreed on the order. The error names the work on this rank.
        StepVerifier.create(r.comm(0).allReduce(b0, b0, N, f32(), ReduceOp.SUM))
                .expectErrorSatisfies(e -> {
                    assertInstanceOf(WorkTimeoutException.class, e);
                    assertTrue(e.getMessage().contains("allReduce(seq=1, count=" + N + ", float32, sum"), e.getMessage());
                    assertTrue(e.getMessage().contains(r.core(0).describe()), e.getMessage());
                })
                .verify(WAIT);
        // REPORT keeps the communicator: once the other ranks catch up, everything completes and later work runs.
        // Their operations get a timeout of their own: a first collective may set up connections for longer than 0.3 s.
        assertTrue(r.core(0).isOpen());
        StepVerifier.create(r.all(i -> i == 0 ? Mono.empty() : r.comm(i).timeout(WAIT).allReduce(r.floats(i, filled(N, 1f)),
                r.zeros(i, N), N, f32(), ReduceOp.SUM))).expectComplete().verify(WAIT);
        await().atMost(WAIT).until(() -> r.core(0).pendingCount() == 0);
        StepVerifier.create(r.all(i -> r.comm(i).timeout(WAIT).allReduce(r.floats(i, filled(N, 1f)), r.zeros(i, N), N, f32(),
                ReduceOp.SUM))).expectComplete().verify(WAIT);
    }

    @Test
    void underTheAbortPolicyATimeoutFailsEveryPendingMono() {
        Ranks r = open(shortTimeout(TimeoutPolicy.ABORT_COMMUNICATOR));
        Buffer b = r.floats(0, filled(N, 1f));
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        for (int k = 0; k < 3; k++) r.comm(0).allReduce(b, b, N, f32(), ReduceOp.SUM).subscribe(null, errors::add);
        await().atMost(WAIT).until(() -> errors.size() == 3);
        // The abort fails the others in no particular order: sort the errors by the work they name.
        List<Throwable> bySequence = new ArrayList<>(errors);
        bySequence.sort(java.util.Comparator.comparing(e -> e.getMessage().substring(e.getMessage().indexOf("seq="))));
        assertInstanceOf(WorkTimeoutException.class, bySequence.get(0));
        assertTrue(bySequence.get(0).getMessage().contains("allReduce(seq=1"), bySequence.get(0).getMessage());
        for (int k = 1; k < 3; k++) {
            assertInstanceOf(CommunicatorAbortedException.class, bySequence.get(k));
            assertTrue(bySequence.get(k).getMessage().contains("allReduce(seq=" + (k + 1)), bySequence.get(k).getMessage());
        }
        // Later operations fail at subscription with the same type.
        StepVerifier.create(r.comm(0).allReduce(b, b, N, f32(), ReduceOp.SUM)).expectError(CommunicatorAbortedException.class).verify(WAIT);
    }

    @Test
    void perOperationTimeoutsOverrideTheCommunicators() {
        Ranks r = open(CommOptions.defaults().withTimeoutPolicy(TimeoutPolicy.REPORT)); // default timeout: minutes
        Buffer b = r.floats(0, filled(N, 1f));
        StepVerifier.create(r.comm(0).submit(Operation.allReduce(b, b, N, f32(), ReduceOp.SUM), Duration.ofMillis(200)))
                .expectError(WorkTimeoutException.class).verify(WAIT);
        catchUp(r, 1);
        StepVerifier.create(r.comm(0).timeout(Duration.ofMillis(200)).allReduce(b, b, N, f32(), ReduceOp.SUM))
                .expectErrorSatisfies(e -> {
                    assertInstanceOf(WorkTimeoutException.class, e);
                    assertTrue(e.getMessage().contains("allReduce(seq=2"), e.getMessage());
                })
                .verify(WAIT);
        catchUp(r, 1);
        assertTrue(r.core(0).isOpen());
    }

    /** The ranks other than 0 issue {@code count} allReduces of N floats that rank 0 issued alone; waits for all. */
    private static void catchUp(Ranks r, int count) {
        StepVerifier.create(r.all(i -> i == 0 ? Mono.empty() : Flux.range(0, count).concatMap(k -> r.comm(i)
                .allReduce(r.zeros(i, N), r.zeros(i, N), N, f32(), ReduceOp.SUM)).then())).expectComplete().verify(WAIT);
        await().atMost(WAIT).until(() -> r.core(0).pendingCount() == 0);
    }

    @Test
    void abortFailsPendingMonosWithTheTypedException() {
        Ranks r = open();
        Buffer b = r.floats(0, filled(N, 1f));
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        for (int k = 0; k < 3; k++) r.comm(0).allReduce(b, b, N, f32(), ReduceOp.SUM).subscribe(null, errors::add);
        Mono<Void> abort = r.comm(0).abort();
        assertTrue(r.core(0).isOpen(), "abort() is lazy");
        StepVerifier.create(abort).expectComplete().verify(WAIT);
        await().atMost(WAIT).until(() -> errors.size() == 3);
        for (Throwable e : errors) assertInstanceOf(CommunicatorAbortedException.class, e);
        StepVerifier.create(r.comm(0).send(b, N, f32(), 1)).expectError(CommunicatorAbortedException.class).verify(WAIT);
    }

    // ---- cancellation

    @Test
    void cancellingDetachesAndTheOperationStillCompletes() {
        Ranks r = open();
        Buffer b0 = r.floats(0, filled(N, 1f));
        Disposable subscription = r.comm(0).allReduce(b0, b0, N, f32(), ReduceOp.SUM).subscribe();
        await().atMost(WAIT).until(() -> r.core(0).pendingCount() == 1);
        subscription.dispose();

        StepVerifier.create(r.all(i -> i == 0 ? Mono.empty() : r.comm(i).allReduce(r.floats(i, filled(N, 1f)),
                r.zeros(i, N), N, f32(), ReduceOp.SUM))).expectComplete().verify(WAIT);
        await().atMost(WAIT).until(() -> r.core(0).pendingCount() == 0);
        assertArrayEquals(filled(N, r.size()), read(b0, N), "the detached operation ran to completion");

        StepVerifier.create(r.all(i -> r.comm(i).allReduce(r.floats(i, filled(N, 2f)), r.zeros(i, N), N, f32(), ReduceOp.SUM)))
                .expectComplete().verify(WAIT);
    }

    @Test
    void closingABufferUnderADetachedOperationDefersItsRelease() {
        Ranks r = open();
        Buffer own = r.backend.allocate(r.core(0).device(), N * 4L);
        Disposable subscription = r.comm(0).allReduce(own, own, N, f32(), ReduceOp.SUM).subscribe();
        await().atMost(WAIT).until(() -> r.core(0).pendingCount() == 1);
        subscription.dispose();
        own.close(); // the pending work keeps the memory until it completes
        StepVerifier.create(r.all(i -> i == 0 ? Mono.empty() : r.comm(i).allReduce(r.zeros(i, N), r.zeros(i, N), N, f32(), ReduceOp.SUM)))
                .expectComplete().verify(WAIT);
        await().atMost(WAIT).until(() -> r.core(0).pendingCount() == 0);
        StepVerifier.create(r.comm(0).allReduce(own, own, N, f32(), ReduceOp.SUM)).expectError().verify(WAIT);
    }

    // ---- threads

    @Test
    void signalsArriveOnTheNonBlockingEventThread() {
        Ranks r = open();
        Buffer b0 = r.zeros(0, N);
        AtomicReference<Thread> thread = new AtomicReference<>();
        AtomicReference<Boolean> nonBlocking = new AtomicReference<>();
        AtomicReference<Throwable> blockFailure = new AtomicReference<>();
        r.comm(0).allReduce(b0, b0, N, f32(), ReduceOp.SUM).doOnSuccess(v -> {
            thread.set(Thread.currentThread());
            nonBlocking.set(Schedulers.isInNonBlockingThread());
            try {
                Mono.fromSupplier(() -> 1).hide().block(); // hide(): no scalar shortcut past the check
            } catch (Throwable t) {
                blockFailure.set(t);
            }
        }).subscribe();
        // Rank 0's work cannot complete before the others issue theirs, so its callback cannot run on this thread.
        await().atMost(WAIT).until(() -> r.core(0).pendingCount() == 1);
        StepVerifier.create(r.all(i -> i == 0 ? Mono.empty() : r.comm(i).allReduce(r.zeros(i, N), r.zeros(i, N), N, f32(), ReduceOp.SUM)))
                .expectComplete().verify(WAIT);
        await().atMost(WAIT).until(() -> thread.get() != null);
        assertSame(r.backend.eventThread(), thread.get());
        assertTrue(nonBlocking.get());
        assertInstanceOf(IllegalStateException.class, blockFailure.get());
        assertTrue(blockFailure.get().getMessage().contains("not supported in thread"), blockFailure.get().getMessage());
    }

    /**
     * Reactor's block() subscribes first and refuses on a NonBlocking thread afterwards; for a jccl Mono the
     * subscription is the operation, which was issued on one rank only and later aborted the communicator at its
     * timeout. Every blocking form, through operators and publishOn, must now issue nothing.
     */
    @Test
    void blockOnTheEventThreadIssuesNothing() {
        Ranks r = open();
        Buffer b0 = r.zeros(0, N);
        Scheduler elsewhere = Schedulers.newSingle("jccl-test-elsewhere");
        try {
            List<Runnable> blockingCalls = List.of(
                    () -> r.comm(0).allReduce(b0, b0, N, f32(), ReduceOp.SUM).block(),
                    () -> r.comm(0).allReduce(b0, b0, N, f32(), ReduceOp.SUM).then(Mono.just(1)).block(WAIT),
                    () -> r.comm(0).allReduce(b0, b0, N, f32(), ReduceOp.SUM).blockOptional(),
                    () -> r.comm(0).publishOn(elsewhere).allReduce(b0, b0, N, f32(), ReduceOp.SUM).block(),
                    () -> Flux.range(0, 2).concatMap(i -> r.comm(0).allReduce(b0, b0, N, f32(), ReduceOp.SUM)).blockLast());
            List<Throwable> refusals = new CopyOnWriteArrayList<>();
            AtomicReference<Integer> pendingAfter = new AtomicReference<>();
            r.comm(0).allReduce(b0, b0, N, f32(), ReduceOp.SUM).doOnSuccess(v -> {
                for (Runnable call : blockingCalls) {
                    try {
                        call.run();
                    } catch (Throwable t) {
                        refusals.add(t);
                    }
                }
                pendingAfter.set(r.core(0).pendingCount());
            }).subscribe();
            await().atMost(WAIT).until(() -> r.core(0).pendingCount() == 1);
            StepVerifier.create(r.all(i -> i == 0 ? Mono.empty() : r.comm(i).allReduce(r.zeros(i, N), r.zeros(i, N), N, f32(), ReduceOp.SUM)))
                    .expectComplete().verify(WAIT);
            await().atMost(WAIT).until(() -> pendingAfter.get() != null);
            assertEquals(0, pendingAfter.get(), "no blocked call issued its operation");
            assertEquals(blockingCalls.size(), refusals.size());
            for (Throwable t : refusals) assertInstanceOf(IllegalStateException.class, t);
            // Every rank still issues in the same order: the next collective completes everywhere.
            StepVerifier.create(r.all(i -> r.comm(i).allReduce(r.zeros(i, N), r.zeros(i, N), N, f32(), ReduceOp.SUM)))
                    .expectComplete().verify(WAIT);
            assertEquals(0, r.core(0).pendingCount());
        } finally {
            elsewhere.dispose();
        }
    }

    /**
     * block() on an ordinary thread is no misuse, even where later operations of its chain subscribe on a
     * NonBlocking thread: {@code a.then(b)} subscribes {@code b} on the event thread when {@code a} completes, and
     * subscribeOn moves a whole subscription to a scheduler's thread. Neither may be refused.
     */
    @Test
    void blockOnAnOrdinaryThreadWorksWhereItsChainSubscribesOnNonBlockingThreads() {
        Ranks r = open();
        Scheduler single = Schedulers.newSingle("jccl-test-subscriptions");
        try {
            Mono<Void> twoInARow = r.all(i -> r.comm(i).allReduce(r.zeros(i, N), r.zeros(i, N), N, f32(), ReduceOp.SUM)
                    .then(r.comm(i).allReduce(r.zeros(i, N), r.zeros(i, N), N, f32(), ReduceOp.SUM)));
            twoInARow.block(WAIT);
            Mono.defer(() -> twoInARow).subscribeOn(single).block(WAIT);
            assertEquals(0, r.core(0).pendingCount());
        } finally {
            single.dispose();
        }
    }

    @Test
    void publishOnMovesSignalsToTheScheduler() {
        Scheduler scheduler = Schedulers.newBoundedElastic(1, 16, "jccl-test-signals");
        try {
            Ranks r = open();
            List<Thread> seen = new CopyOnWriteArrayList<>();
            StepVerifier.create(r.all(i -> r.comm(i).publishOn(scheduler)
                            .allReduce(r.zeros(i, N), r.zeros(i, N), N, f32(), ReduceOp.SUM)
                            .doOnSuccess(v -> seen.add(Thread.currentThread()))))
                    .expectComplete().verify(WAIT);
            assertEquals(r.size(), seen.size());
            for (Thread t : seen) {
                assertTrue(t.getName().startsWith("jccl-test-signals"), t.getName());
                assertNotSame(r.backend.eventThread(), t);
            }
        } finally {
            scheduler.dispose();
        }
    }

    // ---- lifecycle

    @Test
    void splitMakesWorkingCommunicators() {
        Ranks r = open();
        List<ReactiveCommunicator> children = Flux.range(0, r.size())
                .flatMap(i -> r.comm(i).split(0, r.size() - i)) // reversed keys: child rank = size-1-rank
                .collectList().block(WAIT);
        assertEquals(r.size(), children.size());
        for (ReactiveCommunicator c : children) {
            r.track(c);
            assertEquals(r.size(), c.size());
        }
        Buffer[] b = new Buffer[r.size()];
        StepVerifier.create(Flux.fromIterable(children).flatMap(c -> {
            int parent = r.size() - 1 - c.rank();
            b[parent] = r.floats(parent, filled(N, c.rank()));
            return c.allReduce(b[parent], b[parent], N, f32(), ReduceOp.MAX);
        }).then()).expectComplete().verify(WAIT);
        for (Buffer x : b) assertArrayEquals(filled(N, r.size() - 1), read(x, N));
    }

    @Test
    void splitExcludedLeavesTheOtherRanksTogether() {
        Ranks r = open();
        AtomicReference<ReactiveCommunicator> alone = new AtomicReference<>();
        StepVerifier.create(r.all(i -> i == 0
                        ? r.comm(0).split(7, 0).doOnNext(c -> alone.set(r.track(c)))
                        : r.comm(i).splitExcluded()))
                .expectComplete().verify(WAIT);
        assertEquals(1, alone.get().size());
        Buffer b = r.floats(0, filled(N, 3f));
        StepVerifier.create(alone.get().allReduce(b, b, N, f32(), ReduceOp.SUM)).expectComplete().verify(WAIT);
        assertArrayEquals(filled(N, 3f), read(b, N));
    }

    @Test
    void preMulSumScalesEachInput() {
        Ranks r = open();
        List<PreMulSum> ops = Flux.range(0, r.size()).flatMapSequential(i -> r.comm(i).createPreMulSum(2.0, f32()))
                .collectList().block(WAIT);
        try {
            Buffer[] b = new Buffer[r.size()];
            for (int i = 0; i < r.size(); i++) b[i] = r.floats(i, filled(N, 1f));
            StepVerifier.create(r.all(i -> r.comm(i).allReduce(b[i], b[i], N, f32(), ops.get(i)))).expectComplete().verify(WAIT);
            for (Buffer x : b) assertArrayEquals(filled(N, 2f * r.size()), read(x, N));
        } finally {
            ops.forEach(PreMulSum::close);
        }
    }

    @Test
    void registerEmitsARegistrationAndCloseAsyncCloses() {
        Ranks r = open();
        Buffer b = r.backend.allocateForCommunication(r.core(0).device(), 1024);
        try {
            var registration = r.comm(0).register(b).block(WAIT);
            assertSame(b, registration.buffer());
            registration.close();
        } finally {
            b.close();
        }
        Mono<Void> close = r.comm(0).closeAsync();
        assertTrue(r.core(0).isOpen(), "closeAsync() is lazy");
        // Close every rank together: finalizing one may wait for its peers.
        StepVerifier.create(r.all(i -> i == 0 ? close : r.comm(i).closeAsync())).expectComplete().verify(WAIT);
        for (int i = 0; i < r.size(); i++) assertTrue(!r.core(i).isOpen());
    }

    @Test
    void initRankCreatesEveryRankFromOneUniqueId() {
        ReactiveBackend backend = ReactiveBackend.of(backend());
        var id = backend().newUniqueId();
        int n = ranks();
        List<ReactiveCommunicator> comms = Flux.range(0, n)
                .flatMap(i -> backend.initRank(id, n, i, backend().kind() == org.jccl.core.BackendKind.HOST ? -1 : i))
                .collectList().block(WAIT);
        try {
            assertEquals(n, comms.size());
            List<Integer> seenRanks = new ArrayList<>();
            for (ReactiveCommunicator c : comms) seenRanks.add(c.rank());
            seenRanks.sort(null);
            for (int i = 0; i < n; i++) assertEquals(i, seenRanks.get(i));
        } finally {
            List<java.util.concurrent.CompletableFuture<Void>> closing = new ArrayList<>();
            for (ReactiveCommunicator c : comms) closing.add(c.communicator().closeAsync());
            closing.forEach(java.util.concurrent.CompletableFuture::join);
        }
    }
}
