package org.jccl.core.spi;

import java.util.List;
import java.util.Objects;
import org.jccl.core.Buffer;
import org.jccl.core.Group;

/**
 * An operation of a module built on core (a put, a signal, a kernel launch), in the form a {@link Group} accepts next
 * to core's own operations: what it is, the buffers it uses (kept alive until the group completes) and what it
 * enqueues on the communicator's stream from the launch thread. Made by the module after it checked the arguments.
 *
 * @param what a description for messages, e.g. {@code putSignal(count=8, peer=1)}
 * @param uses the buffers the operation reads or writes
 * @param task what it enqueues
 */
public record StreamOperation(String what, List<Buffer> uses, CommunicatorSpi.StreamTask task) {
    public StreamOperation {
        Objects.requireNonNull(what, "what");
        uses = List.copyOf(uses);
        Objects.requireNonNull(task, "task");
    }

    /** {@code putSignal(count=8)} with sequence 5 reads {@code putSignal(seq=5, count=8)}, as core's operations do. */
    public String describe(long sequence) {
        int open = what.indexOf('(');
        if (open < 0) return what + "(seq=" + sequence + ")";
        boolean empty = what.startsWith(")", open + 1);
        return what.substring(0, open + 1) + "seq=" + sequence + (empty ? "" : ", ") + what.substring(open + 1);
    }
}
