package org.jccl.core;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.JcclException;
import org.jccl.core.spi.Driver;
import org.jccl.core.spi.DriverEvent;
import org.jccl.core.spi.MemoryBlock;

/**
 * A group call: several operations, on one or several communicators, issued between one {@code ncclGroupStart}
 * and {@code ncclGroupEnd} on one thread; one {@link Work} completes when all have. Sends and receives in one
 * group never deadlock, whatever their order. Operations are validated as they are added.
 *
 * <pre>{@code
 * Work w = Group.create()
 *     .add(comm, Operation.send(buf, n, DataType.FLOAT32, peer))
 *     .add(comm, Operation.recv(other, n, DataType.FLOAT32, peer))
 *     .submit();
 * }</pre>
 */
public final class Group {
    /** Serializes groups over several communicators, so their launch threads are claimed in one global order. */
    private static final Object MULTI_COMMUNICATOR_ORDER = new Object();

    private final Map<Communicator, List<Operation>> operations = new LinkedHashMap<>();

    private Group() {
    }

    public static Group create() {
        return new Group();
    }

    /** Adds an operation of {@code communicator}; throws at once if its arguments are bad. */
    public Group add(Communicator communicator, Operation operation) {
        Objects.requireNonNull(communicator, "communicator");
        Objects.requireNonNull(operation, "operation");
        Validation.check(communicator, operation);
        Communicator first = operations.isEmpty() ? null : operations.keySet().iterator().next();
        if (first != null && first.backend() != communicator.backend()) {
            throw new InvalidArgumentException("a group's communicators must share one backend");
        }
        operations.computeIfAbsent(communicator, c -> new ArrayList<>()).add(operation);
        return this;
    }

    /** Issues the group; each communicator's part follows the work it already issued. */
    public Work submit() {
        if (operations.isEmpty()) throw new InvalidArgumentException("a group needs at least one operation");
        Communicator first = operations.keySet().iterator().next();
        return new Launch(new ArrayList<>(operations.keySet()), new ArrayList<>(operations.values()),
                first.options().timeout()).issue();
    }

    /**
     * {@code ncclGroupSimulateEnd}: what the library estimates the group would take, in microseconds, without
     * launching it. Runs in issue order on the first communicator's launch thread.
     */
    public CompletableFuture<Float> simulate() {
        if (operations.isEmpty()) throw new InvalidArgumentException("a group needs at least one operation");
        List<Communicator> comms = new ArrayList<>(operations.keySet());
        List<List<Operation>> ops = new ArrayList<>(operations.values());
        Communicator first = comms.get(0);
        first.backend().driver().features().require("ncclGroupSimulateEnd");
        return first.onLaunchThread("groupSimulateEnd", () -> {
            Driver driver = first.backend().driver();
            driver.groupStart();
            for (int i = 0; i < comms.size(); i++) {
                for (Operation op : ops.get(i)) driver.launch(comms.get(i).driverComm(), op, comms.get(i).stream().driverStream());
            }
            return driver.groupSimulateEnd();
        });
    }

    /** The issue path of every operation: one communicator's single operation is a group of one. */
    static final class Launch {
        private final List<Communicator> comms;
        private final List<List<Operation>> ops;
        private final java.time.Duration timeout;

        Launch(List<Communicator> comms, List<List<Operation>> ops, java.time.Duration timeout) {
            this.comms = comms;
            this.ops = ops;
            this.timeout = timeout;
        }

        Work issue() {
            if (comms.size() == 1) {
                Communicator c = comms.get(0);
                synchronized (c.submitLock()) {
                    Work w = prepare();
                    JcclException refused = c.admit(w);
                    if (refused != null) return refuse(w, refused);
                    c.launchQueue().submit(() -> launch(w));
                    return w;
                }
            }
            synchronized (MULTI_COMMUNICATOR_ORDER) {
                return issueAcross();
            }
        }

        /**
         * Several communicators: their launch threads are claimed in one global order (under
         * {@link #MULTI_COMMUNICATOR_ORDER}), the others wait while the first issues the whole group on one thread.
         */
        private Work issueAcross() {
            Work w = prepare();
            for (int i = 0; i < comms.size(); i++) {
                Communicator c = comms.get(i);
                synchronized (c.submitLock()) {
                    JcclException refused = c.admit(w);
                    if (refused != null) {
                        for (int j = 0; j < i; j++) comms.get(j).finished(w);
                        return refuse(w, refused);
                    }
                }
            }
            CountDownLatch claimed = new CountDownLatch(comms.size() - 1);
            CountDownLatch done = new CountDownLatch(1);
            for (int i = 1; i < comms.size(); i++) {
                comms.get(i).launchQueue().submit(() -> {
                    claimed.countDown();
                    awaitUninterruptibly(done);
                });
            }
            comms.get(0).launchQueue().submit(() -> {
                awaitUninterruptibly(claimed);
                try {
                    launch(w);
                } finally {
                    done.countDown();
                }
            });
            return w;
        }

