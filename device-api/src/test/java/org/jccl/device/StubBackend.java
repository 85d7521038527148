package org.jccl.device;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Communicator;
import org.jccl.core.Jccl;

/**
 * A whole NCCL backend made of core's stub libraries (core/src/test/c), built once per test JVM: NCCL 2.29.7, a CUDA
 * runtime whose events complete, the CUDA driver API and NVRTC, each logging its calls to "FILE.log" in {@link #dir()}.
 */
public final class StubBackend {
    private static Path dir;
    private static Backend backend;
    private static Communicator comm;

    private StubBackend() {
    }

    public static synchronized Path dir() throws Exception {
        if (dir != null) return dir;
        Path d = Files.createTempDirectory("jccl-device-stubs");
        Path sources = Path.of("..", "core", "src", "test", "c").toAbsolutePath().normalize();
        compile(d, sources, "stub_nccl.c", "libnccl.so.2", "-DSTUB_VERSION=22907");
        compile(d, sources, "stub_cudart.c", "libcudart.so.13", "-DSTUB_EVENTS_COMPLETE");
        compile(d, sources, "stub_cuda.c", "libcuda.so.1");
        compile(d, sources, "stub_nvrtc.c", "libnvrtc.so.13");
        System.setProperty("jccl.nccl.library", d.resolve("libnccl.so.2").toString());
        System.setProperty("jccl.cuda.runtime", d.resolve("libcudart.so.13").toString());
        System.setProperty("jccl.cuda.driver", d.resolve("libcuda.so.1").toString());
        System.setProperty("jccl.nvrtc.library", d.resolve("libnvrtc.so.13").toString());
        System.setProperty("jccl.kernel.cache", d.resolve("cache").toString());
        dir = d;
        return d;
    }

    public static synchronized Backend backend() throws Exception {
        if (backend == null) {
            dir();
            backend = Jccl.backend(BackendKind.NCCL);
        }
        return backend;
    }

    /** One rank on stub device 0, shared by the tests of this JVM (left for the JVM's end to close). */
    public static synchronized Communicator communicator() throws Exception {
        if (comm == null) comm = backend().initAll(1).get(30, TimeUnit.SECONDS).get(0);
        return comm;
    }

    /** The lines {@code library}'s stub logged so far, then forgets them. */
    public static List<String> calls(String library) throws Exception {
        Path log = dir().resolve(library + ".log");
        if (!Files.exists(log)) return List.of();
        List<String> lines = Files.readAllLines(log);
        Files.delete(log);
        return lines;
    }

    private static void compile(Path dir, Path sources, String source, String library, String... flags) throws Exception {
        List<String> command = new ArrayList<>(List.of("gcc", "-shared", "-fPIC", "-O1"));
        command.addAll(List.of(flags));
        command.addAll(List.of("-o", dir.resolve(library).toString(), sources.resolve(source).toString(), "-ldl"));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException("the device-API stub tests need gcc: " + command + "\n" + output);
        }
    }
}
