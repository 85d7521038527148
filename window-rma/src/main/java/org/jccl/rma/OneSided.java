package org.jccl.rma;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Modules;
import org.jccl.core.Work;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.UnsupportedFeatureException;
import org.jccl.core.module.Attachment;
import org.jccl.core.module.AttachmentKey;
import org.jccl.core.module.ModuleContext;
import org.jccl.core.module.Retention;
import org.jccl.core.module.StreamOperation;
import org.jccl.core.spi.Feature;
import org.jccl.core.spi.MemoryKind;
import org.jccl.core.spi.MemoryRef;
import org.jccl.core.spi.OneSidedComm;
import org.jccl.core.spi.OneSidedLimits;
import org.jccl.core.spi.WaitDescriptor;
import org.jspecify.annotations.Nullable;

/**
 * Memory windows and one-sided operations of one communicator: {@code ncclCommWindowRegister},
 * {@code ncclPutSignal}, {@code ncclSignal} and {@code ncclWaitSignal}, issued in call order with the communicator's
 * other operations and completing on its stream like them.
 *
 * <pre>{@code
 * OneSided rma = OneSided.of(comm);
 * Window win = rma.register(rma.allocate(bytes), WindowFlag.COLL_SYMMETRIC).join();  // every rank
 * rma.putSignal(win.buffer().slice(0, n * 4), n, DataType.FLOAT32, peer, win, 0);     // the producer
 * rma.waitSignal(SignalWait.of(producer, 1));                                         // the consumer
 * }</pre>
 *
 * <p>A put completes when its local buffer may be reused; a wait completes when the data the awaited signals cover
 * is visible to this rank (to the work issued after it, and to the host once it completed). Arguments are checked
 * before anything is enqueued: a bad one throws and changes nothing.
 */
public final class OneSided {
    private static final AttachmentKey<Attached> KEY = AttachmentKey.of("window-rma", c -> new Attached(new OneSided(c)));

    /** The one instance of a communicator, as its attachment: the library freed the windows with the communicator. */
    private record Attached(OneSided api) implements Attachment {
        @Override
        public void communicatorGone() {
            for (Window w : api.windows) w.closeAsync(); // each releases its buffer's memory
        }
    }

    private final Communicator communicator;
    private final ModuleContext module;
    private final List<Window> windows = new CopyOnWriteArrayList<>();
    private volatile @Nullable OneSidedLimits limits;
    /** Whether {@link #setUpOnce} ran: once per communicator. */
    private final AtomicBoolean setUp = new AtomicBoolean();

    private OneSided(ModuleContext context) {
        this.communicator = context.communicator();
        this.module = context;
    }

    /**
     * The one-sided API of {@code communicator}: one instance per communicator, which knows its windows and is
     * attached to it (its windows' memory is released when the communicator is closed or aborted).
     */
    public static OneSided of(Communicator communicator) {
        return Modules.context(Errors.requireArgument(communicator, "communicator")).attachment(KEY).api();
    }

    /** The driver's windows and one-sided operations for this communicator. */
    OneSidedComm driver() {
        return module.capability(OneSidedComm.class);
    }

    public Communicator communicator() {
        return communicator;
    }

    /** What the communicator's library accepts: signal indices, contexts, window flags and alignment. */
    public OneSidedLimits limits() {
        OneSidedLimits l = limits;
        if (l == null) limits = l = driver().oneSidedLimits();
        return l;
    }

    /** The windows of this communicator registered through this API and not closed. */
    public List<Window> windows() {
        return List.copyOf(windows);
    }

    // ---- windows

    /** Memory for a window, allocated as the library needs it ({@code ncclMemAlloc}); close it after the window. */
    public Buffer allocate(long bytes) {
        return communicator.backend().allocateForCommunication(communicator.device(), bytes);
    }

