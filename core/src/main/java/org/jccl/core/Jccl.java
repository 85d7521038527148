package org.jccl.core;

import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.ServiceLoader;
import org.jccl.core.config.JcclSettings;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.LibraryUnavailableException;
import org.jccl.core.spi.Driver;
import org.jccl.core.spi.DriverProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.jccl.core.net.NettyDefaults;

/**
 * The entry point: the process's backends.
 *
 * <p>{@link #backend()} follows {@code jccl.backend} ({@code JCCL_BACKEND}): {@code nccl}, {@code rccl},
 * {@code host}, or {@code auto} (the default): NCCL if its libraries load and a CUDA device is present, else RCCL
 * likewise, else the host backend. The choice is logged once at INFO in one line (version, backend, libraries,
 * devices); why the GPU backends did not load, at DEBUG.
 */
public final class Jccl {
    static {
        NettyDefaults.apply(); // before this class can start Netty: no Unsafe warning on JDK 24+
    }

    private static final Logger LOG = LoggerFactory.getLogger(Jccl.class);
    private static final Map<BackendKind, Backend> OPEN = new EnumMap<>(BackendKind.class);
    private static Backend chosen;

    private Jccl() {
    }

    /** The configured backend, or the automatic choice. */
    public static synchronized Backend backend() {
        if (chosen != null) return chosen;
        String configured = JcclSettings.BACKEND.value().toLowerCase(Locale.ROOT);
        if (!configured.equals("auto")) {
            BackendKind kind = parse(configured);
            chosen = backend(kind);
            JcclSettings.logOnce(StartupLine.of(StartupLine.version(), chosen, "configured"));
            return chosen;
        }
        StringBuilder reasons = new StringBuilder();
        for (BackendKind gpu : new BackendKind[] {BackendKind.NCCL, BackendKind.RCCL}) {
            try {
                Backend b = backend(gpu);
                if (b.deviceCount() > 0) {
                    chosen = b;
                    JcclSettings.logOnce(StartupLine.of(StartupLine.version(), b, "auto"));
                    return chosen;
                }
                reasons.append(gpu.id()).append(": libraries loaded but no device; ");
            } catch (LibraryUnavailableException e) {
                reasons.append(gpu.id()).append(": ").append(e.getMessage()).append("; ");
            }
        }
        chosen = backend(BackendKind.HOST);
        // Why the GPU backends did not load is for whoever expected one: at DEBUG, so a CPU machine's log stays calm.
        LOG.debug("jccl: no GPU backend usable, so the host backend runs: {}", reasons.toString().trim());
        JcclSettings.logOnce(StartupLine.of(StartupLine.version(), chosen, "auto: no GPU"));
        return chosen;
    }

    /** The backend of {@code kind}, loading it on first use. */
    public static synchronized Backend backend(BackendKind kind) {
        Backend b = OPEN.get(kind);
        if (b != null) return b;
        for (DriverProvider p : ServiceLoader.load(DriverProvider.class)) {
            if (p.kind() == kind) {
                Driver driver = p.open();
                b = new Backend(driver);
                OPEN.put(kind, b);
                LOG.debug("jccl: opened {}", driver.describe());
                return b;
            }
        }
        throw new LibraryUnavailableException("no driver for backend " + kind.id() + " on the class path");
    }

    /** Whether {@code kind} can be loaded here, without failing. */
    public static boolean isAvailable(BackendKind kind) {
        try {
            backend(kind);
            return true;
        } catch (LibraryUnavailableException e) {
            return false;
        }
    }

    /**
     * Adds {@code observer} to the process's work observers: it sees every communicator operation issued from now
     * on, of every backend (see {@link WorkObserver} for the threads it runs on). Adding one twice reports twice.
     */
    public static void addWorkObserver(WorkObserver observer) {
        Errors.requireArgument(observer, "observer");
        WorkObservers.add(observer);
    }

    /**
     * Removes {@code observer}; works issued before still report their completion to it. Returns false if it was
     * not registered.
     */
    public static boolean removeWorkObserver(WorkObserver observer) {
        Errors.requireArgument(observer, "observer");
        return WorkObservers.remove(observer);
    }

    private static BackendKind parse(String id) {
        for (BackendKind k : BackendKind.values()) if (k.id().equals(id)) return k;
        throw new InvalidArgumentException(JcclSettings.BACKEND + " must be auto, nccl, rccl or host, not " + id);
    }
}
