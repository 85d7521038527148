/**
 * The engine: how one operation travels from the caller to its completion. Not API: applications use
 * {@code org.jccl.core}; modules that build on core use {@link org.jccl.core.module.ModuleContext}.
 *
 * <p>The path of one operation, in three files:
 * <ol>
 *   <li>{@link org.jccl.core.engine.IssuePath}: admission under the communicator's submit lock (sequence number,
 *       pending set), the hand-off to the communicator's launch queue, the native enqueue, the completion event
 *       recorded on the stream;</li>
 *   <li>{@link org.jccl.core.engine.EventLoop}: the one event thread polls the oldest event of every active stream,
 *       updates the books, then completes the work;</li>
 *   <li>{@link org.jccl.core.engine.TrackedWork}: what the engine knows of one work (sequence, held memory, event,
 *       deadline, participants) and the only way it completes.</li>
 * </ol>
 * {@link org.jccl.core.engine.CommunicatorState} is one communicator's state machine (open, closing, closed,
 * aborted), its pending works and its watchdog checks (async error, deadlines).
 */
@NullMarked
package org.jccl.core.engine;

import org.jspecify.annotations.NullMarked;
