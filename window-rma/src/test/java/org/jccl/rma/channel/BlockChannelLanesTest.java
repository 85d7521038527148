package org.jccl.rma.channel;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.Jccl;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.spi.DriverConstants;
import org.jccl.core.spi.OneSidedLimits;
import org.jccl.reactive.ReactiveCommunicator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;

/**
 * Several block channels on one communicator: each takes a signal lane (signal index, context) of its own among the
 * channels between its two ranks, so channels streaming at the same time never consume each other's signals; one
 * more than the library's lanes is refused, typed, before anything is made.
 */
class BlockChannelLanesTest {
    static final Duration LIMIT = Duration.ofSeconds(30);
    /** The host backend's lanes: 4 signal indices × 2 contexts. */
    static final int HOST_LANES = 8;
    final Backend backend = Jccl.backend(BackendKind.HOST);
    List<Communicator> comms = List.of();
    final List<Buffer> buffers = new ArrayList<>();

    @AfterEach
    void close() {
        buffers.forEach(Buffer::close);
        comms.forEach(Communicator::close);
    }

    /** A channel {@code from -> to} opened on every rank; the ranks' channels in rank order. */
    static Mono<List<BlockChannel>> openOnEveryRank(List<Communicator> comms, int from, int to, int slots, long blockBytes) {
        return Flux.fromIterable(comms).map(ReactiveCommunicator::of)
                .flatMapSequential(c -> BlockChannel.open(c, from, to, slots, blockBytes)).collectList();
    }

    /**
     * Streams {@code count} blocks of known content through {@code channel} (its ranks' sides) and checks each; the
     * blocks carry {@code tag} so that a block of another channel is told apart.
     */
    Mono<Void> stream(List<BlockChannel> channel, int count, int tag) {
        BlockChannel producer = channel.get(channel.get(0).producer());
        BlockChannel consumer = channel.get(channel.get(0).consumer());
        int bytes = (int) producer.blockBytes();
        Buffer staging = backend.allocate(-1, (long) bytes * count);
        buffers.add(staging);
        for (int i = 0; i < count; i++) staging.write((long) i * bytes, ByteBuffer.wrap(content(tag, i, bytes)));
        Mono<Long> send = producer.send(Flux.range(0, count).map(i -> staging.slice((long) i * bytes, bytes)));
        Mono<Long> receive = consumer.receive().publishOn(Schedulers.boundedElastic()).map(b -> {
            byte[] got = new byte[(int) b.data().byteSize()];
            b.data().read(0, ByteBuffer.wrap(got));
            assertArrayEquals(content(tag, (int) b.sequence(), bytes), got, "channel " + tag + ", block " + b.sequence());
            b.release();
            return b.sequence();
        }).count();
        return Mono.zip(send, receive).timeout(LIMIT, Mono.error(() -> new AssertionError("stuck: " + channel))).doOnNext(t -> {
            assertEquals(count, t.getT1(), "sent by channel " + tag);
            assertEquals(count, t.getT2(), "received by channel " + tag);
        }).then();
    }

    static byte[] content(int tag, int block, int bytes) {
        byte[] b = new byte[bytes];
        for (int i = 0; i < bytes; i++) b[i] = (byte) (tag * 31 + block * 7 + i);
        return b;
    }

    static Mono<Void> closeAll(List<BlockChannel> channel) {
        return Flux.fromIterable(channel).flatMap(BlockChannel::close).then();
    }

