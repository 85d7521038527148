package org.jccl.rma.channel;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.Jccl;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.error.JcclException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.reactivestreams.Subscription;
import reactor.core.Disposable;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * {@code close()} may be called at any point, on one rank and on two: whatever each side did so far (nothing,
 * subscribed and waiting, sending into a full ring, cancelled, finished, holding blocks), both ranks' closes
 * complete, each side that was running ends typed, and every signal was consumed — the communicators still work and
 * a new channel on the same lane carries intact blocks.
 */
class BlockChannelClosePointsTest {
    static final Duration LIMIT = Duration.ofSeconds(20);
    static final int SLOTS = 4;
    final Backend backend = Jccl.backend(BackendKind.HOST);
    List<Communicator> comms = List.of();
    List<Buffer> source = List.of();
    final List<Disposable> running = new ArrayList<>();

    @AfterEach
    void close() {
        running.forEach(Disposable::dispose);
        source.forEach(Buffer::close);
        comms.forEach(Communicator::close);
    }

    /** Where the two sides are when close is called. */
    enum Point {
        /** neither side was used */
        UNUSED,
        /** the producer filled the ring; the consumer never subscribed */
        CONSUMER_NEVER_SUBSCRIBED,
        /** the consumer subscribed (its waits are on the stream); the producer never sent */
        PRODUCER_NEVER_SENT,
        /** the producer sent two blocks and its end; the consumer never subscribed */
        PRODUCER_ENDED_CONSUMER_NEVER_SUBSCRIBED,
        /** the consumer subscribed and cancelled; the producer never sent */
        CONSUMER_CANCELLED_PRODUCER_NEVER_SENT,
        /** the producer's result was cancelled; the consumer never subscribed */
        PRODUCER_CANCELLED_CONSUMER_NEVER_SUBSCRIBED,
        /** both stream, with no end in sight */
        STREAMING,
        /** the consumer holds every slot without releasing */
        CONSUMER_HOLDS_EVERY_SLOT,
        /** both ended normally */
        FINISHED
    }

    /** Which rank's close is called first (neither waits for the other's). */
    enum Order {
        PRODUCER_FIRST, CONSUMER_FIRST
    }

    /** What each side's subscriber saw; null while it runs (or was never used). */
    static final class Outcome {
        final CompletableFuture<Long> sent = new CompletableFuture<>();
        final CompletableFuture<Long> received = new CompletableFuture<>();
        boolean producerUsed;
        boolean consumerUsed;
    }

    @ParameterizedTest(name = "{0}, {1}")
    @EnumSource(Point.class)
    void closingBothRanksAtAnyPointCompletes(Point point) throws Exception {
        for (Order order : Order.values()) {
            comms = backend.initAll(2).get(30, TimeUnit.SECONDS);
            List<BlockChannel> ch = BlockChannelLanesTest.openOnEveryRank(comms, 0, 1, SLOTS, 64).block(LIMIT);
            Outcome outcome = reach(point, ch.get(0), ch.get(1));
            BlockChannel first = order == Order.PRODUCER_FIRST ? ch.get(0) : ch.get(1);
            BlockChannel second = order == Order.PRODUCER_FIRST ? ch.get(1) : ch.get(0);
            CompletableFuture<Void> firstClosed = first.close().toFuture();
            CompletableFuture<Void> secondClosed = second.close().toFuture();
            await().atMost(LIMIT).untilAsserted(() -> assertTrue(firstClosed.isDone() && secondClosed.isDone(),
                    () -> point + ", " + order + ": stuck: " + ch));
            firstClosed.join();
            secondClosed.join();
            checkEndedTyped(point, outcome);
            if (point == Point.STREAMING) closedFirstSays(order, outcome);
            BlockChannelHostTest.communicatorsStillWork(backend, comms);
            // the lane the channel held is free, and its counters balanced: a new channel on it carries every block
            List<BlockChannel> next = BlockChannelLanesTest.openOnEveryRank(comms, 0, 1, SLOTS, 64).block(LIMIT);
            streamIntact(next);
            BlockChannelLanesTest.closeAll(next).block(LIMIT);
            assertThrows(InvalidUsageException.class, () -> ch.get(0).send(Flux.empty()).block(LIMIT));
            assertThrows(InvalidUsageException.class, () -> ch.get(1).receive().blockLast(LIMIT));
            close();
            running.clear();
            source = List.of();
            comms = List.of();
        }
    }

