package org.jccl.core;

/** What happens when a work's timeout passes before its event completes. */
public enum TimeoutPolicy {
    /** Fail that work's future with a {@code WorkTimeoutException}; the communicator stays usable. */
    REPORT,
    /** Fail every pending work and abort the communicator, as PyTorch's watchdog does. A mismatched issue order across ranks never recovers otherwise. */
    ABORT_COMMUNICATOR
}
