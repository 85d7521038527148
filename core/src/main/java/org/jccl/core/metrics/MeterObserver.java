package org.jccl.core.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.jccl.core.Communicator;
import org.jccl.core.Work;
import org.jccl.core.WorkObserver;
import org.jspecify.annotations.Nullable;

/**
 * Records works into one registry. Meters are found by two map look-ups on strings jccl already holds (the
 * communicator's label, the operation's name), so recording allocates nothing once they exist.
 */
final class MeterObserver implements WorkObserver {
    private final MeterRegistry registry;
    /** Communicator label → operation name → its meters. */
    private final ConcurrentHashMap<String, ConcurrentHashMap<String, OperationMeters>> meters = new ConcurrentHashMap<>();

    MeterObserver(MeterRegistry registry) {
        this.registry = registry;
    }

    @Override
    public void issued(Work work) {
        OperationMeters m = metersOf(work);
        if (m == null) return;
        m.inFlight.incrementAndGet();
        m.bytes.increment(work.bytes());
    }

    @Override
    public void completed(Work work, @Nullable Throwable error, long elapsedNanos) {
        OperationMeters m = metersOf(work);
        if (m == null) return;
        m.inFlight.decrementAndGet();
        if (error == null) {
            m.succeeded.record(elapsedNanos, TimeUnit.NANOSECONDS);
        } else {
            m.failed.record(elapsedNanos, TimeUnit.NANOSECONDS);
            m.errors(error).increment();
        }
    }

    private @Nullable OperationMeters metersOf(Work work) {
        Communicator c = work.communicator();
        if (c == null) return null;
        ConcurrentHashMap<String, OperationMeters> ofComm = meters.get(c.describe());
        if (ofComm == null) ofComm = meters.computeIfAbsent(c.describe(), k -> new ConcurrentHashMap<>());
        OperationMeters m = ofComm.get(work.operation());
        if (m == null) m = ofComm.computeIfAbsent(work.operation(), op -> new OperationMeters(registry, c, op));
        return m;
    }

    /** The meters of one operation of one communicator (one rank). */
    private static final class OperationMeters {
        final MeterRegistry registry;
        final Tags tags;
        final Timer succeeded;
        final Timer failed;
        final Counter bytes;
        final AtomicLong inFlight = new AtomicLong();
        /** Exception class → its counter. */
        final ConcurrentHashMap<Class<?>, Counter> errors = new ConcurrentHashMap<>();

        OperationMeters(MeterRegistry registry, Communicator c, String operation) {
            this.registry = registry;
            this.tags = Tags.of("comm", c.id(), "rank", Integer.toString(c.rank()), "operation", operation);
            this.succeeded = timer("success");
            this.failed = timer("error");
            this.bytes = Counter.builder("jccl.operations.bytes").baseUnit("bytes")
                    .description("Data issued by jccl operations").tags(tags).register(registry);
            Gauge.builder("jccl.operations.in.flight", inFlight, AtomicLong::get)
                    .description("jccl operations issued and not yet completed").tags(tags).register(registry);
        }

        private Timer timer(String outcome) {
            return Timer.builder("jccl.operations").description("jccl operations, from issue to completion")
                    .tags(tags).tag("outcome", outcome).register(registry);
        }

        Counter errors(Throwable error) {
            Counter c = errors.get(error.getClass());
            if (c == null) {
                c = errors.computeIfAbsent(error.getClass(), type -> Counter.builder("jccl.operations.errors")
                        .description("jccl operations that failed, by exception").tags(tags)
                        .tag("exception", type.getSimpleName()).register(registry));
            }
            return c;
        }
    }
}
