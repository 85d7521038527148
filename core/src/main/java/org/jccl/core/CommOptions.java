package org.jccl.core;

import java.time.Duration;
import org.jccl.core.config.JcclSettings;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;

/**
 * jccl's own per-communicator options (NCCL's own live in {@link CommConfig}). Immutable; {@link #defaults()}
 * reads the documented defaults, which the properties and variables in {@link JcclSettings} may override.
 *
 * @param timeout       how long a work may stay pending before its {@link #timeoutPolicy()} applies; zero means never
 * @param timeoutPolicy what a timeout does
 * @param closeTimeout  how long {@code close()} waits for pending work to drain before it aborts instead
 */
public record CommOptions(Duration timeout, TimeoutPolicy timeoutPolicy, Duration closeTimeout) {
    /** Default work timeout: 10 minutes, like torch.distributed's NCCL default. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofMinutes(10);
    /** Default timeout policy: abort, as a mismatched issue order never recovers. */
    public static final TimeoutPolicy DEFAULT_TIMEOUT_POLICY = TimeoutPolicy.ABORT_COMMUNICATOR;
    /** Default drain time of {@code close()}: 30 seconds. */
    public static final Duration DEFAULT_CLOSE_TIMEOUT = Duration.ofSeconds(30);

    public CommOptions {
        Errors.requireArgument(timeout, "timeout");
        Errors.requireArgument(timeoutPolicy, "timeoutPolicy");
        Errors.requireArgument(closeTimeout, "closeTimeout");
        if (timeout.isNegative()) throw new InvalidArgumentException("timeout must not be negative: " + timeout);
        if (closeTimeout.isNegative()) throw new InvalidArgumentException("closeTimeout must not be negative: " + closeTimeout);
    }

    /** The defaults, as overridden by {@code jccl.timeout}, {@code jccl.timeoutPolicy}, {@code jccl.closeTimeout}. */
    public static CommOptions defaults() {
        return new CommOptions(JcclSettings.workTimeout(), JcclSettings.timeoutPolicy(), JcclSettings.closeTimeout());
    }

    public CommOptions withTimeout(Duration timeout) {
        return new CommOptions(timeout, timeoutPolicy, closeTimeout);
    }

    public CommOptions withTimeoutPolicy(TimeoutPolicy policy) {
        return new CommOptions(timeout, policy, closeTimeout);
    }

    public CommOptions withCloseTimeout(Duration closeTimeout) {
        return new CommOptions(timeout, timeoutPolicy, closeTimeout);
    }
}
