package org.jccl.rma.channel;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import org.jccl.core.Buffer;
import org.jccl.core.Work;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.module.StreamOperation;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;

/**
 * The producer's side: takes blocks from upstream as fast as puts complete and slots are free, and ends with the
 * closing handshake that leaves both ranks' signal counters balanced (every signal sent is waited for), so the
 * communicator stays usable.
 *
 * <p>Per block {@code i}: once {@code i >= slots}, a wait for one credit (the consumer released block
 * {@code i - slots}) and a read of the closing area; then the header and the block into this rank's slot, and one
 * put of both into the consumer's slot. All on the stream, so the GPU enforces the credit; the host only bounds the
 * blocks in flight to {@code slots}. When upstream ends (or fails, or the result is cancelled) a last header says
 * so, followed by {@code slots - 1} fillers (signals without data) for the waits the consumer issued beyond it; the
 * consumer answers with a closing record (FIN, or CANCEL if it stopped early) followed by {@code slots} spare
 * credits, which covers every credit wait already issued; the producer then waits for the credits still owed, and
 * acknowledges a CANCEL with a last header and its fillers.
 */
final class Producer extends BaseSubscriber<Buffer> {
    private final ChannelLink link;
    private final int consumer;
    private final @Nullable Consumer local;
    private final Object lock;
    private final int slots;
    final CompletableFuture<Long> done = new CompletableFuture<>();

    private long granted;
    private long sent;
    private long blocks;
    private long putsDone;
    /** Headers staged through the pinned records, in order: record {@code staged % slots} is the next. */
    private long staged;
    /** Headers staged but waiting for their pinned record to be free (its previous put still pending). */
    private final ArrayDeque<Runnable> waitingForRecord = new ArrayDeque<>();
    private long creditWaits;
    private int recordsPending;
    private boolean terminal;
    private boolean closing;
    private @Nullable Throwable failure;

    Producer(ChannelLink link, int consumer, @Nullable Consumer local, Object lock) {
        this.link = link;
        this.consumer = consumer;
        this.local = local;
        this.lock = lock;
        this.slots = link.layout.slots();
    }

    /** Data signals issued to the consumer so far (a consumer on this rank waits only for those). */
    long sent() {
        synchronized (lock) {
            return sent;
        }
    }

    @Override
    protected void hookOnSubscribe(Subscription subscription) {
        maybeRequest();
    }

    @Override
    protected void hookOnNext(Buffer block) {
        synchronized (lock) {
            if (terminal) return;
            if (block.byteSize() > link.layout.blockBytes()) {
                failure = new InvalidArgumentException("block " + blocks + " has " + block.byteSize() + " bytes; the"
                        + " channel's blocks hold at most " + link.layout.blockBytes());
                cancel();
                end(ChannelLayout.FAILED);
                return;
            }
            try {
                send(block, 0, true);
            } catch (RuntimeException e) {
                failure = e;
                cancel();
                terminal = true;
                done.completeExceptionally(e);
            }
        }
    }

    @Override
    protected void hookOnComplete() {
        synchronized (lock) {
            end(ChannelLayout.END);
        }
    }

    @Override
    protected void hookOnError(Throwable error) {
        synchronized (lock) {
            if (failure == null) failure = error;
            end(ChannelLayout.FAILED);
        }
    }

    /** The result's subscriber went away: tell the consumer and close cleanly. */
    void abandon() {
        stop(new ChannelClosedException("the producer's subscriber cancelled"));
    }

    /**
     * Settles this side before the channel's window is deregistered: a send still running is stopped as if its
     * result were cancelled. Completes when the closing handshake has ended, however the send ended.
     */
    CompletableFuture<Void> close() {
        synchronized (lock) {
            if (!terminal) stop(new ChannelClosedException("the channel was closed while its producer sent"));
        }
        return done.handle((blocks, error) -> null);
    }

    private void stop(ChannelClosedException why) {
        synchronized (lock) {
            if (failure == null) failure = why;
            cancel();
            end(ChannelLayout.CANCELLED);
        }
    }

    /** The consumer on this rank cancelled: stop taking blocks; it consumes the signals already sent. */
    void consumerCancelled() {
        synchronized (lock) {
            if (terminal) return;
            terminal = true;
            closing = true;
            cancel();
            if (failure == null) failure = new ChannelClosedException("the consumer cancelled");
            done.completeExceptionally(failure);
        }
    }

    /** The last header, then the closing handshake (or, on one rank, nothing more). */
    private void end(long flags) {
        if (terminal) return;
        terminal = true;
        whenRecordFree(() -> {
            Work last = send(null, flags, true);
            Work filled = fillers();
            if (filled != null) last = filled;
            if (local != null) {
                last.whenComplete((v, e) -> finish(e));
            } else if (recordsPending == 0) {
                creditStep();
            }
        });
    }

    /**
     * The {@code slots - 1} signals without data that follow a last header or an acknowledgement: the consumer may
     * have issued that many waits beyond it (it waits at most {@code slots} ahead of its releases), and after such a
     * header it tops its waits up to exactly that many, so both sides' counts meet. Null on one rank, where the
     * consumer waits only for puts already issued.
     */
    private @Nullable Work fillers() {
        if (local != null || slots == 1) return null;
        sent += slots - 1;
        return link.signals(consumer, slots - 1);
    }

