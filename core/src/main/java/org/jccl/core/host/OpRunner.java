package org.jccl.core.host;

import java.util.ArrayList;
import java.util.List;
import org.jccl.core.OpKind;
import org.jccl.core.error.Errors;

/**
 * Runs the operations of one stream task (one operation, or one stream's part of a group) on the stream's thread.
 *
 * <p>A group never deadlocks on its sends and receives, whatever their order: all sends are posted first (without
 * waiting), then the collectives run in order, then the receives complete in order, then the task waits until its
 * sends were consumed. A failure records the rank's async error before the task returns, that is before any
 * event recorded after it can complete.
 */
final class OpRunner {
    private OpRunner() {
    }

    static void run(List<HostOp> ops) {
        List<HostOp> prepared = ops;
        List<HostMemoryBlock> sendCopies = List.of();
        for (int i = 0; i < ops.size(); i++) {
            if (!ops.get(i).isInPlaceAllToAllv()) continue;
            if (prepared == ops) {
                prepared = new ArrayList<>(ops);
                sendCopies = new ArrayList<>();
            }
            HostOp reading = ops.get(i).withSendCopy();
            prepared.set(i, reading);
            sendCopies.add(reading.send);
        }
        try {
            runOps(prepared);
        } finally {
            for (HostMemoryBlock copy : sendCopies) copy.release();
        }
    }

    private static void runOps(List<HostOp> ops) {
        HostOp current = ops.get(0);
        try {
            for (HostOp op : ops) {
                current = op;
                checkUsable(op);
            }
            if (ops.size() == 1) {
                runAlone(current);
                return;
            }
            Object[] posted = new Object[ops.size()];
            for (int i = 0; i < ops.size(); i++) {
                HostOp op = ops.get(i);
                current = op;
                if (op.kind == OpKind.SEND) posted[i] = op.comm.transport().postSend(op.comm.rank(), op);
            }
            for (HostOp op : ops) {
                current = op;
                if (!op.kind.isPointToPoint()) op.comm.transport().collective(op.comm.rank(), op);
            }
            for (HostOp op : ops) {
                current = op;
                if (op.kind == OpKind.RECV) op.comm.transport().receive(op.comm.rank(), op);
            }
            for (int i = 0; i < ops.size(); i++) {
                current = ops.get(i);
                if (posted[i] != null) current.comm.transport().awaitConsumed(current.comm.rank(), posted[i]);
            }
        } catch (CliqueFailedException e) {
            for (HostOp op : ops) op.comm.fail(e.resultCode(), current + ": " + e.getMessage());
        } catch (RuntimeException e) {
            for (HostOp op : ops) {
                op.comm.transport().poison("rank " + op.comm.rank() + " failed: " + e);
                op.comm.fail(Errors.INTERNAL_ERROR, current + " failed on the host backend: " + e);
            }
        }
    }

    private static void runAlone(HostOp op) {
        HostTransport t = op.comm.transport();
        int rank = op.comm.rank();
        switch (op.kind) {
            case SEND -> t.awaitConsumed(rank, t.postSend(rank, op));
            case RECV -> t.receive(rank, op);
            default -> t.collective(rank, op);
        }
    }

    /** A rank that already failed runs nothing more: its clique is poisoned or it was aborted. */
    private static void checkUsable(HostOp op) {
        if (op.comm.asyncError() != Errors.SUCCESS) {
            throw new CliqueFailedException("rank " + op.comm.rank() + " already failed: " + op.comm.lastError(),
                    op.comm.asyncError());
        }
        String poisoned = op.comm.transport().poisoned();
        if (poisoned != null) throw CliqueFailedException.poisoned(poisoned, op.comm.transport().poisonCode());
    }
}
