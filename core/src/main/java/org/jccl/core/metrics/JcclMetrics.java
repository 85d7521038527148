package org.jccl.core.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.ArrayList;
import java.util.List;
import org.jccl.core.Jccl;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidUsageException;

/**
 * Binds every communicator operation of the process to a Micrometer registry. Per communicator ({@code comm} id and
 * {@code rank} tags) and operation ({@code operation}: {@code allReduce}, {@code group}, {@code putSignal}, …):
 *
 * <ul>
 *   <li>{@code jccl.operations} — a timer from issue to completion, tagged {@code outcome} {@code success} or
 *       {@code error}: counts and latency;</li>
 *   <li>{@code jccl.operations.errors} — a counter per {@code exception} (its simple class name);</li>
 *   <li>{@code jccl.operations.bytes} — a counter of the bytes issued ({@link org.jccl.core.Work#bytes()});</li>
 *   <li>{@code jccl.operations.in.flight} — a gauge of the operations issued and not yet completed.</li>
 * </ul>
 *
 * <pre>{@code
 * try (JcclMetrics metrics = new JcclMetrics()) {
 *     metrics.bindTo(registry);
 *     ... // every operation issued now is recorded
 * }
 * }</pre>
 *
 * Recording happens on jccl's threads and allocates nothing once an operation's meters exist. Meters stay in the
 * registry after their communicator closed (a scrape still sees its totals).
 */
public final class JcclMetrics implements MeterBinder, AutoCloseable {
    private final List<MeterObserver> observers = new ArrayList<>();
    private boolean closed;

    /** Metrics bound to no registry yet: {@link #bindTo} starts recording. */
    public JcclMetrics() {
    }

    /** Starts recording every operation issued from now on into {@code registry}. */
    @Override
    public synchronized void bindTo(MeterRegistry registry) {
        Errors.requireArgument(registry, "registry");
        if (closed) throw new InvalidUsageException("these metrics are closed");
        MeterObserver observer = new MeterObserver(registry);
        observers.add(observer);
        Jccl.addWorkObserver(observer);
    }

    /** Stops recording (operations in flight still complete their meters); idempotent. */
    @Override
    public synchronized void close() {
        closed = true;
        for (MeterObserver o : observers) Jccl.removeWorkObserver(o);
        observers.clear();
    }
}
