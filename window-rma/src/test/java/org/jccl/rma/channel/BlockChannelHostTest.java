package org.jccl.rma.channel;

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
import java.util.concurrent.TimeUnit;
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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
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
        Flux<Buffer> upstream = Flux.fromIterable(source).doOnRequest(n -> {
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
        CompletableFuture<Long> producer = ch.get(0).send(Flux.fromIterable(source)).toFuture();
        List<Long> seen = ch.get(1).receive().doOnNext(ReceivedBlock::release).map(ReceivedBlock::sequence).take(10)
                .collectList().block(LIMIT);
        assertEquals(List.of(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L), seen);
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> producer.get(LIMIT.toSeconds(), TimeUnit.SECONDS), () -> "stuck: " + ch);
        assertInstanceOf(ChannelClosedException.class, e.getCause(), String.valueOf(e.getCause()));
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
        CompletableFuture<Long> producer = ch.get(0).send(Flux.just(big)).toFuture();
        assertThrows(ChannelClosedException.class, () -> ch.get(1).receive().blockLast(LIMIT));
        ExecutionException e = assertThrows(ExecutionException.class, () -> producer.get(LIMIT.toSeconds(), TimeUnit.SECONDS));
        assertInstanceOf(InvalidArgumentException.class, e.getCause());
        assertTrue(e.getCause().getMessage().contains("at most 16"), e.getCause().getMessage());
        communicatorStillWorks();
        closeAll(ch);
        big.close();
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
