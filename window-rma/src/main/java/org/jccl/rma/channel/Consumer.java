package org.jccl.rma.channel;

import java.nio.ByteBuffer;
import java.util.BitSet;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.FluxSink;

/**
 * The consumer's side: keeps a wait (and a read of the header it covers) issued for every slot the producer may
 * fill — at most {@code slots} ahead of the last block released — and emits each block when its header arrives.
 * Releases are credited back in sequence order, one signal each, after the work issued before them. When the last
 * header arrives it waits for the fillers after it, and once every block was released it sends its closing record
 * (FIN); if its subscriber cancels first, a CANCEL record, after which it keeps waiting, ignoring data, until the
 * producer's acknowledgement and its fillers.
 */
final class Consumer {
    private final ChannelLink link;
    private final int producer;
    private final Object lock;
    private final int slots;
    private final boolean self;
    private @Nullable Producer local;
    private @Nullable FluxSink<ReceivedBlock> sink;

    private long waitsIssued;
    private long headersRead;
    private long released;
    private long creditsSent;
    private long emitted;
    /** Blocks released out of order, relative to {@link #released}. */
    private BitSet releasedAhead = new BitSet();
    private boolean ended;
    private boolean cancelled;
    private boolean closed;
    private boolean acknowledged;
    /** Completes once no signal of this side is owed or awaited any more: the channel's window may then go. */
    private final CompletableFuture<Void> settled = new CompletableFuture<>();

    Consumer(ChannelLink link, int producer, Object lock) {
        this.link = link;
        this.producer = producer;
        this.self = producer == link.rma.communicator().rank();
        this.lock = lock;
        this.slots = link.layout.slots();
    }

    /** Both sides on one rank: credits are counted on the host instead of signalled. */
    void pairWith(Producer producer) {
        synchronized (lock) {
            this.local = producer;
        }
        pump();
    }

    boolean started() {
        synchronized (lock) {
            return sink != null;
        }
    }

    long released() {
        synchronized (lock) {
            return released;
        }
    }

    void start(FluxSink<ReceivedBlock> sink) {
        synchronized (lock) {
            this.sink = sink;
        }
        sink.onCancel(this::cancel);
        pump();
    }

    /** Issues the waits the producer's credits allow (on one rank: for the puts it already issued). */
    void pump() {
        synchronized (lock) {
            if (sink == null || ended || cancelled) return;
            if (self && local == null) return; // on one rank, waits follow the producer's puts
            long limit = released + slots;
            if (local != null) limit = Math.min(limit, local.sent());
            while (waitsIssued < limit) issueWait();
        }
    }

    private void issueWait() {
        long j = waitsIssued++;
        link.run(link.await(producer, 1), link.fromWindow(link.layout.slotOffset(j), ChannelLink.HEADERS, j, 24))
                .whenComplete((v, e) -> header(j, e));
    }

    private void header(long j, @Nullable Throwable error) {
        synchronized (lock) {
            if (error != null) {
                end(error);
                settled.complete(null); // a failed communicator settles nothing more
                return;
            }
            headersRead++;
            ByteBuffer h = link.host(ChannelLink.HEADERS, j);
            long sequence = h.getLong(0);
            long length = h.getLong(8);
            long flags = h.getLong(16);
            if (cancelled) {
                if (sequence == j && (flags & ChannelLayout.ACK) != 0) {
                    acknowledged = true;
                    topUp(j);
                    settled.complete(null);
                } else if (!acknowledged && headersRead == waitsIssued) {
                    issueWait(); // the acknowledgement is still to come
                }
                return;
            }
            if (ended) return; // a filler: the slot holds nothing new
            if (sequence != j) {
                end(new ChannelClosedException("block " + j + " expected, but its slot holds block " + sequence
                        + ": the channel's protocol was broken"));
                return;
            }
            if ((flags & (ChannelLayout.END | ChannelLayout.FAILED | ChannelLayout.CANCELLED)) != 0) topUp(j);
            if ((flags & ChannelLayout.END) != 0) {
                // The closing record goes out before the subscriber learns of the end: whatever it issues next (a
                // close, a collective) is ordered after the record the producer waits for.
                ended = true;
                maybeFin();
                sink.complete();
            } else if ((flags & (ChannelLayout.FAILED | ChannelLayout.CANCELLED)) != 0) {
                end(new ChannelClosedException((flags & ChannelLayout.FAILED) != 0 ? "the producer failed"
                        : "the producer cancelled"));
            } else {
                emitted++;
                sink.next(new ReceivedBlock(j, link.window.buffer().slice(link.layout.slotOffset(j) + ChannelLayout.HEADER,
                        length), this));
                pump();
            }
        }
    }

