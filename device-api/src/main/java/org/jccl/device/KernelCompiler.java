package org.jccl.device;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.DeviceInfo;
import org.jccl.core.config.JcclSettings;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.error.UnsupportedFeatureException;
import org.jccl.core.spi.CompiledCode;
import org.jccl.core.spi.KernelRuntime;
import org.jspecify.annotations.Nullable;

/**
 * Compiles CUDA C++ at run time with NVRTC into a cubin for a device's architecture, against the loaded NCCL's device
 * headers, so that {@code #include <nccl_device.h>} works as with nvcc. Compiled images are cached by content
 * (source, options, architecture, compiler and NCCL versions) in memory and in the cache folder
 * ({@code jccl.kernel.cache}), so a second start does not compile again.
 *
 * <p>The include setup NVRTC needs (it has neither the C library's headers nor nvcc's GNU mode): jccl's small
 * stand-ins for {@code <stdint.h>} and the like (in memory), NCCL's headers from beside the library
 * ({@code jccl.nccl.include}) adapted as {@link NcclHeaders} says, the CUDA toolkit's headers and its libcu++
 * ({@code jccl.cuda.include}), {@code -default-device}, and GPU-initiated networking left out: its proxy and GDAKI
 * backends ({@code NCCL_GIN_PROXY_ENABLE=0}, {@code NCCL_GIN_GDAKI_ENABLE=0}) need GNU extensions, and without a
 * backend NCCL 2.29's GIN functions do not compile, so their header is skipped (its include guard defined). LSA
 * pointers and barriers, teams and windows all work; a kernel using GIN is compiled with nvcc and loaded as an image.
 *
 * <p>On the RCCL backend hipRTC compiles the source as it is (clang needs no stand-ins) into a code object for the
 * current device, with RCCL's headers beside the library on the include path; this path has run only against stub
 * libraries.
 */
