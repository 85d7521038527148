package org.jccl.core;

import java.util.concurrent.atomic.AtomicBoolean;
import org.jccl.core.error.InvalidUsageException;
import org.jspecify.annotations.Nullable;

/**
 * {@code ncclRedOpCreatePreMulSum}: each input is multiplied by a scalar, then the products are summed. Bound to
 * one communicator and one data type; the scalar lives on the host (copied at creation) or in a device buffer
 * (read when each operation runs). {@link #close()} destroys it in issue order, after the work already issued.
 */
public final class PreMulSum extends ReduceOp implements AutoCloseable {
    private final Communicator communicator;
    private final DataType type;
    private final double hostScalar;
    private final @Nullable Buffer deviceScalar;
    private final AtomicBoolean closed = new AtomicBoolean();

    PreMulSum(int code, Communicator communicator, DataType type, double hostScalar, @Nullable Buffer deviceScalar) {
        super(code, "premulsum(" + (deviceScalar == null ? Double.toString(hostScalar) : "device") + ")");
        this.communicator = communicator;
        this.type = type;
        this.hostScalar = hostScalar;
        this.deviceScalar = deviceScalar;
    }

    /** The communicator this reduction belongs to. */
    public Communicator communicator() {
        return communicator;
    }

    /** The data type it was created for; operations with another type are rejected. */
    public DataType dataType() {
        return type;
    }

    /** The host scalar (meaningless if {@link #deviceScalar()} is set). */
    public double hostScalar() {
        return hostScalar;
    }

    /** The device buffer holding the scalar, or {@code null} for a host scalar. */
    public @Nullable Buffer deviceScalar() {
        return deviceScalar;
    }

    /** Whether {@link #close()} was called. */
    public boolean isClosed() {
        return closed.get();
    }

    void checkUsableWith(Communicator comm, DataType operationType) {
        if (closed.get()) throw new InvalidUsageException(this + " is closed");
        if (comm != communicator) {
            throw new InvalidUsageException(this + " belongs to " + communicator.describe() + ", not " + comm.describe());
        }
        if (operationType != type) {
            throw new InvalidUsageException(this + " was created for " + type + ", not " + operationType);
        }
    }

    /** Destroys the reduction after the work already issued on its communicator; idempotent. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) communicator.destroyReduceOp(this);
    }
}