    @ParameterizedTest
    @EnumSource(Point.class)
    void closingAOneRankChannelAtAnyPointCompletes(Point point) throws Exception {
        comms = backend.initAll(1).get(30, TimeUnit.SECONDS);
        List<BlockChannel> ch = BlockChannelLanesTest.openOnEveryRank(comms, 0, 0, SLOTS, 64).block(LIMIT);
        BlockChannel only = ch.get(0);
        Outcome outcome = reach(point, only, only);
        only.close().block(LIMIT);
        checkEndedTyped(point, outcome);
        BlockChannelHostTest.communicatorsStillWork(backend, comms);
        List<BlockChannel> next = BlockChannelLanesTest.openOnEveryRank(comms, 0, 0, SLOTS, 64).block(LIMIT);
        streamIntact(next);
        BlockChannelLanesTest.closeAll(next).block(LIMIT);
    }

    /** Brings the producer's and the consumer's sides to {@code point}. */
    Outcome reach(Point point, BlockChannel producer, BlockChannel consumer) {
        Outcome o = new Outcome();
        source = BlockChannelHostTest.blocks(backend, 20, 64, new ArrayList<>());
        AtomicLong received = new AtomicLong();
        List<ReceivedBlock> held = new CopyOnWriteArrayList<>();
        switch (point) {
            case UNUSED -> { }
            case CONSUMER_NEVER_SUBSCRIBED -> {
                o.producerUsed = true;
                sendAll(producer, Flux.fromIterable(source), o);
            }
            case PRODUCER_NEVER_SENT -> {
                o.consumerUsed = true;
                receiveAll(consumer, true, o, received, held);
            }
            case PRODUCER_ENDED_CONSUMER_NEVER_SUBSCRIBED -> {
                o.producerUsed = true;
                sendAll(producer, Flux.fromIterable(source.subList(0, 2)), o);
            }
            case CONSUMER_CANCELLED_PRODUCER_NEVER_SENT -> {
                o.consumerUsed = true;
                BaseSubscriber<ReceivedBlock> cancelling = new BaseSubscriber<>() {
                    @Override
                    protected void hookOnSubscribe(Subscription subscription) {
                        cancel();
                    }
                };
                consumer.receive().subscribe(cancelling);
                o.received.complete(0L);
            }
            case PRODUCER_CANCELLED_CONSUMER_NEVER_SUBSCRIBED -> {
                o.producerUsed = true;
                producer.send(Flux.never()).subscribe().dispose();
                o.sent.complete(0L);
            }
            case STREAMING -> {
                o.producerUsed = true;
                o.consumerUsed = true;
                sendAll(producer, Flux.fromIterable(source).repeat(), o);
                receiveAll(consumer, true, o, received, held);
                await().atMost(LIMIT).until(() -> received.get() >= 10);
            }
            case CONSUMER_HOLDS_EVERY_SLOT -> {
                o.producerUsed = true;
                o.consumerUsed = true;
                sendAll(producer, Flux.fromIterable(source), o);
                receiveAll(consumer, false, o, received, held);
                await().atMost(LIMIT).until(() -> held.size() == SLOTS);
            }
            case FINISHED -> {
                o.producerUsed = true;
                o.consumerUsed = true;
                sendAll(producer, Flux.fromIterable(source), o);
                receiveAll(consumer, true, o, received, held);
                await().atMost(LIMIT).until(() -> o.sent.isDone() && o.received.isDone());
                assertEquals(20L, o.sent.join());
                assertEquals(20L, o.received.join());
            }
        }
        return o;
    }

    void sendAll(BlockChannel producer, Flux<Buffer> blocks, Outcome o) {
        running.add(producer.send(blocks).subscribe(o.sent::complete, o.sent::completeExceptionally));
    }

    void receiveAll(BlockChannel consumer, boolean release, Outcome o, AtomicLong received, List<ReceivedBlock> held) {
        running.add(consumer.receive().doOnNext(b -> {
            received.incrementAndGet();
            if (release) b.release();
            else held.add(b);
        }).count().subscribe(o.received::complete, o.received::completeExceptionally));
    }

    /** Every side that ran has ended: normally where it had finished, else with a typed error. */
    static void checkEndedTyped(Point point, Outcome o) {
        List<CompletableFuture<Long>> sides = new ArrayList<>();
        if (o.producerUsed) sides.add(o.sent);
        if (o.consumerUsed) sides.add(o.received);
        for (CompletableFuture<Long> side : sides) {
            await().atMost(LIMIT).until(side::isDone);
            if (point == Point.FINISHED) {
                assertEquals(20L, side.join());
            } else if (side.isCompletedExceptionally()) {
                CompletionException e = assertThrows(CompletionException.class, side::join);
                assertInstanceOf(JcclException.class, e.getCause(), point + ": " + e.getCause());
            }
        }
    }

