package org.jccl.rma.channel;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import org.jccl.core.Buffer;
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
 *
 * <p>On one rank (the consumer is {@link #local}) nothing may wait on the stream for a signal not yet issued: the
 * stream is shared, so the wait would hold the signal behind it forever. Credits are counted on the host instead (a
 * slot is reused once its block was released), the consumer waits only for puts already issued, the last header is
 * the last signal, and once the consumer went away nothing more is put.
 */
final class Producer extends BaseSubscriber<Buffer> {
    private final ChannelLink link;
    private final int consumer;
    private final Object lock;
    private final int slots;
    private @Nullable Consumer local;
    /** The send's result: the blocks sent, once the consumer confirmed the end. */
    final CompletableFuture<Long> done = new CompletableFuture<>();
    /**
     * Completes once nothing more of this side is issued, just before {@link #done}: whoever waits for the result (to
     * start another channel, say) finds this side no longer live.
     */
    private final CompletableFuture<Void> settled = new CompletableFuture<>();

    /** Whether {@code send} took this side, or a close that ends it unused. */
    private boolean claimed;
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
    /**
     * The last header (END, FAILED, CANCELLED) was put: from now on a credit wait that finds no closing record is
     * followed by another, until the record comes. Not before: a credit wait issued while the last header still
     * waits for its pinned record would take the credit that header needs, and the record comes only after it.
     */
    private boolean lastHeaderOut;
    private boolean closing;
    /** One rank: the consumer cancelled or closed, and waited for every signal already put; nothing more is put. */
    private boolean consumerGone;
    private @Nullable Throwable failure;

    Producer(ChannelLink link, int consumer, Object lock) {
        this.link = link;
        this.consumer = consumer;
        this.lock = lock;
        this.slots = link.layout.slots();
    }

    /** Both sides on one rank: credits are counted on the host, and the handshake is not needed. */
    void pairWith(Consumer consumerSide) {
        synchronized (lock) {
            this.local = consumerSide;
        }
    }

    /** Takes this side (for {@code send}, or for a close that ends it unused); false if it was taken already. */
    boolean claim() {
        synchronized (lock) {
            if (claimed) return false;
            claimed = true;
            return true;
        }
    }

    /** Completes once this side's handshake ended, however the send ended: nothing more of it is issued. */
    CompletableFuture<Void> settled() {
        return settled;
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
                // the block cannot be copied (closed by its owner, on another device): nothing was issued for it
                failure = e;
                cancel();
                end(ChannelLayout.FAILED);
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
     * Settles this side before the channel's window is deregistered: a send still running is stopped as if its result
     * were cancelled, and a side never used sends a last header all the same, so that a consumer waiting for blocks
     * (or closing) gets its answer. Completes when the closing handshake has ended, however the send ended.
     */
    CompletableFuture<Void> close() {
        synchronized (lock) {
            if (!terminal) stop(new ChannelClosedException(granted == 0 ? "the channel was closed before its producer sent"
                    : "the channel was closed while its producer sent"));
        }
        return settled;
    }

    private void stop(ChannelClosedException why) {
        synchronized (lock) {
            if (failure == null) failure = why;
            cancel();
            end(ChannelLayout.CANCELLED);
        }
    }

    /**
     * One rank: the consumer cancelled, closed or ended, and waits for every signal put so far. Nothing more is put (a
     * last header still waiting for its slot is dropped), and a send whose last header is not out fails with
     * {@code why}.
     */
    void consumerGone(ChannelClosedException why) {
        synchronized (lock) {
            consumerGone = true;
            boolean lastHeaderDropped = !waitingForRecord.isEmpty();
            waitingForRecord.clear();
            if (terminal && !lastHeaderDropped) return; // its last header is out: the send finishes with its put
            terminal = true;
            closing = true;
            cancel();
            if (failure == null) failure = why;
            conclude(failure);
        }
    }

    /** The last header, then the closing handshake (or, on one rank, nothing more). */
    private void end(long flags) {
        if (terminal) return;
        terminal = true;
        whenRecordFree(() -> {
            // The consumer's closing record came first (a CANCEL read while this header waited for its pinned
            // record): every credit is settled, and the acknowledgement queued after this says all that is left.
            if (closing) return;
            CompletableFuture<Void> last = send(null, flags, true);
            lastHeaderOut = true;
            CompletableFuture<Void> filled = fillers();
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
    private @Nullable CompletableFuture<Void> fillers() {
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
    private CompletableFuture<Void> send(@Nullable Buffer block, long flags, boolean credited) {
        long i = sent;
        long length = block == null ? 0 : block.byteSize();
        long slot = link.layout.slotOffset(i);
        StreamOperation copy = block == null ? null : link.copyIn(block, i); // may throw: before anything changed
        sent++;
        if (credited && local == null && i >= slots) creditStep();
        long record = staged++;
        ByteBuffer header = link.host(ChannelLink.HEADERS, record);
        header.putLong(0, i).putLong(8, length).putLong(16, flags);
        StreamOperation stage = link.toWindow(ChannelLink.HEADERS, record, slot, 24);
        StreamOperation put = link.put(slot, slot, ChannelLayout.HEADER + length, consumer);
        CompletableFuture<Void> work;
        if (copy != null) {
            blocks++;
            work = link.run(stage, copy, put);
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
                close(kind, credits);
            } else if (lastHeaderOut && recordsPending == 0) {
                creditStep();
            }
        }
    }

    /** The consumer's closing record arrived: settle the counters and finish. */
    private void close(long kind, long credits) {
        closing = true;
        if (kind == ChannelLayout.CANCEL && failure == null) failure = new ChannelClosedException("the consumer cancelled");
        if (!terminal) {
            terminal = true;
            cancel();
        }
        CompletableFuture<Void> last = null;
        long owed = credits + 1 + slots - creditWaits;
        if (owed > 0) last = link.run(link.await(consumer, owed));
        creditWaits += Math.max(0, owed);
        CompletableFuture<Void> settled = last;
        whenRecordFree(() -> {
            CompletableFuture<Void> end = settled;
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

    /**
     * A step failed: the communicator failed (or was closed under the channel), so nothing more can be settled with
     * the peer; the send fails with the step's error, and nothing more is issued.
     */
    private void fail(Throwable error) {
        if (failure == null) failure = error;
        terminal = true;
        closing = true;
        waitingForRecord.clear();
        cancel();
        conclude(error);
    }

    private void finish(@Nullable Throwable error) {
        synchronized (lock) {
            if (error != null && failure == null) failure = error;
            conclude(failure);
        }
    }

    /** This side settled: it issues nothing more. Then the send's result, with {@code error} or the blocks sent. */
    private void conclude(@Nullable Throwable error) {
        settled.complete(null);
        if (error != null) done.completeExceptionally(error);
        else done.complete(blocks);
    }

    @Override
    public String toString() {
        synchronized (lock) {
            return "producer[claimed=" + claimed + ", sent=" + sent + ", blocks=" + blocks + ", staged=" + staged
                    + ", putsDone=" + putsDone + ", granted=" + granted + ", creditWaits=" + creditWaits
                    + ", recordsPending=" + recordsPending + ", terminal=" + terminal + ", lastHeaderOut=" + lastHeaderOut
                    + ", closing=" + closing
                    + ", consumerGone=" + consumerGone + ", waitingForRecord=" + waitingForRecord.size() + "]";
        }
    }
}