    /**
     * Two channels of a rank into itself (the same pair of ranks, so on lanes of their own) stream at the same time,
     * beside a channel to the other rank: every block intact, every signal consumed, so the communicators still work.
     * On one lane they consumed each other's signals ("block 7 expected, but its slot holds block 11").
     */
    @Test
    void channelsOnLanesOfTheirOwnStreamingAtOnceDeliverEveryBlockIntact() throws Exception {
        comms = backend.initAll(2).get(30, TimeUnit.SECONDS);
        List<BlockChannel> first = openOnEveryRank(comms, 0, 0, 4, 600).block(LIMIT);
        List<BlockChannel> second = openOnEveryRank(comms, 0, 0, 4, 600).block(LIMIT);
        List<BlockChannel> third = openOnEveryRank(comms, 0, 0, 2, 1000).block(LIMIT);
        List<BlockChannel> across = openOnEveryRank(comms, 0, 1, 3, 600).block(LIMIT);
        Mono.when(stream(first, 300, 1), stream(second, 300, 2), stream(third, 200, 3), stream(across, 200, 4)).block(LIMIT);
        BlockChannelHostTest.communicatorsStillWork(backend, comms);
        Flux.fromIterable(List.of(first, second, third, across)).flatMap(BlockChannelLanesTest::closeAll).blockLast(LIMIT);
        BlockChannelHostTest.communicatorsStillWork(backend, comms);
    }

    /**
     * Two channels between the same two ranks on one communicator stream one after the other: while the first
     * streams, starting the second — in either direction, on either rank — is refused, typed, naming the shared stream
     * and the way out (streaming both would let each one's waits hold the other's signals for ever); once the first
     * ended, the second streams intact, and so does the first again after it.
     */
    @Test
    void aSecondChannelBetweenTheSameRanksStartsOnceTheFirstEnded() throws Exception {
        comms = backend.initAll(2).get(30, TimeUnit.SECONDS);
        List<BlockChannel> first = openOnEveryRank(comms, 0, 1, 4, 600).block(LIMIT);
        List<BlockChannel> second = openOnEveryRank(comms, 0, 1, 4, 600).block(LIMIT);
        List<BlockChannel> back = openOnEveryRank(comms, 1, 0, 4, 600).block(LIMIT);
        Sinks.Many<Buffer> slowSource = Sinks.many().unicast().onBackpressureBuffer();
        Buffer block = backend.allocate(-1, 600);
        buffers.add(block);
        CompletableFuture<Long> sending = first.get(0).send(slowSource.asFlux()).toFuture();
        CompletableFuture<Long> receiving = first.get(1).receive().doOnNext(ReceivedBlock::release)
                .count().toFuture();
        slowSource.tryEmitNext(block);
        for (InvalidUsageException refused : List.of(
                assertThrows(InvalidUsageException.class, () -> second.get(0).send(Flux.just(block)).block(LIMIT)),
                assertThrows(InvalidUsageException.class, () -> second.get(1).receive().blockLast(LIMIT)),
                assertThrows(InvalidUsageException.class, () -> back.get(1).send(Flux.just(block)).block(LIMIT)),
                assertThrows(InvalidUsageException.class, () -> back.get(0).receive().blockLast(LIMIT)))) {
            assertTrue(refused.getMessage().contains("share its stream"), refused.getMessage());
            assertTrue(refused.getMessage().contains("Communicator.split"), refused.getMessage());
        }
        slowSource.tryEmitComplete();
        assertEquals(1L, sending.get(30, TimeUnit.SECONDS));
        assertEquals(1L, receiving.get(30, TimeUnit.SECONDS));
        stream(second, 100, 2).block(LIMIT);
        stream(back, 100, 3).block(LIMIT);
        Mono.when(closeAll(first), closeAll(second), closeAll(back)).block(LIMIT);
        BlockChannelHostTest.communicatorsStillWork(backend, comms);
    }

    /**
     * Channels in both directions stream at once on communicators of their own: on one communicator the consumer's
     * waits for one direction would hold the other direction's puts on the shared stream.
     */
    @Test
    void aChannelEachWayStreamsAtOnceOnCommunicatorsOfTheirOwn() throws Exception {
        comms = backend.initAll(2).get(30, TimeUnit.SECONDS);
        List<Communicator> backward = Flux.fromIterable(comms).flatMapSequential(c -> Mono.fromFuture(c.split(0, c.rank())))
                .collectList().block(LIMIT);
        try {
            List<BlockChannel> forth = openOnEveryRank(comms, 0, 1, 4, 600).block(LIMIT);
            List<BlockChannel> back = openOnEveryRank(backward, 1, 0, 4, 600).block(LIMIT);
            Mono.when(stream(forth, 200, 1), stream(back, 200, 2)).block(LIMIT);
            Mono.when(closeAll(forth), closeAll(back)).block(LIMIT);
            BlockChannelHostTest.communicatorsStillWork(backend, comms);
            BlockChannelHostTest.communicatorsStillWork(backend, backward);
        } finally {
            backward.forEach(Communicator::close);
        }
    }

