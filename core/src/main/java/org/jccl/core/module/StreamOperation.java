package org.jccl.core.module;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jccl.core.Buffer;

/**
 * An operation of a module built on core (a put, a signal, a kernel launch), as data: what it is, the buffers it
 * uses (kept alive until it completes), what it enqueues on the communicator's stream from the launch thread, and
 * what a step capturing it must keep alive besides. Made by the module after it checked the arguments; issued alone
 * ({@link ModuleContext#issue}), as a member of a group ({@code Group.add(Communicator, StreamOperation)}) or captured
 * in a step ({@code Step.Builder.add}).
 *
 * @param what      a description for messages, e.g. {@code putSignal(count=8, peer=1)}
 * @param uses      the buffers the operation reads or writes
 * @param task      what it enqueues
 * @param retention what a step that captured it keeps alive until closed (a window, a device communicator)
 */
public record StreamOperation(String what, List<Buffer> uses, StreamTask task, Retention retention) {
    public StreamOperation {
        Objects.requireNonNull(what, "what");
        uses = List.copyOf(uses);
        Objects.requireNonNull(task, "task");
        Objects.requireNonNull(retention, "retention");
    }

    /** An operation that needs nothing kept alive beyond its buffers. */
    public StreamOperation(String what, List<Buffer> uses, StreamTask task) {
        this(what, uses, task, Retention.NONE);
    }

    /** Several operations enqueued one after the other as one: one work, one completion event. */
    public static StreamOperation sequence(String what, StreamOperation... steps) {
        List<Buffer> uses = new ArrayList<>();
        List<Retention> retentions = new ArrayList<>();
        for (StreamOperation s : steps) {
            uses.addAll(Objects.requireNonNull(s, "step").uses());
            retentions.add(s.retention());
        }
        StreamOperation[] copy = steps.clone();
        return new StreamOperation(what, uses, stream -> {
            for (StreamOperation s : copy) s.task().enqueue(stream);
        }, Retention.all(retentions));
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
