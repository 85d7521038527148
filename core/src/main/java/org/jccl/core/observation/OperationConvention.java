package org.jccl.core.observation;

import io.micrometer.common.KeyValues;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * The default names and key values of an operation's observation. Low cardinality, as {@code JcclMetrics} tags its
 * meters: {@code comm} (the communicator's id), {@code rank}, {@code operation} ({@code allReduce}, {@code group},
 * {@code putSignal}, …). High cardinality: {@code sequence} (the communicator's sequence number of the work) and
 * {@code bytes}. The contextual name (a span's name) is {@code jccl <operation>}.
 */
public final class OperationConvention implements ObservationConvention<OperationContext> {
    /** The observation's name. */
    public static final String NAME = "jccl.operation";
    static final OperationConvention INSTANCE = new OperationConvention();

    private OperationConvention() {
    }

    @Override
    public String getName() {
        return NAME;
    }

    @Override
    public String getContextualName(OperationContext context) {
        return "jccl " + context.work().operation();
    }

    @Override
    public KeyValues getLowCardinalityKeyValues(OperationContext context) {
        return KeyValues.of("comm", context.communicator(), "rank", Integer.toString(context.rank()),
                "operation", context.work().operation());
    }

    @Override
    public KeyValues getHighCardinalityKeyValues(OperationContext context) {
        return KeyValues.of("sequence", Long.toString(context.work().sequence()), "bytes", Long.toString(context.work().bytes()));
    }

    @Override
    public boolean supportsContext(Observation.Context context) {
        return context instanceof OperationContext;
    }
}
