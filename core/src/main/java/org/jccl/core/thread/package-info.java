/**
 * Threads and waiting, shared by the engine and the host driver: {@link org.jccl.core.thread.SerialWorker} (the
 * ordered task thread of launch queues and host streams), {@link org.jccl.core.thread.Backoff} (the one waiting
 * policy: spin, yield, park) and {@link org.jccl.core.thread.EventThreadFactory} (how the event thread is made; the
 * reactive module provides a {@code NonBlocking} one). Depends on nothing else of jccl.
 */
@NullMarked
package org.jccl.core.thread;

import org.jspecify.annotations.NullMarked;
