package org.jccl.rma;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.Modules;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.module.ModuleContext;

/**
 * Buffers carved out of one collective-symmetric window of a communicator: registered once (collectively), then
 * allocated and freed without any further collective call. NCCL (2.27+) runs a collective whose buffers lie in such a
 * window, at the same offset on every rank, with its symmetric kernels, faster than on plain memory for small sizes.
 *
 * <pre>{@code
 * SymmetricPool pool = SymmetricPool.create(comm, 64 << 20).join();   // every rank, the same size
 * Buffer x = pool.allocate(4096);                                       // every rank, the same calls in the same order
 * comm.allReduce(x, x, 1024, DataType.FLOAT32, ReduceOp.SUM);
 * x.close();                                                            // back to the pool
 * }</pre>
 *
 * <p>Offsets must agree on every rank, so the allocator is deterministic: first fit at the lowest offset, every
 * allocation rounded up to {@link #ALIGNMENT}, and a closed allocation's range free again at once. The same
 * allocations and closes in the same order on every rank give every rank the same offsets. Reuse is safe by order:
 * work on the communicator's stream runs after the work issued before the close, a closed allocation is refused by
 * later operations (and a step holding it by its replay); what the stream does not order — a synchronous
 * {@link Buffer#write} into a new allocation while the stream still reads the range, work on another stream — is the
 * caller's to wait for, as with freeing memory. Thread-safe.
 */
public final class SymmetricPool implements AutoCloseable {
    /** Every allocation starts and ends on this boundary. */
    public static final long ALIGNMENT = 256;

    private final Window window;
    private final ModuleContext module;
    /** Free runs: offset to length, merged with their neighbours; guarded by this. */
    private final TreeMap<Long, Long> free = new TreeMap<>();
    private long freeBytes;
    private boolean closed;

    private SymmetricPool(Window window) {
        this.window = window;
        this.module = Modules.context(window.communicator());
        free.put(0L, window.byteSize());
        freeBytes = window.byteSize();
    }

    /**
     * A pool of {@code bytes} (rounded up to {@link #ALIGNMENT}) for {@code communicator}: collective, every rank with
     * the same size. Memory from {@link OneSided#allocate}, registered with {@link WindowFlag#COLL_SYMMETRIC}.
     *
     * @throws InvalidArgumentException for a size below one byte
     */
    public static CompletableFuture<SymmetricPool> create(Communicator communicator, long bytes) {
        Errors.requireArgument(communicator, "communicator");
        OneSided rma = OneSided.of(communicator);
        Buffer memory = rma.allocate(rounded(bytes));
        CompletableFuture<Window> registered;
        try {
            registered = rma.register(memory, WindowFlag.COLL_SYMMETRIC);
        } catch (RuntimeException e) {
            memory.close();
            throw e;
        }
        return registered.whenComplete((w, error) -> {
            if (error != null) memory.close();
        }).thenApply(SymmetricPool::new);
    }

    /**
     * {@link #create} on each of {@code communicators}, the ranks one process drives: every registration issued before
     * any is waited for.
     */
    public static CompletableFuture<List<SymmetricPool>> createAll(List<Communicator> communicators, long bytes) {
        Errors.requireArgument(communicators, "communicators");
        List<CompletableFuture<SymmetricPool>> creating = new ArrayList<>();
        for (Communicator c : communicators) creating.add(create(c, bytes));
        return CompletableFuture.allOf(creating.toArray(new CompletableFuture<?>[0]))
                .thenApply(v -> creating.stream().map(CompletableFuture::join).toList());
    }

    /**
     * The pool size that holds allocations of {@code sizes} side by side (each rounded up to {@link #ALIGNMENT}).
     *
     * @throws InvalidArgumentException for a size below one byte
     */
    public static long bytesFor(long... sizes) {
        long total = 0;
        for (long bytes : sizes) total += rounded(bytes);
        return total;
    }

    private static long rounded(long bytes) {
        if (bytes < 1) throw new InvalidArgumentException("a pool or an allocation needs at least one byte, not " + bytes);
        if (bytes > Long.MAX_VALUE - ALIGNMENT) throw new InvalidArgumentException(bytes + " bytes is too many");
        return (bytes + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT;
    }

    /**
     * {@code bytes} of the pool, at the lowest offset where they fit; closing the buffer gives them back.
     *
     * @throws InvalidArgumentException for a size below one byte
     * @throws InvalidUsageException    for a closed pool, or no free run long enough (the message says what is free)
     */
    public synchronized Buffer allocate(long bytes) {
        long size = rounded(bytes);
        if (closed) throw new InvalidUsageException(this + " is closed");
        for (Map.Entry<Long, Long> run : free.entrySet()) {
            long at = run.getKey();
            long length = run.getValue(); // read first: removing a tree node may move another's key and value into it
            if (length < size) continue;
            free.remove(at);
            if (length > size) free.put(at + size, length - size);
            freeBytes -= size;
            return module.part(window.buffer(), at, bytes, () -> release(at, size));
        }
        throw new InvalidUsageException("no room for " + bytes + " bytes in " + this + ": the longest free run is "
                + longestRun() + " bytes");
    }

    private synchronized void release(long at, long size) {
        if (closed) return;
        long start = at;
        long length = size;
        Map.Entry<Long, Long> before = free.floorEntry(at);
        if (before != null && before.getKey() + before.getValue() == at) {
            start = before.getKey();
            length += before.getValue();
            free.remove(start);
        }
        Long after = free.get(at + size);
        if (after != null) {
            free.remove(at + size);
            length += after;
        }
        free.put(start, length);
        freeBytes += size;
    }

    private long longestRun() {
        long longest = 0;
        for (long length : free.values()) longest = Math.max(longest, length);
        return longest;
    }

    /** The bytes not allocated. */
    public synchronized long freeBytes() {
        return freeBytes;
    }

    /** The pool's size, as rounded. */
    public long byteSize() {
        return window.byteSize();
    }

    /** The window the pool carves. */
    public Window window() {
        return window;
    }

    /** Offset of {@code allocation} in the pool: the same on every rank for the same calls. */
    public long offsetOf(Buffer allocation) {
        Errors.requireArgument(allocation, "allocation");
        long offset = allocation.address() - window.buffer().address();
        if (offset < 0 || offset >= window.byteSize()) throw new InvalidArgumentException(allocation + " is not in " + this);
        return offset;
    }

    /**
     * Closes the pool: later allocations are refused, every allocation is closed with it, and the window is
     * deregistered (collective, after everything issued before) and its memory freed. Idempotent.
     */
    public CompletableFuture<Void> closeAsync() {
        synchronized (this) {
            closed = true;
        }
        return window.closeAsync().thenRun(() -> window.buffer().close());
    }

    /** {@link #closeAsync()}, waited for. */
    @Override
    public void close() {
        closeAsync().join();
    }

    @Override
    public synchronized String toString() {
        return "SymmetricPool[" + window.byteSize() + " bytes, " + freeBytes + " free, " + window.communicator().describe() + "]";
    }
}