public final class KernelCompiler {
    private static final List<String> STAND_INS = List.of("stdint.h", "stddef.h", "stdbool.h", "limits.h", "stdio.h",
            "stdlib.h", "math.h", "errno.h", "linux/types.h", "cstdint", "type_traits", "cassert", "algorithm", "new");
    private static final Map<Backend, KernelCompiler> BY_BACKEND = new ConcurrentHashMap<>();
    private static final ExecutorService COMPILING = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "jccl-kernel-compiler");
        t.setDaemon(true);
        return t;
    });

    private final Backend backend;
    private final Map<String, KernelImage> compiled = new ConcurrentHashMap<>();
    private final Map<String, String> standIns;
    private final String prelude;
    private final boolean hip;
    private @Nullable List<String> includeOptions; // guarded by this

    private KernelCompiler(Backend backend) {
        this.backend = backend;
        this.hip = backend.kind() == BackendKind.RCCL;
        Map<String, String> headers = new LinkedHashMap<>();
        for (String name : STAND_INS) headers.put(name, resource("rtc/" + name));
        this.standIns = Map.copyOf(headers);
        this.prelude = resource("rtc/prelude.h");
    }

    /** The compiler of {@code backend} (one per backend). */
    public static KernelCompiler of(Backend backend) {
        Errors.requireArgument(backend, "backend");
        return BY_BACKEND.computeIfAbsent(backend, KernelCompiler::new);
    }

    /**
     * Compiles {@code source} into a cubin for {@code device}'s architecture (on RCCL: a code object), or takes it from
     * the cache. Runs on the caller's thread (a compile takes about a second); {@link #compileAsync} runs it on a compiler thread.
     *
     * @throws KernelCompileException      with the compiler's log when the source does not compile
     * @throws UnsupportedFeatureException where NVRTC or the driver API cannot be loaded
     */
    public KernelImage compile(KernelSource source, int device) {
        return compile(source, device, false);
    }

    /**
     * Compiles {@code source} into PTX for {@code device}'s virtual architecture ({@code compute_90}): text the
     * driver compiles for whichever device loads it, and that other tools can read.
     */
    public KernelImage compilePtx(KernelSource source, int device) {
        return compile(source, device, true);
    }

    private KernelImage compile(KernelSource source, int device, boolean ptx) {
        Errors.requireArgument(source, "source");
        KernelRuntime runtime = backend.kernels();
        if (!runtime.canCompile()) {
            throw new UnsupportedFeatureException("run-time compilation", String.valueOf(runtime.compilerProblem()), "none", null);
        }
        if (hip && ptx) throw new InvalidUsageException("PTX is NVIDIA's: on the RCCL backend compile() makes a code object");
        DeviceInfo info = backend.deviceInfo(device);
        String arch = (ptx ? "compute_" : "sm_") + info.computeMajor() + info.computeMinor();
        List<String> options = hip ? hipOptions(source) : options(source, arch);
        String key = NcclHeaders.digest(backend.kind() + "\n" + String.join("\n", options) + "\n" + runtime.compilerVersion() + "\n"
                + backend.version() + "\n" + prelude + standIns + "\n" + source.code());
        KernelImage image = compiled.get(key);
        if (image != null) return image;
        Path folder = cacheFolder();
        Path cached = folder == null ? null : folder.resolve(key + (ptx ? ".ptx" : ".cubin"));
        if (cached != null && Files.exists(cached)) {
            image = ptx ? KernelImage.ptx(read(cached)) : hip ? KernelImage.codeObject(read(cached)) : KernelImage.cubin(read(cached));
        } else {
            String code = hip ? source.code() : prelude + "#line 1 \"" + source.name() + "\"\n" + source.code();
            CompiledCode out = runtime.compile(code, source.name(), hip ? Map.of() : standIns, options);
            byte[] bytes = ptx ? out.ptx() : out.cubin();
            if (!out.succeeded() || bytes == null) throw new KernelCompileException(source.name(), hint(out.log()));
            image = ptx ? KernelImage.ptx(bytes) : hip ? KernelImage.codeObject(bytes) : KernelImage.cubin(bytes);
            if (cached != null) write(cached, bytes);
        }
        compiled.put(key, image);
        return image;
    }

    /** {@link #compile} on a compiler thread: the caller's thread is not held for the compile. */
    public CompletableFuture<KernelImage> compileAsync(KernelSource source, int device) {
        return CompletableFuture.supplyAsync(() -> compile(source, device), COMPILING);
    }

    /** The NVRTC options jccl passes for {@code source} on an architecture such as {@code sm_90}. */
    public List<String> options(KernelSource source, String arch) {
        List<String> options = new ArrayList<>(List.of("--std=c++17", "-arch=" + arch, "-default-device",
                "-diag-suppress=1866", "-DNCCL_GIN_PROXY_ENABLE=0", "-DNCCL_GIN_GDAKI_ENABLE=0",
                "-D_NCCL_DEVICE_GIN_SESSION__FUNCS_H_"));
        options.addAll(includeOptions());
        options.addAll(source.options());
        return options;
    }

    /**
     * {@code -I} for the NVRTC-ready copy of NCCL's headers and the CUDA toolkit's, found (and the copy made or
     * checked) once per compiler: a compile served from the cache touches no file.
     */
    private synchronized List<String> includeOptions() {
        if (includeOptions == null) {
            List<String> found = new ArrayList<>();
            Path nccl = NcclHeaders.find(JcclSettings.NCCL_INCLUDE.value(), backend.libraryFile());
            if (nccl != null) {
                Path folder = cacheFolder();
                found.add("-I" + NcclHeaders.compilable(nccl, folder != null ? folder : temporaryFolder()));
            }
            for (Path cuda : cudaIncludes()) found.add("-I" + cuda);
            includeOptions = List.copyOf(found);
        }
        return includeOptions;
    }

    /** hipRTC's options: C++17, RCCL's headers if found beside the library, the source's own. */
    private List<String> hipOptions(KernelSource source) {
        List<String> options = new ArrayList<>(List.of("-std=c++17"));
        Path rccl = NcclHeaders.find(JcclSettings.NCCL_INCLUDE.value(), backend.libraryFile());
        if (rccl != null) options.add("-I" + rccl);
        options.addAll(source.options());
        return options;
    }

    /** The CUDA toolkit's headers and, from CUDA 13, its libcu++ folder ({@code include/cccl}). */
    private static List<Path> cudaIncludes() {
        List<Path> candidates = new ArrayList<>();
        String configured = JcclSettings.CUDA_INCLUDE.value();
        if (!configured.isBlank()) candidates.add(Path.of(configured));
        for (String env : List.of("CUDA_HOME", "CUDA_PATH")) {
            String home = System.getenv(env);
            if (home != null && !home.isBlank()) candidates.add(Path.of(home, "include"));
        }
        candidates.add(Path.of("/usr/local/cuda/include"));
        for (Path c : candidates) {
            if (Files.exists(c.resolve("cuda_runtime.h"))) {
                return Files.isDirectory(c.resolve("cccl")) ? List.of(c, c.resolve("cccl")) : List.of(c);
            }
        }
        return List.of();
    }

    private static String hint(String log) {
        if (log.contains("\"nccl_device.h\"") || log.contains("\"nccl.h\"")) {
            return log + "\n(NCCL's headers were not found: set jccl.nccl.include / JCCL_NCCL_INCLUDE)";
        }
        if (log.contains("\"cuda_runtime.h\"") || log.contains("\"cuda/")) {
            return log + "\n(the CUDA toolkit's headers were not found: set jccl.cuda.include / JCCL_CUDA_INCLUDE)";
        }
        return log;
    }

    private static @Nullable Path cacheFolder() {
        String v = JcclSettings.KERNEL_CACHE.value();
        if (v.equalsIgnoreCase("none")) return null;
        Path p = Path.of(v.startsWith("~/") ? System.getProperty("user.home") + v.substring(1) : v);
        try {
            Files.createDirectories(p);
            return p;
        } catch (IOException e) {
            return null; // unwritable: compile every time rather than fail
        }
    }

    private static synchronized Path temporaryFolder() {
        try {
            Path p = Path.of(System.getProperty("java.io.tmpdir"), "jccl-kernels-" + ProcessHandle.current().pid());
            Files.createDirectories(p);
            return p;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static byte[] read(Path p) {
        try {
            return Files.readAllBytes(p);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Written whole under a temporary name, then moved: a concurrent reader never sees half an image. */
    private static void write(Path p, byte[] bytes) {
        try {
            Path partial = Files.createTempFile(p.getParent(), "partial-", ".cubin");
            Files.write(partial, bytes);
            Files.move(partial, p, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            // a cache that cannot be written costs a compile next time, nothing else
        }
    }

    private static String resource(String name) {
        try (InputStream in = KernelCompiler.class.getResourceAsStream(name)) {
            if (in == null) throw new IllegalStateException("jccl's device-api jar lacks " + name);
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