        private Work prepare() {
            Communicator first = comms.get(0);
            int total = 0;
            for (List<Operation> list : ops) total += list.size();
            long[] sequences = new long[total];
            MemoryBlock[] blocks = new MemoryBlock[total * 4];
            int b = 0;
            int k = 0;
            for (int i = 0; i < comms.size(); i++) {
                Communicator c = comms.get(i);
                synchronized (c.submitLock()) {
                    for (Operation op : ops.get(i)) {
                        sequences[k++] = c.nextSequence();
                        b = addBlocks(op, blocks, b);
                    }
                }
            }
            // Each buffer is retained once per use and released as often, so repeats need no removal.
            MemoryBlock[] held = b == blocks.length ? blocks : java.util.Arrays.copyOf(blocks, b);
            Work w = new Work(sequences[0], () -> describe(sequences), first, held, timeout.toNanos());
            w.participants(comms.toArray(new Communicator[0]));
            return w;
        }

        /** e.g. {@code [comm=3f2a rank=0/2] allReduce(seq=17, ...)} or {@code ... group(send(seq=3, ...), recv(seq=4, ...))}. */
        private String describe(long[] sequences) {
            StringBuilder sb = new StringBuilder(comms.get(0).describe()).append(' ');
            boolean group = sequences.length > 1;
            if (group) sb.append("group(");
            int k = 0;
            for (int i = 0; i < comms.size(); i++) {
                for (Operation op : ops.get(i)) {
                    if (k > 0) sb.append(", ");
                    if (i > 0) sb.append(comms.get(i).describe()).append(' ');
                    sb.append(op.describe(sequences[k++]));
                }
            }
            return group ? sb.append(')').toString() : sb.toString();
        }

        private static int addBlocks(Operation op, MemoryBlock[] blocks, int at) {
            if (op.send() != null) blocks[at++] = op.send().memoryBlock();
            if (op.recv() != null) blocks[at++] = op.recv().memoryBlock();
            if (op.bias() != null) blocks[at++] = op.bias().memoryBlock();
            if (op.op() instanceof PreMulSum p && p.deviceScalar() != null) blocks[at++] = p.deviceScalar().memoryBlock();
            return at;
        }

        private static Work refuse(Work w, JcclException reason) {
            w.releaseMemory();
            w.fail(Errors.forWork(reason, w.describe()));
            return w;
        }

        /** On the (first) launch thread: enqueue everything, then record the one completion event. */
        private void launch(Work w) {
            for (Communicator c : comms) {
                JcclException f = c.failure();
                if (f != null) {
                    failLaunch(w, f);
                    return;
                }
            }
            Communicator first = comms.get(0);
            Backend backend = first.backend();
            Driver driver = backend.driver();
            boolean grouped = comms.size() > 1 || ops.get(0).size() > 1;
            for (Communicator c : comms) c.inLibrary(true);
            try {
                if (grouped) driver.groupStart();
                try {
                    for (int i = 0; i < comms.size(); i++) {
                        Communicator c = comms.get(i);
                        for (Operation op : ops.get(i)) driver.launch(c.driverComm(), op, c.stream().driverStream());
                    }
                } finally {
                    if (grouped) driver.groupEnd();
                }
                // One event per work: the first stream waits for the others' parts, then records it.
                for (int i = 1; i < comms.size(); i++) {
                    Stream other = comms.get(i).stream();
                    DriverEvent join = backend.engine().takeEvent(other.device());
                    join.record(other.driverStream());
                    first.stream().driverStream().waitEvent(join);
                    backend.engine().recycle(join);
                }
                backend.engine().recordAndTrack(w, first.stream());
            } catch (JcclException e) {
                failLaunch(w, e);
            } catch (RuntimeException e) {
                failLaunch(w, new JcclException("launch failed: " + e, e));
            } finally {
                for (Communicator c : comms) c.inLibrary(false);
            }
        }

        private void failLaunch(Work w, JcclException e) {
            w.releaseMemory();
            w.fail(Errors.forWork(e, w.describe()));
            for (Communicator c : comms) c.finished(w);
        }

        private static void awaitUninterruptibly(CountDownLatch latch) {
            boolean interrupted = false;
            while (true) {
                try {
                    latch.await();
                    break;
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) Thread.currentThread().interrupt();
        }
    }
}
