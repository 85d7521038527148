package org.jccl.core;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/**
 * The one line jccl logs at INFO when its first backend starts, short enough to read at a glance (at most
 * {@link #MAX} characters): jccl's version, the backend and how it was chosen, the libraries, the devices. Why other
 * backends did not load is logged at DEBUG, not here.
 */
final class StartupLine {
    static final int MAX = 120;

    private StartupLine() {
    }

    /**
     * e.g. {@code jccl 0.1.0: backend nccl (auto), NCCL 2.28.9, CUDA runtime 13000, 2 devices: NVIDIA H200} or
     * {@code jccl 0.1.0: backend host (auto: no GPU), pure Java, 2 CPU cores}.
     *
     * @param how how the backend was chosen, e.g. {@code auto} or {@code configured}
     */
    static String of(String version, Backend backend, String how) {
        String devices;
        if (backend.kind() == BackendKind.HOST) {
            devices = Runtime.getRuntime().availableProcessors() + " CPU cores";
        } else {
            int n = backend.deviceCount();
            devices = n + (n == 1 ? " device" : " devices") + (n > 0 ? ": " + backend.deviceInfo(0).name() : "");
        }
        return fit("jccl " + version + ": backend " + backend.kind().id() + " (" + how + "), " + backend.driver().summary()
                + ", " + devices);
    }

    /** {@code line}, cut to {@link #MAX} characters with an ellipsis where it is longer (a long device name). */
    static String fit(String line) {
        return line.length() <= MAX ? line : line.substring(0, MAX - 1) + "…";
    }

    /** This jccl's version, from the build, or {@code (development)} where the build did not write it. */
    static String version() {
        try (InputStream in = StartupLine.class.getResourceAsStream("jccl-version.properties")) {
            if (in == null) return "(development)";
            Properties p = new Properties();
            p.load(in);
            String v = p.getProperty("version", "");
            return v.isBlank() || v.startsWith("${") ? "(development)" : v;
        } catch (IOException e) {
            return "(development)";
        }
    }
}
