package org.jccl.device;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Supplier;
import org.jccl.core.Communicator;
import org.jccl.core.Group;
import org.jccl.core.Modules;
import org.jccl.core.Stream;
import org.jccl.core.Work;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.error.UnsupportedFeatureException;
import org.jccl.core.module.Attachment;
import org.jccl.core.module.AttachmentKey;
import org.jccl.core.module.ModuleContext;
import org.jccl.core.module.Retention;
import org.jccl.core.module.StreamOperation;
import org.jccl.core.spi.DevCommHandle;
import org.jccl.core.spi.DeviceCommSupport;
import org.jccl.core.spi.Feature;
import org.jccl.core.spi.KernelRuntime;
import org.jspecify.annotations.Nullable;

/**
 * NCCL's device API for one communicator: its {@link DeviceProperties}, device communicators
 * ({@code ncclDevCommCreate}) and kernels launched on its stream. Everything is issued in call order with the
 * communicator's other operations and completes on the event thread; no call waits for the GPU.
 *
 * <pre>{@code
 * DeviceApi api = DeviceApi.of(comm);
 * DeviceComm devComm = api.create(DeviceCommRequirements.builder().lsaBarrierCount(4).build()).join(); // every rank
 * Kernel fill = KernelLibrary.load(backend, KernelCompiler.of(backend).compile(source, comm.device())).kernel("fill");
 * api.launch(fill, LaunchConfig.of(4, 256), KernelArgs.create().window(win).deviceComm(devComm).float32(42f).int64(n));
 * }</pre>
 */
public final class DeviceApi {
    private static final AttachmentKey<Attached> KEY = AttachmentKey.of("device-api", c -> new Attached(new DeviceApi(c)));

    /** The one instance of a communicator, as its attachment: the library freed the device communicators with it. */
    private record Attached(DeviceApi api) implements Attachment {
        @Override
        public void communicatorGone() {
            for (DeviceComm d : api.deviceComms) d.closeAsync(); // each frees its host memory
        }
    }

    private final Communicator communicator;
    private final ModuleContext spi;
    private final Set<DeviceComm> deviceComms = ConcurrentHashMap.newKeySet();
    private volatile @Nullable CompletableFuture<DeviceProperties> properties;

    private DeviceApi(ModuleContext context) {
        this.communicator = context.communicator();
        this.spi = context;
    }

    /**
     * The device API of {@code communicator}: one instance per communicator, attached to it (its device
     * communicators' host memory is freed when the communicator is closed or aborted).
     */
    public static DeviceApi of(Communicator communicator) {
        return Modules.context(Errors.requireArgument(communicator, "communicator")).attachment(KEY).api();
    }

    void forget(DeviceComm deviceComm) {
        deviceComms.remove(deviceComm);
    }

    public Communicator communicator() {
        return communicator;
    }

    /** What the communicator supports, asked once ({@code ncclCommQueryProperties} on its launch thread, where present). */
    public CompletableFuture<DeviceProperties> properties() {
        CompletableFuture<DeviceProperties> p = properties;
        if (p != null) return p;
        synchronized (this) {
            if (properties == null) {
                boolean hasDeviceApi = communicator.backend().features().has(Feature.DEV_COMM_CREATE);
                if (communicator.backend().features().has(Feature.COMM_QUERY_PROPERTIES)) {
                    DeviceCommSupport driver = spi.capability(DeviceCommSupport.class);
                    properties = spi.call("ncclCommQueryProperties",
                            () -> DeviceProperties.queried(driver.queryProperties(), hasDeviceApi));
                } else {
                    properties = CompletableFuture.completedFuture(DeviceProperties.known(communicator.rank(),
                            communicator.size(), communicator.device(), hasDeviceApi));
                }
            }
            return properties;
        }
    }

    /**
     * Creates a device communicator, collectively: every rank calls it with the same requirements. Checked first
     * against {@link #properties()}; issued in order with the communicator's operations.
     *
     * @throws UnsupportedFeatureException (at once, or through the future) for a library without device
     *                                     communicators or a requirement the communicator cannot meet
     */
    public CompletableFuture<DeviceComm> create(DeviceCommRequirements requirements) {
        Errors.requireArgument(requirements, "requirements");
        communicator.backend().features().require(Feature.DEV_COMM_CREATE);
        return properties().thenCompose(p -> {
            check(p, requirements);
            DevCommHandle[] created = new DevCommHandle[1];
            DeviceCommSupport driver = spi.capability(DeviceCommSupport.class);
            Work w = spi.issue(new StreamOperation(describeCreate(requirements), List.of(),
                    stream -> created[0] = driver.devCommCreate(requirements.values())));
            return w.handle((v, error) -> made(created[0], error, requirements));
        });
    }

