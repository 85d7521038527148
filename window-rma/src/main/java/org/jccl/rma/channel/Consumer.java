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
 * producer's acknowledgement and its fillers. A side closed without ever being subscribed cancels the same way, so
 * that the producer, waiting for credits or closing, gets its answer.
 *
 * <p>On one rank (the producer is {@link #local}) it waits only for puts already issued, and when it cancels or
 * closes it stops the producer and waits, in one wait, for every signal the producer put and it has not waited for
 * yet: nothing more is put, so nothing is left on the stream or the counters.
 */
final class Consumer {
    private final ChannelLink link;
    private final int producer;
    private final Object lock;
    private final int slots;
    private @Nullable Producer local;
    /** The subscriber's sink while it receives; dropped once the stream ended or was cancelled (Reactive Streams 3.13). */
    private @Nullable FluxSink<ReceivedBlock> sink;

    /** Whether {@code receive} took this side, or a close that ends it unused. */
    private boolean started;
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
        this.lock = lock;
        this.slots = link.layout.slots();
    }

    /** Both sides on one rank: credits are counted on the host instead of signalled. */
    void pairWith(Producer producerSide) {
        synchronized (lock) {
            this.local = producerSide;
        }
    }

    long released() {
        synchronized (lock) {
            return released;
        }
    }

    /** Takes this side (for {@code receive}, or for a close that ends it unused); false if it was taken already. */
    boolean claim() {
        synchronized (lock) {
            if (started) return false;
            started = true;
            return true;
        }
    }

    /** Completes once no signal of this side is owed or awaited any more. */
    CompletableFuture<Void> settled() {
        return settled;
    }

    /** Starts receiving into {@code subscriber}'s sink; the side was claimed for it. */
    void attach(FluxSink<ReceivedBlock> subscriber) {
        synchronized (lock) {
            this.sink = subscriber;
        }
        subscriber.onCancel(this::cancel);
        if (subscriber.isCancelled()) cancel(); // cancelled before the callback was set: it was not called
        pump();
    }

    /** Issues the waits the producer's credits allow (on one rank: for the puts it already issued). */
    void pump() {
        synchronized (lock) {
            if (sink == null || ended || cancelled) return;
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
            if (local != null && closed) return; // one rank, gone: its last wait consumed whatever is left
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
            FluxSink<ReceivedBlock> s = sink;
            if (ended || s == null) return; // a filler: the slot holds nothing new
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
                sink = null;
                maybeFin();
                s.complete();
            } else if ((flags & (ChannelLayout.FAILED | ChannelLayout.CANCELLED)) != 0) {
                end(new ChannelClosedException((flags & ChannelLayout.FAILED) != 0 ? "the producer failed"
                        : "the producer cancelled"));
            } else {
                emitted++;
                s.next(new ReceivedBlock(j, link.window.buffer().slice(link.layout.slotOffset(j) + ChannelLayout.HEADER,
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
        FluxSink<ReceivedBlock> s = sink;
        sink = null;
        maybeFin();
        if (s != null) s.error(error);
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
        Producer p = local;
        if (p != null) p.maybeRequest();
    }

    private void maybeFin() {
        if (ended && !closed && released >= emitted) sendClosing(ChannelLayout.FIN);
    }

    /** The subscriber went away before the end: tell the producer, then wait out its acknowledgement. */
    private void cancel() {
        synchronized (lock) {
            sink = null;
            if (closed || ended) return;
            cancelled = true;
            if (local != null) {
                leave(new ChannelClosedException("the consumer cancelled"));
                return;
            }
            sendClosing(ChannelLayout.CANCEL);
            if (headersRead == waitsIssued) issueWait();
        }
    }

    /**
     * One rank: stops the producer (nothing more is put), then waits in one wait for every signal it put that no
     * wait of this side covers yet. Every one of them was issued before this wait on the shared stream, so it passes.
     */
    private void leave(ChannelClosedException why) {
        Producer p = local;
        closed = true;
        if (p != null) {
            p.consumerGone(why);
            long owed = p.sent() - waitsIssued;
            if (owed > 0) link.run(link.await(producer, owed));
            waitsIssued += Math.max(0, owed);
        }
        settled.complete(null);
    }

    /**
     * Settles this side before the channel's window is deregistered (a barrier of every rank, after which nothing this
     * side issues reaches the producer): a stream still running ends as if cancelled, with
     * {@link ChannelClosedException}; blocks still held count as released; a side never subscribed cancels, so that
     * the producer gets its answer. Completes once the closing record and credits were issued and, after a cancel, the
     * producer's acknowledgement was awaited.
     */
    CompletableFuture<Void> close() {
        FluxSink<ReceivedBlock> receiving = null;
        synchronized (lock) {
            if (sink == null && !ended && !cancelled) {
                cancel(); // never subscribed
            } else if (!ended && !cancelled) {
                receiving = sink;
                cancel();
                released = Math.max(released, emitted);
            } else if (ended && !closed) {
                released = Math.max(released, emitted);
                if (local != null) leave(new ChannelClosedException("the channel was closed"));
                else maybeFin();
            }
        }
        if (receiving != null) receiving.error(new ChannelClosedException("the channel was closed while its consumer received"));
        Producer p = local;
        if (p != null) p.maybeRequest();
        return settled;
    }

    /** The closing record, then {@code slots} spare credits for the producer's credit waits already issued. */
    private void sendClosing(long kind) {
        if (local != null) {
            // After the producer's last header this changes nothing on the producer's side; before it (a broken
            // protocol) it stops the producer, whose signals nobody would wait for.
            leave(new ChannelClosedException("the consumer ended before the producer's last block"));
            return;
        }
        closed = true;
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
            return "consumer[started=" + started + ", waitsIssued=" + waitsIssued + ", headersRead=" + headersRead
                    + ", emitted=" + emitted + ", released=" + released + ", creditsSent=" + creditsSent + ", ended="
                    + ended + ", cancelled=" + cancelled + ", closed=" + closed + ", acknowledged=" + acknowledged + "]";
        }
    }
}