    /** After a last header at {@code j}: waits for the producer's {@code slots - 1} fillers that follow it. */
    private void topUp(long j) {
        if (local != null) return;
        while (waitsIssued < j + slots) issueWait();
    }

    /** Ends the stream with {@code error}; blocks already emitted count as released (their slots are not reused). */
    private void end(Throwable error) {
        if (ended) return;
        ended = true;
        released = Math.max(released, emitted);
        maybeFin();
        if (sink != null) sink.error(error);
    }

    void release(long sequence) {
        synchronized (lock) {
            if (sequence < released || ended && closed) return;
            releasedAhead.set((int) (sequence - released));
            int advanced = releasedAhead.nextClearBit(0);
            if (advanced == 0) return;
            releasedAhead = releasedAhead.get(advanced, Math.max(advanced, releasedAhead.length()));
            released += advanced;
            if (local == null && !cancelled && !closed) {
                link.signals(producer, advanced);
                creditsSent += advanced;
            }
            pump();
            maybeFin();
        }
        if (local != null) local.maybeRequest();
    }

    private void maybeFin() {
        if (ended && !closed && released >= emitted) sendClosing(ChannelLayout.FIN);
    }

    /** The subscriber went away before the end: tell the producer, then wait out its acknowledgement. */
    private void cancel() {
        synchronized (lock) {
            if (closed || ended) return;
            cancelled = true;
            if (local != null) {
                // One rank: stop the producer, then consume the signals of the puts it already issued.
                local.consumerCancelled();
                long owed = local.sent() - waitsIssued;
                if (owed > 0) link.run(link.await(producer, Math.toIntExact(owed)));
                waitsIssued += Math.max(0, owed);
                closed = true;
                settled.complete(null);
                return;
            }
            sendClosing(ChannelLayout.CANCEL);
            if (headersRead == waitsIssued) issueWait();
        }
    }

    /**
     * Settles this side before the channel's window is deregistered (a barrier of every rank, after which nothing this
     * side issues reaches the producer): a stream still running ends as if cancelled, with
     * {@link ChannelClosedException}; blocks still held count as released. Completes once the closing record and
     * credits were issued and, after a cancel, the producer's acknowledgement was awaited.
     */
    CompletableFuture<Void> close() {
        synchronized (lock) {
            if (sink == null) return CompletableFuture.completedFuture(null);
            if (!ended && !cancelled) {
                cancel();
                released = Math.max(released, emitted); // on one rank, frees the slots a last header may wait for
                sink.error(new ChannelClosedException("the channel was closed while its consumer received"));
            } else if (ended && !closed) {
                released = Math.max(released, emitted);
                maybeFin();
            }
        }
        if (local != null) local.maybeRequest();
        return settled;
    }

    /** The closing record, then {@code slots} spare credits for the producer's credit waits already issued. */
    private void sendClosing(long kind) {
        closed = true;
        if (local != null) {
            settled.complete(null);
            return;
        }
        ByteBuffer r = link.host(ChannelLink.RECORDS, 0);
        r.putLong(0, kind).putLong(8, waitsIssued).putLong(16, creditsSent)
                .putLong(24, ChannelLayout.check(kind, waitsIssued, creditsSent));
        long from = link.layout.closingSourceOffset();
        link.run(link.toWindow(ChannelLink.RECORDS, 0, from, ChannelLayout.RECORD_BYTES),
                link.put(from, link.layout.closingOffset(), ChannelLayout.RECORD_BYTES, producer));
        link.signals(producer, slots);
        if (kind == ChannelLayout.FIN) settled.complete(null);
    }

    @Override
    public String toString() {
        synchronized (lock) {
            return "consumer[waitsIssued=" + waitsIssued + ", headersRead=" + headersRead + ", emitted=" + emitted
                    + ", released=" + released + ", creditsSent=" + creditsSent + ", ended=" + ended + ", cancelled="
                    + cancelled + ", closed=" + closed + ", acknowledged=" + acknowledged + "]";
        }
    }
}