    /**
     * While both sides stream, the side whose rank closes first learns it from its own close, before anything of the
     * peer's close can reach it.
     */
    static void closedFirstSays(Order order, Outcome o) {
        CompletableFuture<Long> side = order == Order.PRODUCER_FIRST ? o.sent : o.received;
        String expected = order == Order.PRODUCER_FIRST ? "the channel was closed while its producer sent"
                : "the channel was closed while its consumer received";
        Throwable e = assertThrows(CompletionException.class, side::join).getCause();
        assertInstanceOf(ChannelClosedException.class, e, order + ": " + e);
        assertEquals(expected, e.getMessage(), order.toString());
    }

    /** A fresh channel's blocks all arrive, in order, intact. */
    void streamIntact(List<BlockChannel> ch) {
        List<byte[]> sent = new ArrayList<>();
        List<Buffer> blocks = BlockChannelHostTest.blocks(backend, 30, 64, sent);
        try {
            BlockChannel producer = ch.get(ch.get(0).producer());
            BlockChannel consumer = ch.get(ch.get(0).consumer());
            List<byte[]> got = new CopyOnWriteArrayList<>();
            Mono.zip(producer.send(Flux.fromIterable(blocks)), consumer.receive().doOnNext(b -> {
                got.add(BlockChannelHostTest.read(b));
                b.release();
            }).count()).block(LIMIT);
            assertEquals(sent.size(), got.size());
            for (int i = 0; i < sent.size(); i++) assertArrayEquals(sent.get(i), got.get(i), "block " + i);
        } finally {
            blocks.forEach(Buffer::close);
        }
    }

    /**
     * A rank closes its channels one after the other, waiting for each close, while its peer ends its send first and
     * closes afterwards: the first close must not hold the rank in its window's deregistration (a barrier its peer
     * reaches only after its send ended), or the second close, which the peer's send waits for, never comes. A
     * window is deregistered once every channel of the communicator was closed (found by ChannelChaosTest).
     */
    @Test
    void closingChannelsOneByOneNeverHoldsAPeerThatWaitsForALaterOne() throws Exception {
        comms = backend.initAll(2).get(30, TimeUnit.SECONDS);
        List<BlockChannel> first = BlockChannelLanesTest.openOnEveryRank(comms, 1, 1, SLOTS, 64).block(LIMIT);
        List<BlockChannel> second = BlockChannelLanesTest.openOnEveryRank(comms, 0, 1, 1, 64).block(LIMIT);
        source = BlockChannelHostTest.blocks(backend, 7, 64, new ArrayList<>());
        CompletableFuture<Void> rankZero = second.get(0).send(Flux.fromIterable(source)).materialize()
                .then(Mono.when(first.get(0).close(), second.get(0).close())).toFuture();
        first.get(1).close().block(LIMIT); // rank 1's side of the first channel was never used
        second.get(1).close().block(LIMIT); // its consumer never subscribed: the close answers the producer
        rankZero.get(20, TimeUnit.SECONDS);
        BlockChannelHostTest.communicatorsStillWork(backend, comms);
        await().atMost(LIMIT).untilAsserted(() -> {
            for (Communicator c : comms) assertEquals(List.of(), org.jccl.rma.OneSided.of(c).windows());
        });
    }

    /**
     * The communicators are closed (not the channel) while it streams: the channel's waits hold the drain, which ends
     * after the close timeout in an abort; both sides end typed, and the channel's close completes afterwards.
     */
    @Test
    void closingTheCommunicatorsWhileAChannelStreamsEndsBothSidesTyped() throws Exception {
        comms = backend.initAll(new int[] {-1, -1}, org.jccl.core.CommOptions.defaults()
                .withCloseTimeout(Duration.ofMillis(300))).get(30, TimeUnit.SECONDS);
        List<BlockChannel> ch = BlockChannelLanesTest.openOnEveryRank(comms, 0, 1, SLOTS, 64).block(LIMIT);
        source = BlockChannelHostTest.blocks(backend, 20, 64, new ArrayList<>());
        Outcome o = new Outcome();
        AtomicLong received = new AtomicLong();
        sendAll(ch.get(0), Flux.fromIterable(source).repeat(), o);
        receiveAll(ch.get(1), true, o, received, new CopyOnWriteArrayList<>());
        await().atMost(LIMIT).until(() -> received.get() >= 10);
        List<CompletableFuture<Void>> closing = new ArrayList<>();
        for (Communicator c : comms) closing.add(c.closeAsync());
        CompletableFuture.allOf(closing.toArray(new CompletableFuture<?>[0])).get(20, TimeUnit.SECONDS);
        o.producerUsed = true;
        o.consumerUsed = true;
        checkEndedTyped(Point.STREAMING, o);
        assertTrue(o.sent.isCompletedExceptionally() && o.received.isCompletedExceptionally());
        BlockChannelLanesTest.closeAll(ch).block(LIMIT);
    }

