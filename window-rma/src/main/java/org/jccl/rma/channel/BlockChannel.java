package org.jccl.rma.channel;

import java.util.concurrent.CompletableFuture;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.reactive.ReactiveCommunicator;
import org.jccl.reactive.ReactiveModules;
import org.jccl.rma.OneSided;
import org.jccl.rma.Window;
import org.jccl.rma.WindowFlag;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.publisher.Mono;

/**
 * A one-way stream of fixed-capacity blocks from a producer rank into a ring of slots in the consumer rank's memory,
 * over one-sided puts with signals — the KV-cache transfer of a prefill/decode pipeline. The producer's blocks become
 * puts into free slots; the consumer's {@link Flux} emits each block once its data arrived and hands the slot back
 * when released. Demand crosses the ranks through signals alone: a slow consumer slows the producer, memory stays
 * bounded by the ring, blocks arrive once each, in order.
 *
 * <pre>{@code
 * BlockChannel.open(comm, 0, 1, 8, blockBytes)          // every rank of comm (the window is collective)
 *     .flatMap(ch -> comm.rank() == 0 ? ch.send(blocks).then()
 *                                     : ch.receive().concatMap(b -> use(b).doFinally(s -> b.release())).then())
 * }</pre>
 *
 * <p>Either side ending early ends both: a producer whose upstream fails or whose result is cancelled makes the
 * consumer's Flux fail with {@link ChannelClosedException}; a consumer that cancels makes the producer's result fail
 * the same way. Both sides then settle their signals with each other, so the communicator stays usable. The
 * producer and consumer may be one rank (a rank that puts into its own window) or two; each side is used once.
 */
public final class BlockChannel {
    private final ReactiveCommunicator shape;
    private final int producerRank;
    private final int consumerRank;
    private final ChannelLayout layout;
    private final ChannelLink link;
    private final Buffer memory;
    private final Object lock = new Object();
    private @Nullable Producer producer;
    private @Nullable Consumer consumer;

    private BlockChannel(ReactiveCommunicator shape, int producerRank, int consumerRank, ChannelLayout layout,
                         ChannelLink link, Buffer memory) {
        this.shape = shape;
        this.producerRank = producerRank;
        this.consumerRank = consumerRank;
        this.layout = layout;
        this.link = link;
        this.memory = memory;
    }

    /**
     * Opens a channel from {@code producer} to {@code consumer} with {@code slots} slots of {@code blockBytes}:
     * collective, every rank of {@code communicator} calls it in the same order (each registers the channel's window).
     */
    public static Mono<BlockChannel> open(ReactiveCommunicator communicator, int producer, int consumer, int slots,
                                          long blockBytes) {
        Errors.requireArgument(communicator, "communicator");
        return ReactiveModules.mono(communicator,
                () -> openAsync(communicator, producer, consumer, slots, blockBytes), BlockChannel::closeAsync);
    }

    private static CompletableFuture<BlockChannel> openAsync(ReactiveCommunicator shape, int producer, int consumer,
                                                             int slots, long blockBytes) {
        Communicator comm = shape.communicator();
        for (int r : new int[] {producer, consumer}) {
            if (r < 0 || r >= comm.size()) throw new InvalidArgumentException("rank " + r + " is not in " + comm.describe());
        }
        if (slots < 1 || slots > 1 << 16) throw new InvalidArgumentException("slots must be 1..65536, not " + slots);
        if (blockBytes <= 0) throw new InvalidArgumentException("blockBytes must be positive, not " + blockBytes);
        ChannelLayout layout = new ChannelLayout(slots, blockBytes);
        OneSided rma = OneSided.of(comm);
        Buffer memory = rma.allocate(layout.windowBytes());
        Buffer pinned;
        try {
            pinned = comm.backend().allocatePinned(ChannelLink.pinnedBytes(layout));
        } catch (RuntimeException e) {
            memory.close();
            throw e;
        }
        // The window is cleared before it is registered: registration is a barrier, so no peer's put can land before
        // the clearing, which would wipe it.
        CompletableFuture<Window> registered;
        try {
            registered = comm.stream().fill(memory, 0, memory.byteSize())
                    .thenCompose(v -> rma.register(memory, WindowFlag.COLL_SYMMETRIC));
        } catch (RuntimeException e) {
            memory.close();
            pinned.close();
            throw e;
        }
        return registered.handle((window, error) -> {
            if (error != null) {
                memory.close();
                pinned.close();
                throw Errors.unwrap(error);
            }
            try {
                ChannelLink link = new ChannelLink(layout, rma, window, pinned);
                return new BlockChannel(shape, producer, consumer, layout, link, memory);
            } catch (RuntimeException e) {
                window.closeAsync().whenComplete((v, closeError) -> {
                    memory.close();
                    pinned.close();
                });
                throw e;
            }
        });
    }