    /**
     * Creates device communicators on several communicators of this process together, in one group, as one thread
     * driving several GPUs must ({@code ncclGroupStart}, {@code ncclDevCommCreate} on each, {@code ncclGroupEnd}).
     */
    public static CompletableFuture<List<DeviceComm>> createAll(List<Communicator> communicators, DeviceCommRequirements requirements) {
        Errors.requireArgument(communicators, "communicators");
        Errors.requireArgument(requirements, "requirements");
        if (communicators.isEmpty()) throw new InvalidArgumentException("createAll needs at least one communicator");
        List<CompletableFuture<DeviceProperties>> checks = new ArrayList<>();
        for (Communicator c : communicators) {
            Errors.requireArgument(c, "communicator");
            c.backend().features().require(Feature.DEV_COMM_CREATE);
            checks.add(of(c).properties().thenApply(p -> {
                check(p, requirements);
                return p;
            }));
        }
        return CompletableFuture.allOf(checks.toArray(new CompletableFuture<?>[0])).thenCompose(v -> {
            AtomicReferenceArray<DevCommHandle> created = new AtomicReferenceArray<>(communicators.size());
            Group group = Group.create();
            for (int i = 0; i < communicators.size(); i++) {
                int index = i;
                DeviceCommSupport driver = Modules.context(communicators.get(i)).capability(DeviceCommSupport.class);
                group.add(communicators.get(i), new StreamOperation(describeCreate(requirements), List.of(),
                        stream -> created.set(index, driver.devCommCreate(requirements.values()))));
            }
            return group.submit().handle((done, error) -> {
                List<DeviceComm> out = new ArrayList<>();
                for (int i = 0; i < communicators.size(); i++) {
                    out.add(of(communicators.get(i)).made(created.get(i), error, requirements));
                }
                return out;
            });
        });
    }

    /** The device communicator once its work completed, or the failure (freeing what was made). */
    private DeviceComm made(@Nullable DevCommHandle handle, @Nullable Throwable error, DeviceCommRequirements requirements) {
        if (error != null || handle == null) {
            if (handle != null) handle.free();
            throw error != null ? Errors.unwrap(error) : new IllegalStateException("ncclDevCommCreate made nothing");
        }
        DeviceComm made = new DeviceComm(this, spi, handle, requirements);
        deviceComms.add(made);
        return made;
    }

    private static String describeCreate(DeviceCommRequirements r) {
        return "devCommCreate(lsaBarriers=" + r.values().lsaBarrierCount() + ", barriers=" + r.values().barrierCount()
                + (r.needsGin() ? ", gin" : "") + (r.values().lsaMultimem() ? ", multimem" : "") + ")";
    }

    /** Refuses requirements the properties say the communicator cannot meet; unknown properties check nothing. */
    static void check(DeviceProperties p, DeviceCommRequirements r) {
        String where = "communicator rank " + p.rank() + "/" + p.size() + " on device " + p.device();
        if (p.deviceApiSupport().equals(Optional.of(false))) {
            throw new UnsupportedFeatureException("ncclDevCommCreate", where + " (NCCL reports no device API support)",
                    "n/a", null);
        }
        if (r.values().lsaMultimem() && p.multimemSupport().equals(Optional.of(false))) {
            throw new UnsupportedFeatureException("lsaMultimem", where + " (NCCL reports no multimem support)", "n/a", null);
        }
        if (r.needsGin() && p.ginType().equals(Optional.of(GinType.NONE))) {
            throw new UnsupportedFeatureException("GIN (signals, counters, rail barriers)", where
                    + " (NCCL reports no GPU-initiated networking)", "n/a", null);
        }
    }

    /**
     * Launches {@code kernel} on the communicator's stream, after everything issued before. Checked first: the
     * configuration against the kernel and device, the arguments against the kernel's parameters and the
     * communicator. The work keeps every buffer, window and device communicator of {@code args} alive, and the
     * kernel's library loaded, until it completes.
     *
     * @throws InvalidArgumentException for a configuration or argument the kernel or device refuses
     * @throws InvalidUsageException    for a closed library, window or device communicator
     */
    public Work launch(Kernel kernel, LaunchConfig config, KernelArgs args) {
        return launch(kernel, config, args, communicator.options().timeout());
    }

    /** {@link #launch(Kernel, LaunchConfig, KernelArgs)} with its own timeout (zero for none). */
    public Work launch(Kernel kernel, LaunchConfig config, KernelArgs args, Duration timeout) {
        Errors.requireArgument(timeout, "timeout");
        Checked c = check(kernel, config, args);
        Supplier<Work> issue = () -> {
            kernel.library().launchStarted();
            Work w;
            try {
                w = spi.issue(c.operation(), timeout);
            } catch (RuntimeException e) {
                kernel.library().launchEnded();
                throw e;
            }
            w.whenComplete((v, error) -> kernel.library().launchEnded());
            return w;
        };
        return whileOpen(c.marshalled().deviceComms(), 0, issue);
    }