    /**
     * Registers {@code buffer} as a window with {@code flags}; collective: every rank registers, in the same order,
     * a buffer of the same size. The window keeps the buffer's memory alive until closed. Memory another library
     * allocated ({@code Backend.wrap}, DLPack) is accepted: NCCL registers it if it comes from {@code ncclMemAlloc} or
     * CUDA's virtual memory API ({@code cuMem*}, e.g. PyTorch's expandable segments) and refuses plain
     * {@code cudaMalloc} memory, failing the returned future; the host backend registers any memory.
     *
     * @throws InvalidArgumentException   for an empty buffer, one on another device, one the library cannot
     *                                    register (not {@link #allocate}d memory, not aligned to its rule)
     * @throws UnsupportedFeatureException for a library without windows or a flag it does not know
     */
    public CompletableFuture<Window> register(Buffer buffer, WindowFlag... flags) {
        Errors.requireArgument(buffer, "buffer");
        Errors.requireArgument(flags, "flags");
        communicator.backend().features().require(Feature.COMM_WINDOW_REGISTER);
        MemoryRef ref = module.memory(buffer);
        OneSidedLimits l = limits();
        if (buffer.byteSize() == 0) throw new InvalidArgumentException("a window needs at least one byte: " + buffer);
        // Foreign memory (Backend.wrap, DLPack) goes to the library, which alone can tell whether it is cuMem memory
        // (as PyTorch's expandable segments are) and refuses plain cudaMalloc memory with a typed error.
        MemoryKind kind = ref.block().kind();
        if (l.communicationMemory() && kind != MemoryKind.COMMUNICATION && kind != MemoryKind.FOREIGN) {
            throw new InvalidArgumentException(buffer + " is " + kind + " memory; windows need memory from"
                    + " ncclMemAlloc: allocate it with OneSided.allocate or Backend.allocateForCommunication");
        }
        if (ref.offset() % l.windowAlignment() != 0) {
            throw new InvalidArgumentException(buffer + " starts " + ref.offset() + " bytes into its allocation; a window"
                    + " must start a multiple of " + l.windowAlignment() + " bytes in (NCCL_WIN_REQUIRED_ALIGNMENT)");
        }
        EnumSet<WindowFlag> set = EnumSet.noneOf(WindowFlag.class);
        int code = 0;
        for (WindowFlag f : flags) {
            Errors.requireArgument(f, "flag");
            if ((l.windowFlags() & f.code()) == 0) {
                throw communicator.backend().features().unsupported("window flag " + f, f.firstVersion());
            }
            set.add(f);
            code |= f.code();
        }
        int winFlags = code;
        ref.block().retain();
        CompletableFuture<Long> registered;
        try {
            OneSidedComm driver = driver();
            registered = module.call("ncclCommWindowRegister",
                    () -> driver.windowRegister(ref.block(), ref.offset(), buffer.byteSize(), winFlags));
        } catch (RuntimeException e) {
            ref.block().release();
            throw e;
        }
        return registered.handle((handle, error) -> {
            if (error != null) {
                ref.block().release();
                throw Errors.unwrap(error);
            }
            Window w = new Window(this, buffer, ref, handle, set);
            windows.add(w);
            return w;
        }).thenCompose(this::setUpOnce);
    }

    /**
     * NCCL (2.29) sets up a communicator's one-sided machinery at its first put, signal or wait, and that set-up is
     * collective: it registers a signal window on every rank. A put between two ranks of four would wait in it for
     * the other two forever. Every rank registers windows, in the same order, so jccl takes the set-up there: right
     * after the communicator's first window, a signal to this rank itself and its wait. If that fails, the window
     * stays in {@link #windows()} and is released with the communicator.
     */
    private CompletableFuture<Window> setUpOnce(Window first) {
        if (!communicator.backend().features().has(Feature.SIGNAL) || setUp.getAndSet(true)) {
            return CompletableFuture.completedFuture(first);
        }
        int self = communicator.rank();
        Work done = issue(StreamOperation.sequence("oneSidedSetUp()", signalOperation(self, 0, 0),
                waitSignalOperation(SignalWait.of(self, 1))));
        return done.thenApply(v -> first);
    }

    /**
     * A window of {@code bytes} on each of {@code communicators} — the ranks one process drives — in memory allocated
     * for it: every rank's collective registration is issued before any is waited for (waiting for one first would
     * wait for the others forever). Close them with {@link #closeAll}.
     */
    public static CompletableFuture<List<Window>> registerAll(List<Communicator> communicators, long bytes, WindowFlag... flags) {
        Errors.requireArgument(communicators, "communicators");
        List<CompletableFuture<Window>> registering = new ArrayList<>();
        for (Communicator c : communicators) {
            OneSided rma = of(c);
            registering.add(rma.register(rma.allocate(bytes), flags));
        }
        return CompletableFuture.allOf(registering.toArray(new CompletableFuture<?>[0]))
                .thenApply(v -> registering.stream().map(CompletableFuture::join).toList());
    }

