package org.jccl.core.host;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jccl.core.error.InvalidUsageException;

/**
 * The calling thread's group state ({@code ncclGroupStart}/{@code End} are thread-local and nest): operations
 * launched inside a group are collected per stream, and the outermost end turns each stream's operations into one
 * stream task.
 */
final class HostGroup {
    private static final ThreadLocal<HostGroup> CURRENT = ThreadLocal.withInitial(HostGroup::new);

    private int depth;
    private final Map<HostStream, List<HostOp>> byStream = new LinkedHashMap<>();

    static HostGroup current() {
        return CURRENT.get();
    }

    void start() {
        depth++;
    }

    boolean active() {
        return depth > 0;
    }

    void add(HostStream stream, HostOp op) {
        byStream.computeIfAbsent(stream, s -> new ArrayList<>()).add(op);
    }

    /** Ends one level; at the outermost, enqueues each stream's operations as one task. */
    void end() {
        if (depth == 0) throw new InvalidUsageException("groupEnd without groupStart");
        if (--depth > 0) return;
        List<Map.Entry<HostStream, List<HostOp>>> parts = new ArrayList<>(byStream.entrySet());
        byStream.clear();
        for (Map.Entry<HostStream, List<HostOp>> part : parts) {
            List<HostOp> ops = List.copyOf(part.getValue());
            part.getKey().enqueue(() -> OpRunner.run(ops));
        }
    }

    /**
     * Ends the whole group without launching: the estimate in microseconds. Model: per operation 5 µs of latency
     * plus the bytes it moves through this process at 10 GB/s, with reductions counted twice (read and reduce,
     * then write back), as the host backend moves them.
     */
    float simulateEnd() {
        if (depth == 0) throw new InvalidUsageException("groupSimulateEnd without groupStart");
        double micros = 0;
        for (List<HostOp> ops : byStream.values()) {
            for (HostOp op : ops) {
                double bytes = op.bytes() * (op.kind.reduces() ? 2.0 : 1.0);
                micros += 5.0 + bytes / 10e9 * 1e6;
            }
        }
        byStream.clear();
        depth = 0;
        return (float) micros;
    }
}
