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

    @AfterEach
    void close() {
        source.forEach(Buffer::close);
        comms.forEach(Communicator::close);
    }

    List<BlockChannel> open(int slots) throws Exception {
        comms = backend.initAll(2).get(30, TimeUnit.SECONDS);
        return Flux.fromIterable(comms).map(ReactiveCommunicator::of)
                .flatMapSequential(c -> BlockChannel.open(c, 0, 1, slots, 64)).collectList().block(LIMIT);
    }

    /** The producer sends {@code count} blocks and closes its channel after the send, however it ended. */
    CompletableFuture<Long> sendThenClose(BlockChannel ch, int count) {
        source = BlockChannelHostTest.blocks(backend, count, 64, new ArrayList<>());
        return ch.send(Flux.fromIterable(source)).materialize().flatMap(result -> ch.close().thenReturn(result))
                .<Long>dematerialize().toFuture();
    }

    static void awaitBoth(CompletableFuture<?> producer, CompletableFuture<?> consumer, List<BlockChannel> ch) {
        await().atMost(LIMIT).untilAsserted(() -> assertTrue(producer.isDone() && consumer.isDone(), () -> "stuck: " + ch));
    }

    /**
     * The consumer closes from its completion signal, on the thread that completes the stream: the closing record
     * must already be on its way, or the window's deregistration (a barrier) holds it back while the producer waits
     * for it.
     */
    @Test
    void aConsumerThatClosesAsSoonAsItsStreamCompletesLetsTheProducerFinish() throws Exception {
        List<BlockChannel> ch = open(4);
        CompletableFuture<Long> producer = sendThenClose(ch.get(0), 20);
        CompletableFuture<Void> consumer = ch.get(1).receive().doOnNext(ReceivedBlock::release).then(ch.get(1).close())
                .toFuture();
        awaitBoth(producer, consumer, ch);
        assertEquals(20L, producer.join());
        consumer.join();
    }

    /** Blocks still held at close count as released: close sends their credits and the closing record. */
    @Test
    void closingWithBlocksStillHeldLetsTheProducerFinish() throws Exception {
        List<BlockChannel> ch = open(4);
        CompletableFuture<Long> producer = sendThenClose(ch.get(0), 10);
        List<ReceivedBlock> held = ch.get(1).receive().filter(b -> {
            if (b.sequence() < 7) b.release();
            return b.sequence() >= 7;
        }).collectList().block(LIMIT);
        assertEquals(3, held.size());
        CompletableFuture<Void> consumer = ch.get(1).close().toFuture();
        awaitBoth(producer, consumer, ch);
        assertEquals(10L, producer.join());
        consumer.join();
    }

    /** Closing the consumer while it still receives ends its stream and the producer's with a typed error. */
    @Test
    void closingTheConsumerWhileItReceivesEndsBothSidesWithATypedError() throws Exception {
        List<BlockChannel> ch = open(4);
        CompletableFuture<Long> producer = sendThenClose(ch.get(0), 1000);
        AtomicLong received = new AtomicLong();
        CompletableFuture<Void> receiving = ch.get(1).receive().doOnNext(b -> {
            received.incrementAndGet();
            b.release();
        }).then().toFuture();
        await().atMost(LIMIT).until(() -> received.get() >= 5);
        CompletableFuture<Void> consumer = ch.get(1).close().toFuture();
        awaitBoth(producer, consumer, ch);
        consumer.join();
        assertTrue(receiving.isDone(), "the consumer's stream ended");
        for (CompletableFuture<?> side : List.of(producer, receiving)) {
            CompletionException e = assertThrows(CompletionException.class, side::join);
            assertInstanceOf(ChannelClosedException.class, e.getCause(), String.valueOf(e.getCause()));
        }
    }
}