    /** Closes windows from {@link #registerAll}: every deregistration issued first, then their memory freed. */
    public static CompletableFuture<Void> closeAll(List<Window> windows) {
        Errors.requireArgument(windows, "windows");
        List<CompletableFuture<Void>> closing = windows.stream().map(Window::closeAsync).toList();
        return CompletableFuture.allOf(closing.toArray(new CompletableFuture<?>[0]))
                .thenRun(() -> windows.forEach(w -> w.buffer().close()));
    }

    /** Deregisters after everything issued before: a marker on the stream, then the collective call. */
    CompletableFuture<Void> deregister(Window window) {
        Work drained = module.issue(new StreamOperation("windowDrain()", List.of(), stream -> { }), Duration.ZERO);
        return drained.handle((v, error) -> null)
                .thenCompose(v -> module.call("ncclCommWindowDeregister", () -> {
                    driver().windowDeregister(window.handle());
                    return null;
                }));
    }

    void forget(Window window) {
        windows.remove(window);
    }

    ModuleContext context() {
        return module;
    }

    // ---- operations

    /** {@link #putSignal(Window, Buffer, long, DataType, int, long, int, int)} on signal index 0, context 0. */
    public Work putSignal(Window window, Buffer source, long count, DataType type, int peer, long peerOffset) {
        return putSignal(window, source, count, type, peer, peerOffset, 0, 0);
    }

    /**
     * {@code ncclPutSignal}: writes {@code count} elements of {@code type} from {@code source} into {@code peer}'s
     * part of {@code window}, {@code peerOffset} bytes in, then signals ({@code signalIndex}, {@code context}) on
     * {@code peer}. Completes when {@code source} may be reused.
     */
    public Work putSignal(Window window, Buffer source, long count, DataType type, int peer, long peerOffset,
                          int signalIndex, int context) {
        return issue(putSignalOperation(window, source, count, type, peer, peerOffset, signalIndex, context));
    }

    /** {@code ncclSignal} on signal index 0, context 0. */
    public Work signal(int peer) {
        return signal(peer, 0, 0);
    }

    /** {@code ncclSignal}: a signal to {@code peer} without data, ordered after this rank's earlier puts to it. */
    public Work signal(int peer, int signalIndex, int context) {
        return issue(signalOperation(peer, signalIndex, context));
    }

    /** {@code ncclWaitSignal}: completes once every condition's signals arrived and their data is visible here. */
    public Work waitSignal(SignalWait... waits) {
        return issue(waitSignalOperation(waits));
    }

    /** The operation {@link #putSignal} issues, for a {@link org.jccl.core.Group}; checked now. */
    public StreamOperation putSignalOperation(Window window, Buffer source, long count, DataType type, int peer,
                                              long peerOffset, int signalIndex, int context) {
        Errors.requireArgument(window, "window");
        Errors.requireArgument(source, "source");
        Errors.requireArgument(type, "type");
        communicator.backend().features().require(Feature.PUT_SIGNAL);
        checkWindow(window);
        MemoryRef src = module.memory(source);
        if (count < 0) throw new InvalidArgumentException("count must not be negative: " + count);
        long bytes = Errors.exactProduct(count, type.size(), "putSignal: count × element size");
        if (bytes > source.byteSize()) {
            throw new InvalidArgumentException("putSignal of " + count + " " + type + " (" + bytes + " bytes) reads past "
                    + source + " (" + source.byteSize() + " bytes)");
        }
        checkPeer(peer);
        if (peerOffset < 0 || peerOffset > window.byteSize() - bytes) {
            throw new InvalidArgumentException("putSignal of " + bytes + " bytes at offset " + peerOffset + " does not fit"
                    + " rank " + peer + "'s part of " + window + " (" + window.byteSize() + " bytes on every rank)");
        }
        checkSignal(signalIndex, context);
        Window sourceWindow = symmetricWindowOf(src, bytes);
        if (limits().sourceInSymmetricWindow() && sourceWindow == null) {
            throw new InvalidArgumentException("the library needs a put's local buffer inside a window registered with"
                    + " COLL_SYMMETRIC; " + source + " is in none of " + communicator.describe() + "'s: register it, or"
                    + " copy into such a window first");
        }
        OneSidedComm dc = driver();
        long handle = window.handle();
        // A step keeps the target window, and the window holding the source where the library reads it through one.
        Retention retention = sourceWindow == null || sourceWindow == window ? window.retention()
                : Retention.all(List.of(window.retention(), sourceWindow.retention()));
        return new StreamOperation("putSignal(count=" + count + ", type=" + type + ", peer=" + peer + ", offset="
                + peerOffset + ", signal=" + signalIndex + ", context=" + context + ")", List.of(source, window.buffer()),
                stream -> dc.putSignal(src, count, type, peer, handle, peerOffset, signalIndex, context, stream), retention);
    }

