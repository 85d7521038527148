package org.jccl.device;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.jccl.core.Communicator;
import org.jccl.core.Work;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.module.Holds;
import org.jccl.core.module.ModuleContext;
import org.jccl.core.module.Retention;
import org.jccl.core.module.StreamOperation;
import org.jccl.core.spi.DevCommHandle;
import org.jccl.core.spi.DeviceCommSupport;
import org.jspecify.annotations.Nullable;

/**
 * A device communicator ({@code ncclDevComm}): what a kernel needs to reach its peers' windows by load/store (LSA),
 * sync with them (barriers) and, where the communicator has GIN, signal them. Pass it to a kernel with
 * {@link KernelArgs#deviceComm}; it goes by value, as NCCL's kernels take it.
 *
 * <p>Closing is deferred: the collective {@code ncclDevCommDestroy} runs once every kernel launched with it before
 * the close has completed; a launch after the close is refused. Close it on every rank.
 */
public final class DeviceComm implements AutoCloseable {
    private final Communicator communicator;
    private final DeviceApi owner;
    private final ModuleContext context;
    private final DevCommHandle handle;
    private final byte[] bytes;
    private final int rank;
    private final int size;
    private final int lsaRank;
    private final int lsaSize;
    private final int ginContextCount;
    private final int ginSignalCount;
    private final int ginCounterCount;
    private final DeviceCommRequirements requirements;
    private boolean closed; // guarded by this
    private boolean destroyed; // written and read on the communicator's launch thread only
    private @Nullable CompletableFuture<Void> destruction; // guarded by this
    private final Holds holds;

    /** Reads the handle once: called after the work that created it completed. */
    DeviceComm(DeviceApi owner, ModuleContext context, DevCommHandle handle, DeviceCommRequirements requirements) {
        this.communicator = context.communicator();
        this.owner = owner;
        this.context = context;
        this.handle = handle;
        this.requirements = requirements;
        this.bytes = handle.bytes();
        this.rank = handle.rank();
        this.size = handle.size();
        this.lsaRank = handle.lsaRank();
        this.lsaSize = handle.lsaSize();
        this.ginContextCount = handle.ginContextCount();
        this.ginSignalCount = handle.ginSignalCount();
        this.ginCounterCount = handle.ginCounterCount();
        this.holds = new Holds("device communicator of " + communicator.describe());
    }

    public Communicator communicator() {
        return communicator;
    }

    /** The requirements it was created with. */
    public DeviceCommRequirements requirements() {
        return requirements;
    }

    /** Its rank among all ranks. */
    public int rank() {
        return rank;
    }

    public int size() {
        return size;
    }

    /** This rank's index in its load/store-accessible team (the ranks it reaches over NVLink). */
    public int lsaRank() {
        return lsaRank;
    }

    /** The LSA team's size. */
    public int lsaSize() {
        return lsaSize;
    }

    /** The GIN contexts it got (the requirement was a hint); -1 where this jccl cannot read it for the loaded version. */
    public int ginContextCount() {
        return ginContextCount;
    }

    /** GIN signals, numbered from 0; -1 where unknown. */
    public int ginSignalCount() {
        return ginSignalCount;
    }

    /** GIN counters, numbered from 0; -1 where unknown. */
    public int ginCounterCount() {
        return ginCounterCount;
    }

    /** The {@code ncclDevComm} bytes a kernel receives (a copy). */
    public byte[] bytes() {
        return bytes.clone();
    }

    public synchronized boolean isClosed() {
        return closed;
    }

    /**
     * Runs {@code issue} unless closed, so that a launch is either issued before the close's drain marker or refused.
     *
     * @throws InvalidUsageException if closed
     */
    synchronized <T> T whileOpen(Supplier<T> issue) {
        if (closed) throw new InvalidUsageException(this + " is closed");
        return issue.get();
    }

    /** On the launch thread, when a group's task is about to enqueue a kernel using it. */
    void checkNotDestroyed() {
        if (destroyed) throw new InvalidUsageException(this + " was destroyed before the group using it was issued");
    }

    /** What a step capturing a launch that uses it keeps: the destruction waits for it. */
    Retention retention() {
        return holds.retention();
    }

    /**
     * Destroys it after every kernel issued before and once every step that captured a launch using it is closed: a
     * marker on the stream, then the collective {@code ncclDevCommDestroy}. New launches with it are refused at once.
     * Idempotent; the future completes when destroyed, or normally when the communicator was already closed or
     * aborted (the library freed it with the communicator).
     */
    public CompletableFuture<Void> closeAsync() {
        synchronized (this) {
            if (destruction != null) return destruction;
            closed = true;
            owner.forget(this);
            CompletableFuture<Work> drained = holds.closing().thenApply(v ->
                    context.issue(new StreamOperation("deviceCommDrain()", List.of(), stream -> { }), Duration.ZERO));
            destruction = drained.thenCompose(w -> w.handle((v, error) -> null)).thenCompose(v -> context.call("ncclDevCommDestroy", () -> {
                destroyed = true;
                context.capability(DeviceCommSupport.class).devCommDestroy(handle);
                return (Void) null;
            })).whenComplete((v, error) -> handle.free()) // also when the communicator was closed or aborted first
                    // A communicator that is gone took its device communicators with it: nothing is left to destroy.
                    .exceptionallyCompose(e -> communicator.isOpen() ? CompletableFuture.failedFuture(e)
                            : CompletableFuture.completedFuture(null));
            return destruction;
        }
    }

    /** {@link #closeAsync()} without waiting: the destruction follows the kernels already issued. */
    @Override
    public void close() {
        closeAsync();
    }

    @Override
    public String toString() {
        return "DeviceComm(rank=" + rank + "/" + size + ", lsa=" + lsaRank + "/" + lsaSize + ", " + communicator.describe() + ")";
    }

    static DeviceComm requireOpen(DeviceComm d) {
        Errors.requireArgument(d, "deviceComm");
        if (d.isClosed()) throw new InvalidUsageException(d + " is closed");
        return d;
    }
}
