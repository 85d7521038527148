/**
 * jccl's JDK Flight Recorder events: {@link org.jccl.core.jfr.OperationEvent} (every operation, issue → launch →
 * completion), {@link org.jccl.core.jfr.LifecycleEvent} (creation, split, close, abort, set-up calls),
 * {@link org.jccl.core.jfr.TimeoutEvent}, {@link org.jccl.core.jfr.StallEvent} and
 * {@link org.jccl.core.jfr.NcclActivityEvent} (NCCL's profiler events, attributed to jccl's operations);
 * {@link org.jccl.core.jfr.JfrSettings}
 * reads {@code jccl.jfc}, the settings that record them. The engine reaches them only through
 * {@link org.jccl.core.jfr.JfrEvents}, which costs a disabled event a few reads and no allocation.
 */
@NullMarked
package org.jccl.core.jfr;

import org.jspecify.annotations.NullMarked;
