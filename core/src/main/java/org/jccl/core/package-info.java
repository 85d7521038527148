/**
 * jccl's API: {@link org.jccl.core.Jccl} opens a {@link org.jccl.core.Backend}; a backend allocates
 * {@link org.jccl.core.Buffer}s and creates {@link org.jccl.core.Communicator}s; every operation returns a
 * {@link org.jccl.core.Work} completed by the one event thread. Arguments are checked here ({@code Validation})
 * and operations lowered for drivers ({@code Lowering}) before the engine ({@code org.jccl.core.engine}) takes them;
 * backends implement {@code org.jccl.core.spi}.
 */
@NullMarked
package org.jccl.core;

import org.jspecify.annotations.NullMarked;
