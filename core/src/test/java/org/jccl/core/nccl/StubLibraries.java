package org.jccl.core.nccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Builds the fake {@code libnccl.so.2} and {@code libcudart.so.13} from {@code src/test/c} with gcc, into a fresh
 * directory, and reads the call log each writes beside itself. gcc missing is a test failure, not a skip: CI has it.
 */
final class StubLibraries {
    final Path nccl;
    final Path cudart;

    private StubLibraries(Path nccl, Path cudart) {
        this.nccl = nccl;
        this.cudart = cudart;
    }

    /** Builds a stub pair; {@code minimal} leaves out the optional functions. */
    static StubLibraries build(Path dir, int version, boolean minimal) {
        return minimal ? build(dir, version, "-DSTUB_MINIMAL") : build(dir, version);
    }

    /** Builds a stub pair, the NCCL stub compiled with {@code ncclFlags} (e.g. {@code -DSTUB_OLD_ALLTOALLV}). */
    static StubLibraries build(Path dir, int version, String... ncclFlags) {
        return build(dir, version, List.of(), ncclFlags);
    }

    /** A stub pair a whole backend runs on: every event of the runtime stub is complete when queried. */
    static StubLibraries buildForBackend(Path dir, int version, String... ncclFlags) {
        return build(dir, version, List.of("-DSTUB_EVENTS_COMPLETE"), ncclFlags);
    }

    private static StubLibraries build(Path dir, int version, List<String> runtimeFlags, String... ncclFlags) {
        Path sources = Paths.get("src", "test", "c").toAbsolutePath();
        Path nccl = dir.resolve("libnccl.so.2");
        Path cudart = dir.resolve("libcudart.so.13");
        List<String> ncclCommand = new ArrayList<>(List.of("gcc", "-shared", "-fPIC", "-O1", "-DSTUB_VERSION=" + version));
        ncclCommand.addAll(List.of(ncclFlags));
        ncclCommand.addAll(List.of("-o", nccl.toString(), sources.resolve("stub_nccl.c").toString(), "-ldl"));
        compile(ncclCommand);
        List<String> runtimeCommand = new ArrayList<>(List.of("gcc", "-shared", "-fPIC", "-O1"));
        runtimeCommand.addAll(runtimeFlags);
        runtimeCommand.addAll(List.of("-o", cudart.toString(), sources.resolve("stub_cudart.c").toString(), "-ldl"));
        compile(runtimeCommand);
        return new StubLibraries(nccl, cudart);
    }

    static void compile(List<String> command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            String output;
            try (InputStream in = p.getInputStream()) {
                output = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                fail("compiler timed out: " + command);
            }
            assertEquals(0, p.exitValue(), "compile failed: " + command + "\n" + output);
        } catch (IOException e) {
            fail("cannot run " + command.get(0) + " (the native contract tests need a C compiler): " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            fail(e);
        }
    }

    NcclDriver open() {
        return NcclDriver.open(org.jccl.core.BackendKind.NCCL, nccl.toString(), cudart.toString());
    }

    /** The NCCL stub's log lines so far, then forgets them. */
    List<String> ncclCalls() {
        return drain(Paths.get(nccl + ".log"));
    }

    /** The runtime stub's log lines so far, then forgets them. */
    List<String> runtimeCalls() {
        return drain(Paths.get(cudart + ".log"));
    }

    private static List<String> drain(Path log) {
        try {
            if (!Files.exists(log)) return List.of();
            List<String> lines = Files.readAllLines(log);
            Files.delete(log);
            return lines;
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The one line starting with {@code prefix}, failing unless there is exactly one. */
    static String single(List<String> lines, String prefix) {
        List<String> hits = lines.stream().filter(l -> l.startsWith(prefix)).toList();
        assertEquals(1, hits.size(), "lines starting with '" + prefix + "' in " + lines);
        return hits.get(0);
    }

    /** The value of {@code key=} in a log line. */
    static String field(String line, String key) {
        for (String part : line.split(" ")) {
            if (part.startsWith(key + "=")) return part.substring(key.length() + 1);
        }
        throw new AssertionError("no " + key + " in " + line);
    }

    /** A pointer as the stub prints it ({@code %p}): {@code 0x…}, or {@code (nil)} for null. */
    static String pointer(long address) {
        return address == 0 ? "(nil)" : "0x" + Long.toHexString(address);
    }
}
