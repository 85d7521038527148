package org.jccl.rma.channel;

import java.util.concurrent.CompletableFuture;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.spi.Feature;
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
    private final CommunicatorChannels channels;
    private final Object lock = new Object();
    /** This rank's sides: made with the channel, so that close can end one that was never used. */
    private final @Nullable Producer producer;
    private final @Nullable Consumer consumer;
    /** The close's result: this rank's sides settled. */
    private @Nullable CompletableFuture<Void> closing;

    private BlockChannel(ReactiveCommunicator shape, int producerRank, int consumerRank, ChannelLayout layout,
                         ChannelLink link, Buffer memory, CommunicatorChannels channels) {
        this.shape = shape;
        this.producerRank = producerRank;
        this.consumerRank = consumerRank;
        this.layout = layout;
        this.link = link;
        this.memory = memory;
        this.channels = channels;
        int rank = shape.rank();
        this.producer = rank == producerRank ? new Producer(link, consumerRank, lock) : null;
        this.consumer = rank == consumerRank ? new Consumer(link, producerRank, lock) : null;
        if (producer != null && consumer != null) {
            producer.pairWith(consumer);
            consumer.pairWith(producer);
        }
    }

    /**
     * Opens a channel from {@code producer} to {@code consumer} with {@code slots} slots of {@code blockBytes}:
     * collective, every rank of {@code communicator} calls it in the same order (each registers the channel's window).
     * The channel takes a signal lane of its own among the channels between its two ranks (see
     * {@code docs/guides/one-sided-and-channel.md}): every rank opens and closes the same channels in the same order,
     * and a channel opened after another's close was called begins once that close has completed.
     *
     * @throws InvalidUsageException if the channels already open between the two ranks hold every signal lane the
     *                               library offers (NCCL 2.29: one); nothing is made
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
        for (Feature f : new Feature[] {Feature.COMM_WINDOW_REGISTER, Feature.PUT_SIGNAL, Feature.SIGNAL, Feature.WAIT_SIGNAL}) {
            comm.backend().features().require(f);
        }
        CommunicatorChannels channels = CommunicatorChannels.of(comm);
        ChannelLanes.Lane lane = channels.lanes.take(comm, rma.limits(), producer, consumer,
                "a block channel " + producer + " -> " + consumer);
        CompletableFuture<BlockChannel> opened = channels.opening()
                .thenCompose(v -> make(shape, producer, consumer, layout, rma, channels, lane));
        return opened.whenComplete((ch, error) -> {
            if (error != null) {
                channels.lanes.release(lane);
                channels.openFailed();
            }
        });
    }

    /** The window (its closing area cleared, then registered) and the pinned staging of a channel. */
    private static CompletableFuture<BlockChannel> make(ReactiveCommunicator shape, int producer, int consumer,
                                                        ChannelLayout layout, OneSided rma, CommunicatorChannels channels,
                                                        ChannelLanes.Lane lane) {
        Communicator comm = shape.communicator();
        Buffer memory = rma.allocate(layout.windowBytes());
        Buffer pinned = null;
        CompletableFuture<Window> registered;
        try {
            pinned = comm.backend().allocatePinned(ChannelLink.pinnedBytes(layout));
            // The producer reads the closing area after every credit, before any record may have landed: it must not
            // hold an old record. (Slot headers are always written by the put a wait covers before they are read.)
            // Cleared synchronously, before registration — a barrier, so no peer's record can land before the
            // clearing — and not on the stream, where another channel's waits could hold it while the peers wait in
            // the registration.
            memory.write(layout.closingOffset(), new long[(int) (2 * ChannelLayout.WORD / Long.BYTES)]);
            registered = rma.register(memory, WindowFlag.COLL_SYMMETRIC);
        } catch (RuntimeException e) {
            memory.close();
            if (pinned != null) pinned.close();
            throw e;
        }
        Buffer staging = pinned;
        return registered.handle((window, error) -> {
            if (error != null) {
                memory.close();
                staging.close();
                throw Errors.unwrap(error);
            }
            try {
                ChannelLink link = new ChannelLink(layout, rma, window, staging, lane);
                return new BlockChannel(shape, producer, consumer, layout, link, memory, channels);
            } catch (RuntimeException e) {
                window.closeAsync().whenComplete((v, closeError) -> {
                    memory.close();
                    staging.close();
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
            // jccl's bridge: an error or an empty end reaches the subscriber without waiting for its demand (Reactive
            // Streams 1.9: a rejected subscription signals onError after onSubscribe); Mono.fromFuture waits for it
            return ReactiveModules.mono(shape, () -> p.done).doOnCancel(p::abandon);
        });
    }

    /**
     * The blocks, in order, each once its data arrived; the consumer rank only. Release each block when the work that
     * reads it has been issued: the producer can then reuse its slot. Completes when the producer's blocks ended;
     * fails with {@link ChannelClosedException} if the producer failed or cancelled. Cancelling tells the producer.
     */
    public Flux<ReceivedBlock> receive() {
        return Flux.create(sink -> {
            synchronized (lock) {
                checkOpen("receive");
                if (consumer == null) throw new InvalidUsageException("rank " + shape.rank() + " is not the channel's consumer");
                channels.start(link.lane, producerRank == consumerRank, describe() + " consumer", consumer::claim,
                        consumer.settled());
                consumer.attach(sink);
            }
        }, FluxSink.OverflowStrategy.BUFFER);
    }

    private Producer claimProducer() {
        synchronized (lock) {
            checkOpen("send");
            if (producer == null) throw new InvalidUsageException("rank " + shape.rank() + " is not the channel's producer");
            channels.start(link.lane, producerRank == consumerRank, describe() + " producer", producer::claim,
                    producer.settled());
            return producer;
        }
    }

    /** How this channel is named in messages about its sides. */
    private String describe() {
        return "the block channel " + producerRank + " -> " + consumerRank + " (signal " + link.lane.signalIndex()
                + ", context " + link.lane.context() + ")'s";
    }

    private void checkOpen(String what) {
        if (closing != null) throw new InvalidUsageException("cannot " + what + " on " + this + ": it is closed");
    }

    /**
     * Ends this rank's sides of the channel; completes once they have ended the closing handshake with the peer, so
     * that nothing of the channel is owed or awaited any more. Collective: every rank closes every channel, in the same
     * order. May be called at any point: a side still running ends first, as if its subscriber cancelled
     * ({@link #send} or {@link #receive()} fails with {@link ChannelClosedException}, and blocks still held count as
     * released), and a side never used ends the same way, so that the peer's side gets its answer. The window is
     * deregistered (a barrier of every rank) and its memory freed once every channel opened on the communicator has
     * been closed, or with the communicator: a rank in that barrier could not answer a peer's channel. The close of the
     * last open channel completes once those deregistrations have, so that what the caller issues next comes after
     * them on every rank. Idempotent.
     */
    public Mono<Void> close() {
        return ReactiveModules.mono(shape, this::closeAsync);
    }

    private CompletableFuture<Void> closeAsync() {
        CompletableFuture<Void> settled;
        CompletableFuture<Void> done = new CompletableFuture<>();
        synchronized (lock) {
            if (closing != null) return closing;
            closing = done;
            settled = settleSides();
        }
        channels.lanes.release(link.lane);
        channels.closed(settled, () -> link.window.closeAsync().whenComplete((v, e) -> {
            memory.close();
            link.pinned.close();
        })).whenComplete((v, e) -> {
            if (e != null) done.completeExceptionally(e);
            else done.complete(null);
        });
        return done;
    }

    /**
     * Ends this rank's sides and completes once they ended the closing handshake: nothing of the channel is owed or
     * awaited any more. A side never used is taken now and ends the same way, so that the peer's side, waiting for
     * blocks or credits, gets its answer. On one rank the consumer ends first: it stops the producer and waits for
     * what was put.
     */
    private CompletableFuture<Void> settleSides() {
        CompletableFuture<Void> receiving = CompletableFuture.completedFuture(null);
        CompletableFuture<Void> sending = CompletableFuture.completedFuture(null);
        synchronized (lock) {
            if (consumer != null) {
                if (consumer.claim()) channels.live(link.lane, describe() + " consumer", consumer.settled());
                receiving = consumer.close();
            }
            if (producer != null) {
                if (producer.claim()) channels.live(link.lane, describe() + " producer", producer.settled());
                sending = producer.close();
            }
        }
        return CompletableFuture.allOf(sending, receiving);
    }

    @Override
    public String toString() {
        synchronized (lock) {
            return "BlockChannel[" + producerRank + " -> " + consumerRank + ", " + layout.slots() + " x "
                    + layout.blockBytes() + " bytes, signal " + link.lane.signalIndex() + " context " + link.lane.context()
                    + (producer == null ? "" : ", " + producer) + (consumer == null ? "" : ", " + consumer) + "]";
        }
    }
}