    /** The rank that sends. */
    public int producer() {
        return producerRank;
    }

    /** The rank that receives. */
    public int consumer() {
        return consumerRank;
    }

    /** The slots in the consumer's ring: the most blocks in flight. */
    public int slots() {
        return layout.slots();
    }

    /** The most bytes one block holds. */
    public long blockBytes() {
        return layout.blockBytes();
    }

    /**
     * Sends every block of {@code blocks} (each at most {@link #blockBytes()} bytes, on this rank's device), in order;
     * the producer rank only. Blocks are requested as slots free up, at most {@link #slots()} in flight; a block's
     * memory may be reused once {@link #slots()} later blocks were requested (it was copied into the channel's window
     * by then). Emits the number of blocks sent once the consumer has confirmed the
     * end; fails with the upstream's error, or {@link ChannelClosedException} if the consumer cancelled.
     */
    public Mono<Long> send(Publisher<Buffer> blocks) {
        Errors.requireArgument(blocks, "blocks");
        return Mono.defer(() -> {
            Producer p = claimProducer();
            Flux.from(blocks).subscribe(p);
            return Mono.fromFuture(p.done, true).doOnCancel(p::abandon);
        });
    }

    /**
     * The blocks, in order, each once its data arrived; the consumer rank only. Release each block when the work that
     * reads it has been issued: the producer can then reuse its slot. Completes when the producer's blocks ended;
     * fails with {@link ChannelClosedException} if the producer failed or cancelled. Cancelling tells the producer.
     */
    public Flux<ReceivedBlock> receive() {
        return Flux.create(sink -> claimConsumer().start(sink), FluxSink.OverflowStrategy.BUFFER);
    }

    private Producer claimProducer() {
        synchronized (lock) {
            if (shape.rank() != producerRank) throw new InvalidUsageException("rank " + shape.rank() + " is not the channel's producer");
            if (producer != null) throw new InvalidUsageException("the channel's producer side is already in use");
            boolean self = producerRank == consumerRank;
            producer = new Producer(link, consumerRank, self ? consumerSide() : null, lock);
            if (self) consumerSide().pairWith(producer);
            return producer;
        }
    }

    private Consumer claimConsumer() {
        synchronized (lock) {
            if (shape.rank() != consumerRank) throw new InvalidUsageException("rank " + shape.rank() + " is not the channel's consumer");
            Consumer c = consumerSide();
            if (c.started()) throw new InvalidUsageException("the channel's consumer side is already in use");
            return c;
        }
    }

    /** The consumer side, made on first use; on one rank it is made with the producer, which needs it. */
    private Consumer consumerSide() {
        if (consumer == null) consumer = new Consumer(link, producerRank, lock);
        return consumer;
    }

    /**
     * Ends this rank's side of the channel, then deregisters the channel's window (collective: every rank closes) and
     * frees its memory. A side still running ends first, as if its subscriber cancelled: {@link #send} or
     * {@link #receive()} fails with {@link ChannelClosedException}, and blocks still held count as released.
     * Idempotent.
     */
    public Mono<Void> close() {
        return ReactiveModules.mono(shape, this::closeAsync);
    }

    private CompletableFuture<Void> closeAsync() {
        return settleSides().thenCompose(v -> link.window.closeAsync()).whenComplete((v, e) -> {
            memory.close();
            link.pinned.close();
        });
    }

    /**
     * Completes once this rank's sides ended the closing handshake. The window's deregistration is a barrier of every
     * rank on the launch thread: a closing record or credit issued after it would queue behind it while the peer,
     * still waiting for that signal, never reaches its own close.
     */
    private CompletableFuture<Void> settleSides() {
        Producer p;
        Consumer c;
        synchronized (lock) {
            p = producer;
            c = consumer;
        }
        CompletableFuture<Void> sending = p == null ? CompletableFuture.completedFuture(null) : p.close();
        CompletableFuture<Void> receiving = c == null ? CompletableFuture.completedFuture(null) : c.close();
        return CompletableFuture.allOf(sending, receiving);
    }

    @Override
    public String toString() {
        synchronized (lock) {
            return "BlockChannel[" + producerRank + " -> " + consumerRank + ", " + layout.slots() + " x "
                    + layout.blockBytes() + " bytes" + (producer == null ? "" : ", " + producer)
                    + (consumer == null ? "" : ", " + consumer) + "]";
        }
    }
}