    /** The operation {@link #signal} issues, for a {@link org.jccl.core.Group}; checked now. */
    public StreamOperation signalOperation(int peer, int signalIndex, int context) {
        communicator.backend().features().require(Feature.SIGNAL);
        checkPeer(peer);
        checkSignal(signalIndex, context);
        OneSidedComm dc = driver();
        return new StreamOperation("signal(peer=" + peer + ", signal=" + signalIndex + ", context=" + context + ")",
                List.of(), stream -> dc.signal(peer, signalIndex, context, stream));
    }

    /** The operation {@link #waitSignal} issues, for a {@link org.jccl.core.Group}; checked now. */
    public StreamOperation waitSignalOperation(SignalWait... waits) {
        Errors.requireArgument(waits, "waits");
        communicator.backend().features().require(Feature.WAIT_SIGNAL);
        if (waits.length == 0) throw new InvalidArgumentException("waitSignal needs at least one condition");
        WaitDescriptor[] descriptors = new WaitDescriptor[waits.length];
        StringBuilder what = new StringBuilder("waitSignal(");
        for (int i = 0; i < waits.length; i++) {
            SignalWait w = Errors.requireArgument(waits[i], "waits[" + i + "]");
            checkPeer(w.peer());
            if (w.count() <= 0) throw new InvalidArgumentException("a wait needs a positive count of signals, not " + w.count());
            checkSignal(w.signalIndex(), w.context());
            descriptors[i] = new WaitDescriptor(w.count(), w.peer(), w.signalIndex(), w.context());
            what.append(i == 0 ? "" : ", ").append(w.count()).append(" from ").append(w.peer());
        }
        OneSidedComm dc = driver();
        return new StreamOperation(what.append(')').toString(), List.of(), stream -> dc.waitSignal(descriptors, stream));
    }

    private Work issue(StreamOperation op) {
        return module.issue(op);
    }

    // ---- checks

    private void checkWindow(Window window) {
        if (window.owner() != this) {
            throw new InvalidArgumentException(window + " belongs to another communicator than " + communicator.describe());
        }
        window.checkOpen();
    }

    private void checkPeer(int peer) {
        if (peer < 0 || peer >= communicator.size()) {
            throw new InvalidArgumentException("peer " + peer + " is not a rank of " + communicator.describe()
                    + " (0.." + (communicator.size() - 1) + ")");
        }
    }

    private void checkSignal(int signalIndex, int context) {
        OneSidedLimits l = limits();
        if (signalIndex < 0 || signalIndex >= l.signalIndices()) {
            throw new InvalidArgumentException("signal index " + signalIndex + " is out of range: the library accepts 0.."
                    + (l.signalIndices() - 1));
        }
        if (context < 0 || context >= l.contexts()) {
            throw new InvalidArgumentException("context " + context + " is out of range: the library accepts 0.."
                    + (l.contexts() - 1));
        }
    }

    private @Nullable Window symmetricWindowOf(MemoryRef ref, long bytes) {
        for (Window w : windows) {
            if (w.flags().contains(WindowFlag.COLL_SYMMETRIC) && !w.isClosed() && w.contains(ref, bytes)) return w;
        }
        return null;
    }

    /** e.g. {@code OneSided[comm=3f2a rank=0/2], 2 windows}. */
    @Override
    public String toString() {
        return "OneSided" + communicator.describe() + ", " + windows.size() + (windows.size() == 1 ? " window" : " windows");
    }
}
