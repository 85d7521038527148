package org.jccl.core.module;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jccl.core.Buffer;

/**
 * An operation of a module built on core (a put, a signal, a kernel launch), as data: what it is, the buffers it
 * uses (kept alive until it completes) and what it enqueues on the communicator's stream from the launch thread.
 * Made by the module after it checked the arguments; issued alone ({@link ModuleContext#issue}) or as a member of a
 * group ({@code Group.add(Communicator, StreamOperation)}).
 *
 * @param what a description for messages, e.g. {@code putSignal(count=8, peer=1)}
 * @param uses the buffers the operation reads or writes
 * @param task what it enqueues
 */
public record StreamOperation(String what, List<Buffer> uses, StreamTask task) {
    public StreamOperation {
        Objects.requireNonNull(what, "what");
        uses = List.copyOf(uses);
        Objects.requireNonNull(task, "task");
    }

    /** Several operations enqueued one after the other as one: one work, one completion event. */
    public static StreamOperation sequence(String what, StreamOperation... steps) {
        List<Buffer> uses = new ArrayList<>();
        for (StreamOperation s : steps) uses.addAll(Objects.requireNonNull(s, "step").uses());
        StreamOperation[] copy = steps.clone();
        return new StreamOperation(what, uses, stream -> {
            for (StreamOperation s : copy) s.task().enqueue(stream);
        });
    }

    /** The name metrics tag: {@code what} up to its arguments ({@code putSignal}). */
    public String name() {
        int open = what.indexOf('(');
        return open < 0 ? what : what.substring(0, open);
    }

    /** {@code putSignal(count=8)} with sequence 5 reads {@code putSignal(seq=5, count=8)}, as core's operations do. */
    public String describe(long sequence) {
        int open = what.indexOf('(');
        if (open < 0) return what + "(seq=" + sequence + ")";
        boolean empty = what.startsWith(")", open + 1);
        return what.substring(0, open + 1) + "seq=" + sequence + (empty ? "" : ", ") + what.substring(open + 1);
    }
}
