package org.jccl.rma.channel;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.Jccl;
import org.jccl.reactive.ReactiveCommunicator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

/**
 * Closing a block channel while its peer still waits: close settles this rank's side of the handshake (the closing
 * record and the credits the peer waits for) before it deregisters the window, which waits for the peer to close.
 */
class BlockChannelCloseTest {
    static final Duration LIMIT = Duration.ofSeconds(20);
    final Backend backend = Jccl.backend(BackendKind.HOST);
    List<Communicator> comms = List.of();
    List<Buffer> source = List.of();
    List<BlockChannel> ch = List.of();
    CompletableFuture<Long> producer = new CompletableFuture<>();

    @AfterEach
    void close() {
        source.forEach(Buffer::close);
        comms.forEach(Communicator::close);
    }

    /**
     * Opens a channel of 4 slots between two ranks; its producer sends {@code count} blocks and closes its side after
     * the send, however it ended, as a user would; {@link #producer} is its result. Returns the consumer's channel.
     */
    BlockChannel openAndSend(int count) throws Exception {
        comms = backend.initAll(2).get(30, TimeUnit.SECONDS);
        ch = Flux.fromIterable(comms).map(ReactiveCommunicator::of)
                .flatMapSequential(c -> BlockChannel.open(c, 0, 1, 4, 64)).collectList().block(LIMIT);
        source = BlockChannelHostTest.blocks(backend, count, 64, new ArrayList<>());
        BlockChannel sender = ch.get(0);
        producer = sender.send(Flux.fromIterable(source)).materialize()
                .flatMap(result -> sender.close().thenReturn(result)).<Long>dematerialize().toFuture();
        return ch.get(1);
    }

    /**
     * Both sides finish and the consumer's close succeeds; every signal was consumed on both ranks, so the
     * communicators still work.
     */
    void awaitBothClosed(CompletableFuture<Void> consumerClose) throws Exception {
        await().atMost(LIMIT).untilAsserted(() -> assertTrue(producer.isDone() && consumerClose.isDone(), () -> "stuck: " + ch));
        consumerClose.join();
        BlockChannelHostTest.communicatorsStillWork(backend, comms);
    }

    /**
     * The consumer closes from its completion signal, on the thread that completes the stream: the closing record
     * must already be on its way, or the window's deregistration (a barrier) holds it back while the producer waits
     * for it.
     */
    @Test
    void aConsumerThatClosesAsSoonAsItsStreamCompletesLetsTheProducerFinish() throws Exception {
        BlockChannel receiver = openAndSend(20);
        awaitBothClosed(receiver.receive().doOnNext(ReceivedBlock::release).then(receiver.close()).toFuture());
        assertEquals(20L, producer.join());
    }

    /** Blocks still held at close count as released: close sends their credits and the closing record. */
    @Test
    void closingWithBlocksStillHeldLetsTheProducerFinish() throws Exception {
        BlockChannel receiver = openAndSend(10);
        List<ReceivedBlock> held = receiver.receive().filter(b -> {
            if (b.sequence() < 7) b.release();
            return b.sequence() >= 7;
        }).collectList().block(LIMIT);
        assertEquals(3, held.size());
        awaitBothClosed(receiver.close().toFuture());
        assertEquals(10L, producer.join());
    }

    /** Closing the consumer while it still receives ends its stream and the producer's with a typed error. */
    @Test
    void closingTheConsumerWhileItReceivesEndsBothSidesWithATypedError() throws Exception {
        BlockChannel receiver = openAndSend(1000);
        AtomicLong received = new AtomicLong();
        // From the fifth block on the consumer keeps what it gets, so the producer runs out of credits and the stream
        // cannot end before the close (on a 16-core host all 1000 blocks once went through before it).
        CompletableFuture<Void> receiving = receiver.receive().doOnNext(b -> {
            if (received.incrementAndGet() < 5) b.release();
        }).then().toFuture();
        await().atMost(LIMIT).until(() -> received.get() >= 5);
        awaitBothClosed(receiver.close().toFuture());
        assertTrue(receiving.isDone(), "the consumer's stream ended");
        for (CompletableFuture<?> side : List.of(producer, receiving)) {
            CompletionException e = assertThrows(CompletionException.class, side::join);
            assertInstanceOf(ChannelClosedException.class, e.getCause(), String.valueOf(e.getCause()));
        }
    }

    /** On one rank, closing while the consumer holds every slot stops the producer's send too. */
    @Test
    void closingOneRanksChannelWhileItsSlotsAreHeldEndsBothSides() throws Exception {
        comms = backend.initAll(1).get(30, TimeUnit.SECONDS);
        BlockChannel only = BlockChannel.open(ReactiveCommunicator.of(comms.get(0)), 0, 0, 4, 64).block(LIMIT);
        ch = List.of(only);
        source = BlockChannelHostTest.blocks(backend, 10, 64, new ArrayList<>());
        producer = only.send(Flux.fromIterable(source)).toFuture();
        List<ReceivedBlock> held = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> receiving = only.receive().doOnNext(held::add).then().toFuture();
        await().atMost(LIMIT).until(() -> held.size() == 4);
        awaitBothClosed(only.close().toFuture());
        for (CompletableFuture<?> side : List.of(producer, receiving)) {
            CompletionException e = assertThrows(CompletionException.class, side::join);
            assertInstanceOf(ChannelClosedException.class, e.getCause(), String.valueOf(e.getCause()));
        }
    }
}
