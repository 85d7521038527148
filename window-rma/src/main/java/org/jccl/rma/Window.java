package org.jccl.rma;

import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.error.WorkTimeoutException;
import org.jccl.core.module.Holds;
import org.jccl.core.module.Retention;
import org.jccl.core.spi.Feature;
import org.jccl.core.spi.MemoryRef;
import org.jccl.core.spi.OneSidedComm;

/**
 * A buffer registered as a memory window of a communicator ({@code ncclCommWindowRegister}): peers put into it with
 * {@link OneSided#putSignal}. Registered collectively by every rank, with one size on every rank. The window keeps
 * its buffer's memory alive; {@link #closeAsync()} deregisters it — collectively again, so every rank closes it —
 * after every operation issued before the close has completed.
 */
public final class Window implements AutoCloseable {
    private final OneSided owner;
    private final Buffer buffer;
    private final MemoryRef memory;
    private final long handle;
    private final Set<WindowFlag> flags;
    private final AtomicReference<CompletableFuture<Void>> closing = new AtomicReference<>();
    private final Holds holds;

    Window(OneSided owner, Buffer buffer, MemoryRef memory, long handle, Set<WindowFlag> flags) {
        this.owner = owner;
        this.buffer = buffer;
        this.memory = memory;
        this.handle = handle;
        this.flags = flags.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(flags));
        this.holds = new Holds("window of " + owner.communicator().describe());
    }

    /** The communicator the window belongs to. */
    public Communicator communicator() {
        return owner.communicator();
    }

    /** This rank's part of the window. */
    public Buffer buffer() {
        return buffer;
    }

    /** The window's size in bytes, the same on every rank. */
    public long byteSize() {
        return buffer.byteSize();
    }

    /** The flags it was registered with. */
    public Set<WindowFlag> flags() {
        return flags;
    }

    /** The library's handle ({@code ncclWindow_t}), for code that calls the library itself. */
    public long handle() {
        return handle;
    }

    /** Whether {@link #closeAsync()} was called. */
    public boolean isClosed() {
        return closing.get() != null;
    }

    /**
     * {@code ncclWinGetUserPtr}: the address the library registered, answered on the launch thread.
     *
     * @throws org.jccl.core.error.UnsupportedFeatureException if the library lacks the function (before 2.29.2)
     */
    public CompletableFuture<Long> userPointer() {
        checkOpen();
        owner.communicator().backend().features().require(Feature.WIN_GET_USER_PTR);
        OneSidedComm driver = owner.driver();
        return owner.context().call("ncclWinGetUserPtr", () -> driver.windowUserPointer(handle));
    }

    /**
     * Deregisters the window once everything issued on the communicator before this call has completed (a put into
     * or from it, a wait for its signals) and every step that captured an operation using it is closed, then
     * releases the buffer's memory. Collective: every rank closes its window. New operations on it are refused at
     * once. Idempotent: later calls return the same future. Once the communicator was closed or aborted there is
     * nothing left to deregister (the library freed the window with it) and the future completes normally.
     */
    public CompletableFuture<Void> closeAsync() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        if (!closing.compareAndSet(null, done)) return closing.get();
        owner.forget(this);
        holds.closing().thenCompose(v -> owner.deregister(this)).whenComplete((v, error) -> {
            memory.block().release();
            // A communicator that was closed or aborted took its windows with it: nothing is left to deregister.
            if (error != null && communicator().isOpen()) done.completeExceptionally(Errors.unwrap(error));
            else done.complete(null);
        });
        return done;
    }

    /** {@link #closeAsync()}, waiting for it; never call it on the event thread. */
    @Override
    public void close() {
        try {
            closeAsync().get(owner.communicator().options().closeTimeout().toMillis() + 5_000, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException e) {
            throw Errors.unwrap(e.getCause());
        } catch (TimeoutException e) {
            throw new WorkTimeoutException(this + ": deregistration did not finish");
        }
    }

    /**
     * What a step capturing an operation on this window keeps (for modules building such operations, e.g. a kernel
     * launch taking the window): the deregistration waits until every step holding it is closed.
     */
    public Retention retention() {
        return holds.retention();
    }

    /** The memory the window covers, for the range checks of puts. */
    MemoryRef memory() {
        return memory;
    }

    OneSided owner() {
        return owner;
    }

    void checkOpen() {
        if (isClosed()) throw new InvalidUsageException(this + " is closed");
    }

    /** Whether {@code bytes} at {@code ref} lie inside this rank's part of the window. */
    boolean contains(MemoryRef ref, long bytes) {
        return ref.block() == memory.block() && ref.offset() >= memory.offset()
                && ref.offset() + bytes <= memory.offset() + byteSize();
    }

    @Override
    public String toString() {
        return "Window[" + byteSize() + " bytes" + (flags.isEmpty() ? "" : ", " + flags) + ", " + owner.communicator().describe() + "]";
    }
}
