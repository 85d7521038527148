package org.jccl.rma.channel;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.Jccl;
import org.jccl.reactive.ReactiveCommunicator;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;

/**
 * What the Reactive Streams TCK classes of the channel share: channels of a host rank into its own window, each on a
 * one-rank communicator of its own (a stochastic test asks for more publishers than a communicator has lanes), all
 * closed after each test method; and 8-byte blocks from one staging buffer.
 */
final class ChannelTckFixture implements AutoCloseable {
    static final Duration LIMIT = Duration.ofSeconds(20);
    static final int MAX_BLOCKS = 1024;
    static final int BLOCK = 8;
    private final Backend backend = Jccl.backend(BackendKind.HOST);
    final Buffer staging;
    private final List<Communicator> communicators = new ArrayList<>();
    private final List<BlockChannel> open = new ArrayList<>();
    private final List<Disposable> running = new ArrayList<>();

    ChannelTckFixture() {
        staging = backend.allocate(-1, (long) MAX_BLOCKS * BLOCK);
    }

    /** A channel of a rank into itself, on a communicator of its own; both closed after the test method. */
    synchronized BlockChannel open(int slots) {
        Communicator c;
        try {
            c = backend.initAll(1).get(30, TimeUnit.SECONDS).get(0);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        communicators.add(c);
        BlockChannel ch = BlockChannel.open(ReactiveCommunicator.of(c), 0, 0, slots, BLOCK).block(LIMIT);
        open.add(ch);
        return ch;
    }

    /** Block {@code i} of the staging buffer. */
    Buffer block(long i) {
        return staging.slice(i % MAX_BLOCKS * BLOCK, BLOCK);
    }

    /** {@code n} blocks, or endless ones for {@code Long.MAX_VALUE}. */
    Flux<Buffer> blocks(long n) {
        return Flux.generate(() -> 0L, (i, sink) -> {
            if (i < n) sink.next(block(i));
            else sink.complete();
            return i + 1;
        });
    }

    /** Receives every block of {@code ch}, releasing each, until the test method ends. */
    synchronized void drain(BlockChannel ch) {
        running.add(ch.receive().doOnNext(ReceivedBlock::release).subscribe(b -> { }, e -> { }));
    }

    /** After each test method: every channel it opened is closed. */
    synchronized void closeChannels() {
        running.forEach(Disposable::dispose);
        running.clear();
        Flux.fromIterable(open).flatMap(BlockChannel::close).blockLast(LIMIT);
        open.clear();
        communicators.forEach(Communicator::close);
        communicators.clear();
    }

    @Override
    public void close() {
        closeChannels();
        staging.close();
    }
}
