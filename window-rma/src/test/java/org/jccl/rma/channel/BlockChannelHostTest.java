package org.jccl.rma.channel;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Jccl;
import org.jccl.core.ReduceOp;
import org.jccl.core.Work;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.reactive.ReactiveCommunicator;
import org.jccl.rma.OneSided;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/** The block channel on the host backend: two ranks as threads of this JVM, and one rank into its own window. */
class BlockChannelHostTest {
    static final Duration LIMIT = Duration.ofSeconds(20);
    final Backend backend = Jccl.backend(BackendKind.HOST);
    List<Communicator> comms = List.of();

    @AfterEach
    void close() {
        comms.forEach(Communicator::close);
    }

    List<BlockChannel> open(int ranks, int slots, long blockBytes) throws Exception {
        comms = backend.initAll(ranks).get(30, TimeUnit.SECONDS);
        int last = ranks - 1;
        return Flux.fromIterable(comms).map(ReactiveCommunicator::of)
                .flatMapSequential(c -> BlockChannel.open(c, 0, last, slots, blockBytes)).collectList().block(LIMIT);
    }

    /** Blocks of random bytes, each remembered for the check. */
    static List<Buffer> blocks(Backend backend, int count, int maxBytes, List<byte[]> sent) {
        Random random = new Random(count);
        List<Buffer> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            byte[] data = new byte[1 + random.nextInt(maxBytes)];
            random.nextBytes(data);
            sent.add(data);
            Buffer b = backend.allocate(-1, data.length);
            b.write(0, ByteBuffer.wrap(data));
            out.add(b);
        }
        return out;
    }

    static byte[] read(ReceivedBlock b) {
        ByteBuffer dst = ByteBuffer.allocate((int) b.data().byteSize());
        b.data().read(0, dst);
        return dst.array();
    }

    void checkDelivery(List<BlockChannel> ch, int count, int slots, Duration consumerDelay) {
        List<byte[]> sent = new ArrayList<>();
        List<Buffer> source = blocks(backend, count, 4096, sent);
        List<byte[]> got = Collections.synchronizedList(new ArrayList<>());
        AtomicLong requested = new AtomicLong();
        AtomicLong released = new AtomicLong();
        AtomicLong worstAhead = new AtomicLong();
        AtomicLong badRequests = new AtomicLong();
        Flux<Buffer> upstream = Flux.fromIterable(source).doOnRequest(n -> {
            if (n <= 0) badRequests.incrementAndGet(); // Reactive Streams 3.9: a request must be positive
            long ahead = requested.addAndGet(n) - released.get();
            worstAhead.accumulateAndGet(ahead, Math::max);
        });
        Mono<Long> producer = ch.get(0).send(upstream);
        Mono<Void> consumer = ch.get(ch.size() - 1).receive().publishOn(Schedulers.boundedElastic())
                .delayElements(consumerDelay).doOnNext(b -> {
                    assertEquals(got.size(), b.sequence());
                    got.add(read(b));
                    released.incrementAndGet();
                    b.release();
                }).then();
        List<Object> results = Flux.merge(producer.cast(Object.class), consumer.cast(Object.class)).collectList()
                .timeout(LIMIT, Mono.error(() -> new AssertionError("stuck: " + ch))).block();
        assertEquals(List.of((long) count), results);
        assertEquals(count, got.size());
        for (int i = 0; i < count; i++) assertArrayEquals(sent.get(i), got.get(i), "block " + i);
        // memory stays bounded: the producer never runs more than the ring (plus the slots in flight) ahead
        assertTrue(worstAhead.get() <= 2L * slots, "requested ahead of releases: " + worstAhead.get());
        assertEquals(0, badRequests.get(), "requests of zero blocks or fewer");
        source.forEach(Buffer::close);
    }

    /** The communicator still works after the channel (every signal was consumed, nothing hangs). */
    void communicatorStillWorks() throws Exception {
        communicatorsStillWork(backend, comms);
    }

    static void communicatorsStillWork(Backend backend, List<Communicator> comms) throws Exception {
        List<Work> works = new ArrayList<>();
        List<Buffer> bufs = new ArrayList<>();
        for (Communicator c : comms) {
            Buffer b = backend.allocate(-1, 4);
            b.write(0, new int[] {1});
            bufs.add(b);
            works.add(c.allReduce(b, b, 1, DataType.INT32, ReduceOp.SUM));
        }
        for (var w : works) w.get(30, TimeUnit.SECONDS);
        assertEquals(comms.size(), bufs.get(0).readInts(0, 1)[0]);
    }

    void closeAll(List<BlockChannel> ch) {
        Flux.fromIterable(ch).flatMap(BlockChannel::close).blockLast(LIMIT);
    }

    @Test
    void everyBlockArrivesOnceInOrderBetweenTwoRanks() throws Exception {
        List<BlockChannel> ch = open(2, 4, 4096);
        checkDelivery(ch, 300, 4, Duration.ZERO);
        communicatorStillWorks();
        closeAll(ch);
    }

    @Test
    void aSlowConsumerSlowsTheProducerAndMemoryStaysBounded() throws Exception {
        List<BlockChannel> ch = open(2, 3, 4096);
        checkDelivery(ch, 40, 3, Duration.ofMillis(5));
        closeAll(ch);
    }

    /**
     * One slot: upstream completes while the last block's put still holds the one pinned record, so the last header
     * waits for it. A credit wait that looked for the consumer's closing record in the meantime took the credit the
     * last header needed, and the record never came (found by ChannelChaosTest).
     */
    @Test
    void aOneSlotChannelEndsWhileItsLastHeaderWaitsForItsPinnedRecord() throws Exception {
        comms = backend.initAll(2).get(30, TimeUnit.SECONDS);
        for (int round = 0; round < 5; round++) {
            List<BlockChannel> ch = Flux.fromIterable(comms).map(ReactiveCommunicator::of)
                    .flatMapSequential(c -> BlockChannel.open(c, 0, 1, 1, 4096)).collectList().block(LIMIT);
            checkDelivery(ch, 3 + round, 1, Duration.ZERO);
            closeAll(ch);
        }
        communicatorStillWorks();
    }

    @Test
    void oneRankPutsIntoItsOwnWindow() throws Exception {
        List<BlockChannel> ch = open(1, 4, 4096);
        assertEquals(1, ch.size());
        checkDelivery(List.of(ch.get(0), ch.get(0)), 100, 4, Duration.ZERO);
        communicatorStillWorks();
        closeAll(ch);
        comms.forEach(Communicator::close);
        // a slow consumer on one rank: the last header too waits until its slot was released
        ch = open(1, 4, 4096);
        checkDelivery(List.of(ch.get(0), ch.get(0)), 20, 4, Duration.ofMillis(5));
        closeAll(ch);
    }

    @Test
    void aConsumerThatCancelsEndsTheProducerWithATypedErrorAndLeavesTheCommunicatorUsable() throws Exception {
        List<BlockChannel> ch = open(2, 4, 64);
        List<Buffer> source = blocks(backend, 1000, 64, new ArrayList<>());
        AtomicBoolean upstreamCancelled = new AtomicBoolean();
        CompletableFuture<Long> producer = ch.get(0).send(Flux.fromIterable(source)
                .doOnCancel(() -> upstreamCancelled.set(true))).toFuture();
        List<Long> seen = ch.get(1).receive().doOnNext(ReceivedBlock::release).map(ReceivedBlock::sequence).take(10)
                .collectList().block(LIMIT);
        assertEquals(List.of(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L), seen);
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> producer.get(LIMIT.toSeconds(), TimeUnit.SECONDS), () -> "stuck: " + ch);
        assertInstanceOf(ChannelClosedException.class, e.getCause(), String.valueOf(e.getCause()));
        assertEquals("the consumer cancelled", e.getCause().getMessage());
        assertTrue(upstreamCancelled.get(), "the producer cancels its upstream");
        InvalidUsageException again = assertThrows(InvalidUsageException.class,
                () -> ch.get(0).send(Flux.fromIterable(source)).block(LIMIT));
        assertTrue(again.getMessage().contains("already in use"), again.getMessage());
        communicatorStillWorks();
        closeAll(ch);
        source.forEach(Buffer::close);
    }

    @Test
    void aFailingProducerEndsTheConsumerWithATypedError() throws Exception {
        List<BlockChannel> ch = open(2, 4, 64);
        List<Buffer> source = blocks(backend, 5, 64, new ArrayList<>());
        Flux<Buffer> failing = Flux.concat(Flux.fromIterable(source), Flux.error(new IllegalStateException("prefill failed")));
        CompletableFuture<Long> producer = ch.get(0).send(failing).toFuture();
        List<Long> seen = Collections.synchronizedList(new ArrayList<>());
        Throwable consumerError = assertThrows(RuntimeException.class, () -> ch.get(1).receive()
                .doOnNext(b -> {
                    seen.add(b.sequence());
                    b.release();
                }).blockLast(LIMIT));
        assertInstanceOf(ChannelClosedException.class, consumerError, String.valueOf(consumerError));
        assertEquals(List.of(0L, 1L, 2L, 3L, 4L), seen);
        ExecutionException producerError = assertThrows(ExecutionException.class,
                () -> producer.get(LIMIT.toSeconds(), TimeUnit.SECONDS), () -> "stuck: " + ch);
        assertEquals("prefill failed", producerError.getCause().getMessage());
        InvalidUsageException again = assertThrows(InvalidUsageException.class, () -> ch.get(1).receive().blockLast(LIMIT));
        assertTrue(again.getMessage().contains("already in use"), again.getMessage());
        communicatorStillWorks();
        closeAll(ch);
        source.forEach(Buffer::close);
    }

    @Test
    void blocksLargerThanTheSlotsFailTheProducerAndEndTheConsumer() throws Exception {
        List<BlockChannel> ch = open(2, 2, 16);
        Buffer big = backend.allocate(-1, 17);
        AtomicBoolean upstreamCancelled = new AtomicBoolean();
        CompletableFuture<Long> producer = ch.get(0).send(Flux.just(big).doOnCancel(() -> upstreamCancelled.set(true))).toFuture();
        assertThrows(ChannelClosedException.class, () -> ch.get(1).receive().blockLast(LIMIT));
        ExecutionException e = assertThrows(ExecutionException.class, () -> producer.get(LIMIT.toSeconds(), TimeUnit.SECONDS));
        assertInstanceOf(InvalidArgumentException.class, e.getCause());
        assertTrue(e.getCause().getMessage().contains("at most 16"), e.getCause().getMessage());
        assertTrue(upstreamCancelled.get(), "the producer cancels its upstream");
        communicatorStillWorks();
        closeAll(ch);
        big.close();
    }

    /** A block that cannot be copied (its owner closed it) fails the send, ends the consumer and cancels upstream. */
    @Test
    void aBlockThatCannotBeCopiedFailsTheProducerAndEndsTheConsumer() throws Exception {
        List<BlockChannel> ch = open(2, 4, 64);
        List<Buffer> source = blocks(backend, 5, 64, new ArrayList<>());
        source.get(2).close();
        AtomicBoolean upstreamCancelled = new AtomicBoolean();
        CompletableFuture<Long> producer = ch.get(0).send(Flux.fromIterable(source)
                .doOnCancel(() -> upstreamCancelled.set(true))).toFuture();
        List<Long> seen = Collections.synchronizedList(new ArrayList<>());
        ChannelClosedException consumerError = assertThrows(ChannelClosedException.class, () -> ch.get(1).receive()
                .doOnNext(b -> {
                    seen.add(b.sequence());
                    b.release();
                }).blockLast(LIMIT));
        assertEquals("the producer failed", consumerError.getMessage());
        assertEquals(List.of(0L, 1L), seen);
        ExecutionException e = assertThrows(ExecutionException.class, () -> producer.get(LIMIT.toSeconds(), TimeUnit.SECONDS));
        assertInstanceOf(InvalidUsageException.class, e.getCause(), String.valueOf(e.getCause()));
        assertTrue(upstreamCancelled.get(), "the producer cancels its upstream");
        communicatorStillWorks();
        closeAll(ch);
        source.forEach(Buffer::close);
    }

    /** Cancelling the send's result ends the consumer typed, cancels upstream and leaves the communicator usable. */
    @Test
    void cancellingTheSendEndsTheConsumerAndCancelsUpstream() throws Exception {
        List<BlockChannel> ch = open(2, 4, 64);
        List<Buffer> source = blocks(backend, 20, 64, new ArrayList<>());
        AtomicBoolean upstreamCancelled = new AtomicBoolean();
        Disposable sending = ch.get(0).send(Flux.fromIterable(source).repeat()
                .doOnCancel(() -> upstreamCancelled.set(true))).subscribe();
        AtomicLong received = new AtomicLong();
        CompletableFuture<Long> consumer = ch.get(1).receive().doOnNext(b -> {
            received.incrementAndGet();
            b.release();
        }).count().toFuture();
        await().atMost(LIMIT).until(() -> received.get() >= 10);
        assertTrue(ch.get(0).toString().contains("producer[claimed=true, sent="), ch.get(0).toString());
        assertTrue(ch.get(1).toString().contains("consumer[started=true, waitsIssued="), ch.get(1).toString());
        sending.dispose();
        ExecutionException e = assertThrows(ExecutionException.class, () -> consumer.get(LIMIT.toSeconds(), TimeUnit.SECONDS));
        assertInstanceOf(ChannelClosedException.class, e.getCause(), String.valueOf(e.getCause()));
        assertEquals("the producer cancelled", e.getCause().getMessage());
        assertTrue(upstreamCancelled.get(), "the producer cancels its upstream");
        communicatorStillWorks();
        closeAll(ch);
        source.forEach(Buffer::close);
    }

    /**
     * The channel is closed while both sides stream, so its sides settle after the close was called; rank 0 issues an
     * all-reduce the moment its close of the last channel completes, rank 1 a little later. The window's
     * deregistration is a barrier on the launch thread: had a close completed before it was issued, rank 1 could sit
     * in the barrier with its all-reduce queued behind, while rank 0's all-reduce, issued first, held rank 0's
     * deregistration behind it on its stream (seen once as a hang of BlockChannelLanesTest).
     */
    @Test
    void aCollectiveIssuedTheMomentTheLastCloseCompletesComesAfterTheDeregistration() throws Exception {
        comms = backend.initAll(2).get(30, TimeUnit.SECONDS);
        List<Buffer> source = blocks(backend, 6, 64, new ArrayList<>());
        List<Buffer> sums = new ArrayList<>();
        for (int i = 0; i < 2; i++) sums.add(backend.allocate(-1, 4));
        try {
            for (int round = 0; round < 5; round++) {
                List<BlockChannel> ch = Flux.fromIterable(comms).map(ReactiveCommunicator::of)
                        .flatMapSequential(c -> BlockChannel.open(c, 0, 1, 2, 64)).collectList().block(LIMIT);
                // closed while both sides stream: the sides settle after the close was called, on the event thread
                AtomicLong received = new AtomicLong();
                Disposable sending = ch.get(0).send(Flux.fromIterable(source).repeat()).onErrorComplete().subscribe();
                Disposable receiving = ch.get(1).receive().doOnNext(b -> {
                    received.incrementAndGet();
                    b.release();
                }).onErrorComplete().subscribe();
                await().atMost(LIMIT).until(() -> received.get() >= 3);
                List<CompletableFuture<Void>> reduced = new ArrayList<>();
                for (int r = 0; r < 2; r++) {
                    Communicator c = comms.get(r);
                    Buffer b = sums.get(r);
                    b.write(0, new int[] {1});
                    Executor issuing = r == 0 ? Runnable::run : CompletableFuture.delayedExecutor(200, TimeUnit.MILLISECONDS);
                    reduced.add(ch.get(r).close().toFuture().thenComposeAsync(v -> {
                        assertEquals(List.of(), OneSided.of(c).windows(), "the window is gone once the last close completed");
                        return c.allReduce(b, b, 1, DataType.INT32, ReduceOp.SUM);
                    }, issuing));
                }
                for (CompletableFuture<Void> f : reduced) f.get(LIMIT.toSeconds(), TimeUnit.SECONDS);
                assertEquals(2, sums.get(0).readInts(0, 1)[0], "round " + round);
                sending.dispose();
                receiving.dispose();
            }
        } finally {
            comms.forEach(Communicator::abort);
            sums.forEach(Buffer::close);
            source.forEach(Buffer::close);
        }
    }

    /** A block size whose window size (slots × (header + block)) wraps is refused, typed, before anything is made. */
    @Test
    void blockSizesWhoseWindowSizeWrapsAreRefused() throws Exception {
        comms = backend.initAll(2).get(30, TimeUnit.SECONDS);
        ReactiveCommunicator c = ReactiveCommunicator.of(comms.get(0));
        for (long blockBytes : new long[] {Long.MAX_VALUE, Long.MAX_VALUE - 64, 1L << 62, (1L << 62) - 64}) {
            InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                    () -> BlockChannel.open(c, 0, 1, 4, blockBytes).block(LIMIT));
            assertTrue(e.getMessage().contains("overflows"), e.getMessage());
        }
        assertEquals(0, comms.get(0).pendingCount());
        communicatorStillWorks();
    }
}
