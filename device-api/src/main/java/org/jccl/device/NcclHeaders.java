package org.jccl.device;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * NCCL's device headers made compilable by NVRTC. NVRTC parses strict C++ without GNU extensions, and NCCL's
 * {@code nccl::utility::loadConst} picks its load width with plain {@code if} branches whose untaken ones declare
 * zero-length arrays (accepted by nvcc's GNU mode, an error in NVRTC). A copy of the headers with those branches made
 * {@code if constexpr} — same meaning, the untaken branches discarded — is kept in the cache folder, one per source
 * folder and content; the installed headers are never changed.
 */
final class NcclHeaders {
    private static final String UTILITY = "nccl_device/utility.h";

    private NcclHeaders() {
    }

    /** Where NCCL's headers are: the setting, else {@code ../include} beside the loaded library, else the system's. */
    static @Nullable Path find(@Nullable String configured, @Nullable String libraryFile) {
        if (configured != null && !configured.isBlank()) return Path.of(configured);
        if (libraryFile != null) {
            Path lib = Path.of(libraryFile).toAbsolutePath().getParent();
            if (lib != null && lib.getParent() != null) {
                Path beside = lib.getParent().resolve("include");
                if (Files.exists(beside.resolve("nccl_device.h"))) return beside;
            }
        }
        for (String dir : List.of("/usr/include", "/usr/local/include")) {
            if (Files.exists(Path.of(dir, "nccl_device.h"))) return Path.of(dir);
        }
        return null;
    }

    /** The NVRTC-ready copy of {@code include} under {@code cache}, made on first use. */
    static synchronized Path compilable(Path include, Path cache) {
        try {
            Path utility = include.resolve(UTILITY);
            if (!Files.exists(utility)) return include; // no device headers there: nothing to adapt
            String original = Files.readString(utility);
            String adapted = adapt(original);
            Path copy = cache.resolve("nccl-include-" + digest(include.toAbsolutePath() + "\n" + original));
            if (Files.exists(copy.resolve(UTILITY))) return copy;
            Path staging = Files.createTempDirectory(cache, "nccl-include-");
            try (Stream<Path> files = Files.walk(include)) {
                for (Path f : (Iterable<Path>) files::iterator) {
                    Path relative = include.relativize(f);
                    String name = relative.toString();
                    if (!name.startsWith("nccl") || Files.isDirectory(f)) continue;
                    Path target = staging.resolve(relative);
                    Files.createDirectories(target.getParent());
                    Files.copy(f, target, StandardCopyOption.REPLACE_EXISTING);
                }
            }
            Files.writeString(staging.resolve(UTILITY), adapted);
            try {
                Files.move(staging, copy, StandardCopyOption.ATOMIC_MOVE);
            } catch (IOException raced) { // another process made it first: keep its copy, drop ours
                if (!Files.exists(copy.resolve(UTILITY))) throw raced;
                deleteTree(staging);
            }
            return copy;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot prepare NCCL's headers from " + include + " in " + cache, e);
        }
    }

    private static void deleteTree(Path root) throws IOException {
        try (Stream<Path> files = Files.walk(root)) {
            for (Path f : (Iterable<Path>) files.sorted(Comparator.reverseOrder())::iterator) Files.delete(f);
        }
    }

    /** {@code if (alignof(T) == N)} → {@code if constexpr (alignof(T) == N)}: the load-width branches of loadConst. */
    static String adapt(String utility) {
        return utility.replaceAll("if \\(alignof\\(T\\) == (\\d+)\\)", "if constexpr (alignof(T) == $1)");
    }

    static String digest(String text) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(d, 0, 12);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
