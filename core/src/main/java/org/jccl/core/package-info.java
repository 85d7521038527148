/**
 * jccl's core API and engine: {@link org.jccl.core.Jccl} opens a {@link org.jccl.core.Backend}; a backend
 * allocates {@link org.jccl.core.Buffer}s and creates {@link org.jccl.core.Communicator}s; every operation returns
 * a {@link org.jccl.core.Work} completed by the one event thread. The engine (launch queues, the event loop,
 * validation) is package-private here; backends implement {@link org.jccl.core.spi}.
 */
@NullMarked
package org.jccl.core;

import org.jspecify.annotations.NullMarked;