    /**
     * A one-rank channel whose consumer cancels mid-stream leaves no wait on the stream (the next all-reduce, issued
     * without closing the channel, completes) and no signal unconsumed (a new channel on the lane is intact); the
     * producer fails typed and cancels its upstream, which is not drained to its end.
     */
    @Test
    void aOneRankConsumerThatCancelsLeavesNothingOnTheStream() throws Exception {
        comms = backend.initAll(1).get(30, TimeUnit.SECONDS);
        BlockChannel only = BlockChannelLanesTest.openOnEveryRank(comms, 0, 0, SLOTS, 64).block(LIMIT).get(0);
        source = BlockChannelHostTest.blocks(backend, 100, 64, new ArrayList<>());
        AtomicBoolean upstreamCancelled = new AtomicBoolean();
        AtomicInteger taken = new AtomicInteger();
        CompletableFuture<Long> producer = only.send(Flux.fromIterable(source).doOnNext(b -> taken.incrementAndGet())
                .doOnCancel(() -> upstreamCancelled.set(true))).toFuture();
        List<Long> seen = only.receive().doOnNext(ReceivedBlock::release).map(ReceivedBlock::sequence).take(10)
                .collectList().block(LIMIT);
        assertEquals(10, seen.size());
        CompletionException e = assertThrows(CompletionException.class, () -> producer.orTimeout(20, TimeUnit.SECONDS).join());
        assertInstanceOf(ChannelClosedException.class, e.getCause(), String.valueOf(e.getCause()));
        await().atMost(LIMIT).untilTrue(upstreamCancelled);
        assertTrue(taken.get() < source.size(), "upstream drained to its end: " + taken.get());
        BlockChannelHostTest.communicatorsStillWork(backend, comms);
        assertEquals(0, comms.get(0).pendingCount());
        only.close().block(LIMIT);
        List<BlockChannel> next = BlockChannelLanesTest.openOnEveryRank(comms, 0, 0, SLOTS, 64).block(LIMIT);
        streamIntact(next);
        BlockChannelLanesTest.closeAll(next).block(LIMIT);
    }

    /** On one rank, a consumer that cancels before the producer starts makes the send fail at once, not hang. */
    @Test
    void aOneRankConsumerThatCancelsBeforeTheProducerStartsEndsTheSendAtOnce() throws Exception {
        comms = backend.initAll(1).get(30, TimeUnit.SECONDS);
        BlockChannel only = BlockChannelLanesTest.openOnEveryRank(comms, 0, 0, SLOTS, 64).block(LIMIT).get(0);
        source = BlockChannelHostTest.blocks(backend, 20, 64, new ArrayList<>());
        only.receive().subscribe(new BaseSubscriber<>() {
            @Override
            protected void hookOnSubscribe(Subscription subscription) {
                cancel();
            }
        });
        ChannelClosedException e = assertThrows(ChannelClosedException.class,
                () -> only.send(Flux.fromIterable(source)).timeout(LIMIT, Mono.error(() -> new AssertionError("stuck: " + only))).block());
        assertTrue(e.getMessage().contains("consumer cancelled"), e.getMessage());
        BlockChannelHostTest.communicatorsStillWork(backend, comms);
        only.close().block(LIMIT);
    }

    /** Reactive Streams rule 3.13: a cancelled subscriber of {@code receive()} is not kept reachable by the channel. */
    @Test
    void aCancelledReceiverIsNotKeptReachable() throws Exception {
        comms = backend.initAll(2).get(30, TimeUnit.SECONDS);
        List<BlockChannel> ch = BlockChannelLanesTest.openOnEveryRank(comms, 0, 1, SLOTS, 64).block(LIMIT);
        WeakReference<BaseSubscriber<ReceivedBlock>> subscriber = subscribeAndCancel(ch.get(1));
        await().atMost(LIMIT).untilAsserted(() -> {
            System.gc();
            assertNull(subscriber.get(), "the channel still holds its cancelled subscriber");
        });
        BlockChannelLanesTest.closeAll(ch).block(LIMIT);
    }

    private static WeakReference<BaseSubscriber<ReceivedBlock>> subscribeAndCancel(BlockChannel consumer) {
        BaseSubscriber<ReceivedBlock> s = new BaseSubscriber<>() {
        };
        consumer.receive().subscribe(s);
        s.cancel();
        return new WeakReference<>(s);
    }
}
