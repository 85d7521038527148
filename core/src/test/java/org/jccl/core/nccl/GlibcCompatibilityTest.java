package org.jccl.core.nccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The built JNI library must load on glibc 2.28 (RHEL 8): no dynamic symbol may require a newer GLIBC version, nor
 * a libstdc++ newer than gcc 8's (GLIBCXX 3.4.25, CXXABI 1.3.11). Skipped only where objdump is absent.
 */
class GlibcCompatibilityTest {
    private static final int[] GLIBC_MAX = {2, 28};
    private static final int[] GLIBCXX_MAX = {3, 4, 25};
    private static final int[] CXXABI_MAX = {1, 3, 11};

    @Test
    void noSymbolNeedsANewerGlibcThan2_28() throws Exception {
        assumeTrue(onPath("objdump"), "objdump is not installed");
        Path library = builtLibrary();
        String symbols = run("objdump", "-T", library.toString());
        Matcher m = Pattern.compile("\\((GLIBC|GLIBCXX|CXXABI)_([0-9.]+)\\)\\s+(\\S+)").matcher(symbols);
        List<String> tooNew = new ArrayList<>();
        int seen = 0;
        while (m.find()) {
            seen++;
            int[] max = switch (m.group(1)) {
                case "GLIBC" -> GLIBC_MAX;
                case "GLIBCXX" -> GLIBCXX_MAX;
                default -> CXXABI_MAX;
            };
            if (compare(m.group(2), max) > 0) tooNew.add(m.group(3) + "@" + m.group(1) + "_" + m.group(2));
        }
        assertTrue(seen > 10, "objdump listed versioned symbols of " + library);
        assertEquals(List.of(), tooNew, "symbols that glibc 2.28 / gcc 8's libstdc++ lack, in " + library);
    }

    static int compare(String version, int[] max) {
        String[] parts = version.split("\\.");
        for (int i = 0; i < Math.max(parts.length, max.length); i++) {
            int a = i < parts.length ? Integer.parseInt(parts[i]) : 0;
            int b = i < max.length ? max[i] : 0;
            if (a != b) return Integer.compare(a, b);
        }
        return 0;
    }

    private static Path builtLibrary() throws IOException {
        Path classes = Paths.get("target", "classes", "org", "jccl", "core", "nccl");
        try (Stream<Path> files = Files.walk(classes)) {
            return files.filter(p -> p.getFileName().toString().equals("libjniNativeApi.so")).findFirst()
                    .orElseThrow(() -> new AssertionError("the JNI library was not built under " + classes.toAbsolutePath()));
        }
    }

    private static boolean onPath(String tool) {
        String path = System.getenv("PATH");
        if (path == null) return false;
        for (String d : path.split(File.pathSeparator)) if (Files.isExecutable(Paths.get(d, tool))) return true;
        return false;
    }

    private static String run(String... command) throws Exception {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out;
        try (InputStream in = p.getInputStream()) {
            out = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "timed out: " + String.join(" ", command));
        assertEquals(0, p.exitValue(), out);
        return out;
    }
}
