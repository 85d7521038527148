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
 * (taken, not settled), and the order in which their windows are deregistered.
 *
 * <p>The channels share the communicator's one stream, where a wait holds everything issued after it. So:
 * <ul>
 *   <li>Between two different ranks one channel streams at a time: while a side of one is live on this rank, a side
 *       of another between the same two ranks (either direction) is refused. Streaming both would let one channel's
 *       waits (the consumer's prefetched waits, the producer's credit waits) hold the other's signals on both ranks'
 *       streams, a cycle that never ends. A channel of a rank into itself waits only for puts already issued, so any
 *       number of those stream at once, beside any other channel.</li>
 *   <li>A window's registration and deregistration are barriers of every rank on the launch thread. Every rank
 *       issues them in the order of the calls, which every rank makes alike: deregistrations go out in the order the
 *       closes were called, and a channel opened after a close was called begins once that close completed (its
 *       lane then carries nothing of the closed channel). A rank enters a deregistration only when none of its
 *       channel sides is live: a live side still issues credits, records and acknowledgements through this rank's
 *       launch thread, and its peer, waiting for them, would never reach the barrier.</li>
 * </ul>
 */
final class CommunicatorChannels implements Attachment {
    private static final AttachmentKey<CommunicatorChannels> KEY =
            AttachmentKey.of("window-rma block channels", c -> new CommunicatorChannels());

    /** A closed channel's deregistration, waiting for its sides to settle and for no side of this rank to be live. */
    private record Deregistration(CompletableFuture<?> settled, Runnable issue) {
    }

    final ChannelLanes lanes = new ChannelLanes();
    private int liveSides;
    /** The live sides per pair of ranks ({@link ChannelLanes.Lane#pair()}), as the channels describe themselves. */
    private final Map<Long, List<String>> liveByPair = new HashMap<>();
    private final ArrayDeque<Deregistration> waiting = new ArrayDeque<>();
    private boolean pumping;
    /** Completes once every close called so far on this rank has completed. */
    private CompletableFuture<Void> closes = CompletableFuture.completedFuture(null);

    private CommunicatorChannels() {
    }

    static CommunicatorChannels of(Communicator communicator) {
        return Modules.context(communicator).attachment(KEY);
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
     * Deregisters a closed channel's window through {@code deregister} once {@code settled} (its sides) completed,
     * after every deregistration called before, with no side of this rank live. Later opens on this rank begin once
     * the returned future completed, however it ends.
     */
    CompletableFuture<Void> deregister(CompletableFuture<?> settled, Supplier<CompletableFuture<Void>> deregister) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        synchronized (this) {
            waiting.add(new Deregistration(settled, () -> {
                CompletableFuture<Void> deregistered;
                try {
                    deregistered = deregister.get();
                } catch (RuntimeException e) {
                    deregistered = CompletableFuture.failedFuture(e);
                }
                deregistered.whenComplete((v, e) -> {
                    if (e != null) done.completeExceptionally(e);
                    else done.complete(null);
                });
            }));
            CompletableFuture<Void> ended = done.handle((v, e) -> null);
            closes = closes.isDone() ? ended : CompletableFuture.allOf(closes, ended);
        }
        settled.whenComplete((v, e) -> pump());
        return done;
    }

    /** Completes once every close called so far on this rank completed: where a new channel's open begins. */
    synchronized CompletableFuture<Void> afterCloses() {
        return closes;
    }

    /**
     * Issues the deregistrations that may go, in order, one thread at a time (another that finds it busy leaves: the
     * one pumping looks again after each issue). Issuing happens outside the lock, since a deregistration that fails
     * at once completes, and runs its callbacks, on this thread.
     */
    private void pump() {
        synchronized (this) {
            if (pumping) return;
            pumping = true;
        }
        while (true) {
            Runnable next;
            synchronized (this) {
                if (waiting.isEmpty() || liveSides > 0 || !waiting.peek().settled().isDone()) {
                    pumping = false;
                    return;
                }
                next = waiting.poll().issue();
            }
            next.run();
        }
    }

    /** Nothing to free: the channels own their memory, and the library freed the windows with the communicator. */
    @Override
    public void communicatorGone() {
        // lanes and order are bookkeeping only
    }
}
