package org.jccl.reactive;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jccl.core.Group;
import org.jccl.core.Operation;
import org.jccl.core.error.Errors;
import org.jccl.core.module.StreamOperation;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * A group call as a cold {@link Mono}: operations on one or several communicators, issued between one
 * {@code ncclGroupStart}/{@code ncclGroupEnd} when the Mono is subscribed (core's {@link Group} does the
 * issuing), completing when all have. Sends and receives in one group never deadlock, whatever their order.
 *
 * <p>Immutable: {@link #add} returns a new group, so one group can be kept and subscribed many times; each
 * subscription issues the whole group once. Bad operations fail the subscription and issue nothing. Signals use
 * the scheduler of the first communicator added.
 *
 * <pre>{@code
 * Mono<Void> exchange = ReactiveGroup.create()
 *     .add(comm, Operation.send(out, n, DataType.FLOAT32, peer))
 *     .add(comm, Operation.recv(in, n, DataType.FLOAT32, peer))
 *     .submit();
 * }</pre>
 */
public final class ReactiveGroup {
    private static final ReactiveGroup EMPTY = new ReactiveGroup(List.of());

    private final List<Entry> entries;

    /** One operation: core's ({@code operation}) or a module's ({@code extension}). */
    private record Entry(ReactiveCommunicator communicator, @Nullable Operation operation, @Nullable StreamOperation extension) {
    }

    private ReactiveGroup(List<Entry> entries) {
        this.entries = entries;
    }

    /** An empty group. */
    public static ReactiveGroup create() {
        return EMPTY;
    }

    /** A group with {@code operation} of {@code communicator} added after this group's operations. */
    public ReactiveGroup add(ReactiveCommunicator communicator, Operation operation) {
        return with(new Entry(Errors.requireArgument(communicator, "communicator"),
                Errors.requireArgument(operation, "operation"), null));
    }

    /** A group with {@code operation} of a module built on core (a window's put, a kernel launch) added. */
    public ReactiveGroup add(ReactiveCommunicator communicator, StreamOperation operation) {
        return with(new Entry(Errors.requireArgument(communicator, "communicator"), null,
                Errors.requireArgument(operation, "operation")));
    }

    private ReactiveGroup with(Entry entry) {
        List<Entry> more = new ArrayList<>(entries.size() + 1);
        more.addAll(entries);
        more.add(entry);
        return new ReactiveGroup(List.copyOf(more));
    }

    /** How many operations the group holds. */
    public int size() {
        return entries.size();
    }

    /** A Mono that issues the whole group at each subscription and completes when every operation has. */
    public Mono<Void> submit() {
        return FutureMono.of(() -> toCore().submit(), scheduler());
    }

    /**
     * {@link Group#simulate()} at subscription: the library's estimate of the group's time in microseconds, without
     * launching it. Fails with {@code UnsupportedFeatureException} where the library lacks {@code ncclGroupSimulateEnd}.
     */
    public Mono<Float> simulate() {
        return FutureMono.of(() -> toCore().simulate(), scheduler());
    }

    /** A core group of these operations; made at subscription, so that bad operations fail the subscription. */
    private Group toCore() {
        Group group = Group.create();
        for (Entry e : entries) {
            if (e.operation() != null) group.add(e.communicator().communicator(), e.operation());
            else group.add(e.communicator().communicator(), Objects.requireNonNull(e.extension()));
        }
        return group;
    }

    /** The scheduler of the first communicator added, or null (the event thread) for an empty group. */
    private @Nullable Scheduler scheduler() {
        return entries.isEmpty() ? null : entries.get(0).communicator().scheduler();
    }
}