    /**
     * Runs {@code staging} once the pinned header record of the next signal is free: the put that last used it has
     * completed. Blocks are only requested when that holds; the last header and the acknowledgement may wait here.
     */
    private void whenRecordFree(Runnable staging) {
        if (waitingForRecord.isEmpty() && recordFree()) staging.run();
        else waitingForRecord.add(staging);
    }

    /**
     * Whether the next header may be staged: the put that last used its pinned record has completed and, on one rank
     * (where no credit wait guards the slot on the stream), the consumer has released the slot's previous block.
     */
    private boolean recordFree() {
        return putsDone >= staged - slots + 1 && (local == null || local.released() >= sent - slots + 1);
    }

    private void drainWaiting() {
        while (!waitingForRecord.isEmpty() && recordFree()) waitingForRecord.poll().run();
    }

    /**
     * One block (or a last header when {@code block} is null) into the next slot, after a credit for it unless this
     * is the acknowledgement of a cancel, whose slots nobody reads any more.
     */
    private Work send(@Nullable Buffer block, long flags, boolean credited) {
        long i = sent++;
        if (credited && local == null && i >= slots) creditStep();
        long length = block == null ? 0 : block.byteSize();
        long record = staged++;
        ByteBuffer header = link.host(ChannelLink.HEADERS, record);
        header.putLong(0, i).putLong(8, length).putLong(16, flags);
        long slot = link.layout.slotOffset(i);
        StreamOperation stage = link.toWindow(ChannelLink.HEADERS, record, slot, 24);
        StreamOperation put = link.put(slot, slot, ChannelLayout.HEADER + length, consumer);
        Work work;
        if (block != null) {
            blocks++;
            work = link.run(stage, link.copyIn(block, i), put);
        } else {
            work = link.run(stage, put);
        }
        work.whenComplete((v, e) -> putDone(e));
        if (local != null) local.pump();
        return work;
    }

    /** Waits for the next credit and reads the closing area after it. */
    private void creditStep() {
        long k = creditWaits++;
        recordsPending++;
        link.run(link.await(consumer, 1),
                        link.fromWindow(link.layout.closingOffset(), ChannelLink.RECORDS, k, ChannelLayout.RECORD_BYTES))
                .whenComplete((v, e) -> record(k, e));
    }

    private void record(long k, @Nullable Throwable error) {
        synchronized (lock) {
            recordsPending--;
            if (error != null) {
                fail(error);
                return;
            }
            if (closing) return;
            ByteBuffer r = link.host(ChannelLink.RECORDS, k);
            long kind = r.getLong(0);
            long waits = r.getLong(8);
            long credits = r.getLong(16);
            boolean complete = (kind == ChannelLayout.FIN || kind == ChannelLayout.CANCEL)
                    && r.getLong(24) == ChannelLayout.check(kind, waits, credits);
            if (complete) {
                close(kind, waits, credits);
            } else if (terminal && recordsPending == 0) {
                creditStep();
            }
        }
    }

    /** The consumer's closing record arrived: settle the counters and finish. */
    private void close(long kind, long waits, long credits) {
        closing = true;
        if (kind == ChannelLayout.CANCEL && failure == null) failure = new ChannelClosedException("the consumer cancelled");
        if (!terminal) {
            terminal = true;
            cancel();
        }
        Work last = null;
        long owed = credits + 1 + slots - creditWaits;
        if (owed > 0) last = link.run(link.await(consumer, Math.toIntExact(owed)));
        creditWaits += Math.max(0, owed);
        Work settled = last;
        whenRecordFree(() -> {
            Work end = settled;
            if (kind == ChannelLayout.CANCEL) {
                send(null, ChannelLayout.ACK, false);
                end = fillers();
            }
            if (end == null) finish(null);
            else end.whenComplete((v, e) -> finish(e));
        });
    }

    private void putDone(@Nullable Throwable error) {
        synchronized (lock) {
            if (error != null) {
                fail(error);
                return;
            }
            putsDone++;
            drainWaiting();
        }
        maybeRequest();
    }

    /**
     * Stages a last header that waited for its slot, then asks upstream for as many blocks as can be in flight:
     * {@code slots} puts, and on one rank free slots. Called as puts complete and, on one rank, as blocks are released.
     */
    void maybeRequest() {
        long n;
        synchronized (lock) {
            drainWaiting();
            if (terminal) return;
            long limit = putsDone + slots;
            if (local != null) limit = Math.min(limit, local.released() + slots);
            n = limit - granted;
            if (n <= 0) return;
            granted += n;
        }
        request(n);
    }

    private void fail(Throwable error) {
        if (failure == null) failure = error;
        terminal = true;
        closing = true;
        cancel();
        done.completeExceptionally(error);
    }

    private void finish(@Nullable Throwable error) {
        synchronized (lock) {
            if (error != null && failure == null) failure = error;
            if (failure != null) done.completeExceptionally(failure);
            else done.complete(blocks);
        }
    }

    @Override
    public String toString() {
        synchronized (lock) {
            return "producer[sent=" + sent + ", blocks=" + blocks + ", staged=" + staged + ", putsDone=" + putsDone
                    + ", granted=" + granted + ", creditWaits=" + creditWaits + ", recordsPending=" + recordsPending
                    + ", terminal=" + terminal + ", closing=" + closing + ", waitingForRecord=" + waitingForRecord.size() + "]";
        }
    }
}