    /**
     * One more channel between two ranks than the library has lanes is refused with a typed error that names the
     * limit and the way out, and nothing is made; channels between other ranks still open; a closed channel's lane is
     * taken again (its close called, not awaited) and carries intact blocks.
     */
    @Test
    void oneChannelMoreThanTheLanesIsRefusedAndAClosedChannelsLaneIsReused() throws Exception {
        comms = backend.initAll(3).get(30, TimeUnit.SECONDS);
        List<List<BlockChannel>> open = new ArrayList<>();
        for (int i = 0; i < HOST_LANES; i++) open.add(openOnEveryRank(comms, i % 2, 1 - i % 2, 2, 64).block(LIMIT));
        for (Communicator c : comms) {
            InvalidUsageException e = assertThrows(InvalidUsageException.class,
                    () -> BlockChannel.open(ReactiveCommunicator.of(c), 1, 0, 2, 64).block(LIMIT));
            assertTrue(e.getMessage().contains("4 signal index(es) × 2 context(s) = 8 lane(s)"), e.getMessage());
            assertTrue(e.getMessage().contains("Communicator.split"), e.getMessage());
            assertEquals(0, c.pendingCount());
        }
        List<BlockChannel> otherPair = openOnEveryRank(comms, 0, 2, 2, 64).block(LIMIT);
        stream(otherPair, 20, 9).block(LIMIT);
        // close one (not awaited) and open again on every rank: the new channel takes the freed lane once the close
        // completed, so the old channel's last signals are never the new one's
        List<BlockChannel> reopened = Flux.fromIterable(comms).index().flatMapSequential(rank -> {
            Mono<Void> closing = open.get(3).get(rank.getT1().intValue()).close();
            closing.subscribe();
            return BlockChannel.open(ReactiveCommunicator.of(rank.getT2()), 1, 0, 2, 64);
        }).collectList().block(LIMIT);
        stream(reopened, 50, 4).block(LIMIT);
        stream(open.get(0), 50, 0).block(LIMIT);
        open.remove(3);
        open.add(reopened);
        open.add(otherPair);
        Flux.fromIterable(open).flatMap(BlockChannelLanesTest::closeAll).blockLast(LIMIT);
        BlockChannelHostTest.communicatorsStillWork(backend, comms);
    }

    /** NCCL 2.29's limits (one signal index, one context): a second channel between the same ranks is refused. */
    @Test
    void withOneLaneASecondChannelBetweenTheSameRanksIsRefusedNamingTheLimit() throws Exception {
        comms = backend.initAll(2).get(30, TimeUnit.SECONDS);
        OneSidedLimits nccl = new OneSidedLimits(1, 1, true, DriverConstants.WIN_COLL_SYMMETRIC,
                DriverConstants.WIN_REQUIRED_ALIGNMENT, true);
        ChannelLanes lanes = new ChannelLanes();
        ChannelLanes.Lane first = lanes.take(comms.get(0), nccl, 0, 1, "channel A");
        assertEquals(0, first.signalIndex());
        assertEquals(0, first.context());
        InvalidUsageException e = assertThrows(InvalidUsageException.class, () -> lanes.take(comms.get(0), nccl, 1, 0, "channel B"));
        assertTrue(e.getMessage().contains("1 signal index(es) × 1 context(s) = 1 lane(s), all held by [channel A]"), e.getMessage());
        assertTrue(e.getMessage().contains("Communicator.split"), e.getMessage());
        ChannelLanes.Lane self = lanes.take(comms.get(0), nccl, 0, 0, "channel 0 -> 0");
        assertEquals(0, self.number(), "another pair of ranks has lanes of its own");
        lanes.release(first);
        assertEquals(0, lanes.take(comms.get(0), nccl, 1, 0, "channel B").number(), "a released lane is free again");
    }
}