    /**
     * Launches {@code kernel} on an application's {@code stream} of the communicator's device (from
     * {@link org.jccl.core.Backend#createStream}), at once, on the calling thread, which gets the device made current.
     * Checked as {@link #launch(Kernel, LaunchConfig, KernelArgs)} checks it. It is outside the communicator's call
     * order: for kernels that wait on the device for something (a KV layer's signal) or that work on data only, never
     * for one that takes part in a collective. The work completes when the stream passed the kernel and keeps the
     * buffers, windows and device communicators of {@code args}, and the kernel's library, alive until then.
     *
     * @throws InvalidArgumentException for a stream of another device, or a configuration or argument refused
     * @throws InvalidUsageException    for a closed stream, library, window or device communicator
     */
    public Work launch(Stream stream, Kernel kernel, LaunchConfig config, KernelArgs args) {
        Errors.requireArgument(stream, "stream");
        Checked c = check(kernel, config, args);
        StreamOperation op = c.operation();
        kernel.library().launchStarted(); // throws for a closed library
        try {
            Work w = spi.issueOn(stream, new StreamOperation(op.what(), op.uses(), op.task(),
                    Retention.all(c.marshalled().retentions())));
            w.whenComplete((v, error) -> kernel.library().launchEnded());
            return w;
        } catch (RuntimeException e) {
            kernel.library().launchEnded();
            throw e;
        }
    }

    /**
     * The launch as an operation to add to a {@link org.jccl.core.Step} (or a {@link org.jccl.core.Group}), checked as
     * {@link #launch} checks it. It keeps the kernel's library loaded until it is closed: close it once the step that
     * captured it is closed. A step that captures it keeps the windows and device communicators of its arguments
     * alive until the step is closed (their deregistration and destruction wait for it).
     *
     * @throws InvalidArgumentException for a configuration or argument the kernel or device refuses
     * @throws InvalidUsageException    for a closed library or device communicator
     */
    public KernelLaunch prepare(Kernel kernel, LaunchConfig config, KernelArgs args) {
        Checked c = check(kernel, config, args);
        StreamOperation op = c.operation();
        kernel.library().launchStarted(); // throws for a closed library
        return new KernelLaunch(new StreamOperation(op.what(), op.uses(), op.task(), Retention.all(c.marshalled().retentions())),
                kernel.library()::launchEnded);
    }

    /** A launch's arguments, checked and marshalled, and the operation that enqueues it. */
    private record Checked(KernelArgs.Marshalled marshalled, StreamOperation operation) {
    }

    private Checked check(Kernel kernel, LaunchConfig config, KernelArgs args) {
        Errors.requireArgument(kernel, "kernel");
        Errors.requireArgument(config, "config");
        Errors.requireArgument(args, "args");
        if (kernel.library().isClosed()) throw new InvalidUsageException(kernel.library() + " is closed");
        KernelRuntime runtime = kernel.library().runtime();
        int device = communicator.device();
        Kernel.Limits limits = kernel.limits(device);
        int maxThreads = limits.maxThreadsPerBlock();
        if (config.threadsPerBlock() > maxThreads) {
            throw new InvalidArgumentException(kernel.name() + " runs at most " + maxThreads + " threads per block on device "
                    + device + ", not " + config.threadsPerBlock());
        }
        int maxShared = limits.maxDynamicSharedBytes();
        if (config.sharedBytes() > maxShared) {
            throw new InvalidArgumentException(kernel.name() + " may use at most " + maxShared + " bytes of dynamic shared"
                    + " memory on device " + device + ", not " + config.sharedBytes());
        }
        KernelArgs.Marshalled m = args.marshal(kernel, spi);
        int[] dims = config.dims();
        String what = "launch(" + kernel.name() + ", " + config + ")";
        return new Checked(m, new StreamOperation(what, m.buffers(), stream -> {
            for (DeviceComm d : m.deviceComms()) d.checkNotDestroyed();
            runtime.launch(kernel.handle(), dims, config.sharedBytes(), stream, m.bytes(), m.offsets());
        }));
    }

    /** Issues while every device communicator is open, so that none's destruction can come before the launch. */
    private static Work whileOpen(List<DeviceComm> deviceComms, int from, Supplier<Work> issue) {
        if (from == deviceComms.size()) return issue.get();
        return deviceComms.get(from).whileOpen(() -> whileOpen(deviceComms, from + 1, issue));
    }

    /** e.g. {@code DeviceApi[comm=3f2a rank=0/2], 1 device communicator}. */
    @Override
    public String toString() {
        int n = deviceComms.size();
        return "DeviceApi" + communicator.describe() + ", " + n + (n == 1 ? " device communicator" : " device communicators");
    }
}
