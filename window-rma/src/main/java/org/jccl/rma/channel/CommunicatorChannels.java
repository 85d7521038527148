package org.jccl.rma.channel;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.jccl.core.Communicator;
import org.jccl.core.Modules;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.module.Attachment;
import org.jccl.core.module.AttachmentKey;

/**
 * The block channels of one communicator on this rank, as its attachment: their signal lanes, the sides still live
 * (taken, not settled), and when their windows are deregistered.
 *
 * <p>The channels share the communicator's one stream, where a wait holds everything issued after it. So between two
 * different ranks one channel streams at a time: while a side of one is live on this rank, a side of another between
 * the same two ranks (either direction) is refused. Streaming both would let one channel's waits (the consumer's
 * prefetched waits, the producer's credit waits) hold the other's signals on both ranks' streams, a cycle that never
 * ends. A channel of a rank into itself waits only for puts already issued, so any number of those stream at once,
 * beside any other channel.
 *
 * <p>A window's registration and deregistration are barriers of every rank on the launch thread (NCCL's are
 * collective; the host backend's meet). A rank in a barrier issues nothing else, so it may enter one only when no peer
 * can still need anything from it: when none of its channel sides is live and no channel is open that a side of it
 * could still join (a user's {@code receive}, or the close that ends a side never used, issues credits, records and
 * acknowledgements that a peer waits for on its stream, and the peer would never reach the barrier). A closed
 * channel's window therefore stays registered until every channel opened on the communicator has been closed, and
 * their sides have settled; then the deregistrations go out in the order the closes were called. Every rank opens and
 * closes the same channels in the same order, so every rank reaches that point at the same place in its calls, and
 * issues the barriers in the same order. An open that follows such a point begins once the deregistrations due there
 * have completed, and once the closes called before it have settled (a reused lane then carries nothing of the
 * channel before).
 */
final class CommunicatorChannels implements Attachment {
    private static final AttachmentKey<CommunicatorChannels> KEY =
            AttachmentKey.of("window-rma block channels", c -> new CommunicatorChannels());

    /** A closed channel whose window is still registered. */
    private record Lingering(CompletableFuture<?> settled, Supplier<CompletableFuture<Void>> deregister) {
    }

    final ChannelLanes lanes = new ChannelLanes();
    private int liveSides;
    /** The live sides per pair of ranks ({@link ChannelLanes.Lane#pair()}), as the channels describe themselves. */
    private final Map<Long, List<String>> liveByPair = new HashMap<>();
    /** Channels whose open was called and whose close was not. */
    private int openChannels;
    /** Closed channels' windows, in the order of the closes; the first {@link #due} may be deregistered. */
    private final ArrayDeque<Lingering> lingering = new ArrayDeque<>();
    private int due;
    /**
     * Completes once the deregistrations due so far have completed: a registration queued on the launch thread before
     * a deregistration's call (which follows its drain marker) would meet the peers' deregistration.
     */
    private CompletableFuture<Void> dueDone = CompletableFuture.completedFuture(null);
    /** The deregistrations of the batch now due, issued so far. */
    private final List<CompletableFuture<Void>> dueIssued = new ArrayList<>();
    /** Completes once the closes called so far have settled and the deregistrations due so far have completed. */
    private CompletableFuture<Void> beforeNextOpen = CompletableFuture.completedFuture(null);
    private boolean pumping;
    private boolean gone;

    private CommunicatorChannels() {
    }

    static CommunicatorChannels of(Communicator communicator) {
        return Modules.context(communicator).attachment(KEY);
    }

    /** An open was called; returns where its registration may begin. */
    synchronized CompletableFuture<Void> opening() {
        openChannels++;
        return beforeNextOpen;
    }

    /** An open failed: the channel never existed. */
    void openFailed() {
        synchronized (this) {
            openChannels--;
            if (openChannels == 0) makeDue();
        }
        pump();
    }

    /**
     * Takes a side for {@code send} or {@code receive} with {@code claim}, live until {@code settled} completes.
     *
     * @param selfChannel whether the channel is a rank's into itself, which may stream beside any other
     * @throws InvalidUsageException if another channel between the same two ranks has a live side on this rank
     */
    void start(ChannelLanes.Lane lane, boolean selfChannel, String what, BooleanSupplier claim,
               CompletableFuture<?> settled) {
        synchronized (this) {
            List<String> live = liveByPair.get(lane.pair());
            if (!selfChannel && live != null && !live.isEmpty()) {
                throw new InvalidUsageException("cannot start " + what + " while " + live.get(0) + " streams between the"
                        + " same ranks: channels of one communicator share its stream, where the waits of one would hold"
                        + " the other's signals for ever. Let it end or close it first, or give each channel that streams"
                        + " at the same time a communicator of its own (Communicator.split)");
            }
            if (!claim.getAsBoolean()) throw new InvalidUsageException(what + " is already in use");
        }
        live(lane, what, settled);
    }

    /** A side was taken (by {@link #start}, or by a close that ends it unused): live until {@code settled} completes. */
    void live(ChannelLanes.Lane lane, String what, CompletableFuture<?> settled) {
        synchronized (this) {
            liveSides++;
            liveByPair.computeIfAbsent(lane.pair(), p -> new ArrayList<>()).add(what);
        }
        settled.whenComplete((v, e) -> {
            synchronized (this) {
                liveSides--;
                liveByPair.get(lane.pair()).remove(what);
            }
            pump();
        });
    }

    /**
     * A close was called: its sides complete {@code settled}; {@code deregister} deregisters its window and frees its
     * memory, once no channel of the communicator is open any more and no side of this rank is live. Returns when the
     * close is done: once {@code settled}, and for the close of the last open channel also once the deregistrations
     * it made due have completed. Those are barriers on the launch thread: a collective the caller issues after the
     * close completes must come after them on every rank, or one rank would wait in the barrier with its collective
     * queued behind it while its peer's collective, issued first, waits for it.
     */
    CompletableFuture<Void> closed(CompletableFuture<Void> settled, Supplier<CompletableFuture<Void>> deregister) {
        CompletableFuture<Void> done = settled;
        synchronized (this) {
            openChannels--;
            lingering.add(new Lingering(settled, deregister));
            CompletableFuture<Void> ended = settled.handle((v, e) -> null);
            beforeNextOpen = beforeNextOpen.isDone() ? ended : CompletableFuture.allOf(beforeNextOpen, ended);
            if (openChannels == 0) {
                makeDue();
                done = CompletableFuture.allOf(settled, dueDone);
            }
        }
        settled.whenComplete((v, e) -> pump());
        return done;
    }

    private void makeDue() {
        due = lingering.size();
        if (due > 0 && dueDone.isDone()) dueDone = new CompletableFuture<>();
        beforeNextOpen = CompletableFuture.allOf(beforeNextOpen, dueDone);
    }

    /**
     * Issues the deregistrations that are due, in order, one thread at a time (another that finds it busy leaves: the
     * one pumping looks again after each). Issuing happens outside the lock, since a deregistration that fails at once
     * completes, and runs its callbacks, on this thread.
     */
    private void pump() {
        synchronized (this) {
            if (pumping) return;
            pumping = true;
        }
        while (true) {
            Lingering next;
            boolean last;
            synchronized (this) {
                if (due == 0 || !gone && (liveSides > 0 || !lingering.peek().settled().isDone())) {
                    pumping = false;
                    return;
                }
                next = lingering.poll();
                last = --due == 0;
            }
            CompletableFuture<Void> deregistered;
            try {
                deregistered = next.deregister().get();
            } catch (RuntimeException e) {
                deregistered = CompletableFuture.failedFuture(e);
            }
            CompletableFuture<Void> batchDone = null;
            List<CompletableFuture<Void>> batch = null;
            synchronized (this) {
                dueIssued.add(deregistered);
                if (last) {
                    batch = new ArrayList<>(dueIssued);
                    dueIssued.clear();
                    batchDone = dueDone;
                }
            }
            if (batchDone != null) {
                CompletableFuture<Void> done = batchDone;
                CompletableFuture.allOf(batch.toArray(new CompletableFuture<?>[0])).whenComplete((v, e) -> done.complete(null));
            }
        }
    }

    /**
     * The library freed the communicator's windows with it: every closed channel's window is let go now (its
     * deregistration finds the communicator gone and only frees the memory).
     */
    @Override
    public void communicatorGone() {
        synchronized (this) {
            gone = true;
            due = lingering.size();
            if (due > 0 && dueDone.isDone()) dueDone = new CompletableFuture<>();
        }
        pump();
    }
}
