package org.jccl.e2e;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.jccl.examples.QuickStart;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Micrometer is an optional dependency and the {@code jdk.jfr} module an optional part of the runtime: jccl must run
 * unchanged without either (an application that never asked for metrics, a JRE made by {@code jlink} without JFR).
 * The quick start runs here in a JVM that lacks one of them, and must end with every result correct.
 */
class OptionalPiecesEndToEndTest {
    @TempDir
    Path work;

    @Test
    void runsWithoutMicrometerOnTheClassPath() throws Exception {
        String classPath = Stream.of(System.getProperty("java.class.path").split(File.pathSeparator))
                .filter(p -> !Path.of(p).getFileName().toString().startsWith("micrometer-"))
                .collect(Collectors.joining(File.pathSeparator));
        assertFalse(classPath.contains("micrometer-"), classPath);
        assertTrue(System.getProperty("java.class.path").contains("micrometer-"),
                "the test's own class path should hold Micrometer, else this test proves nothing");
        assertCorrect(HostProgram.run(work, List.of(java(), "-Dquickstart.ranks=2", "-cp", classPath,
                QuickStart.class.getName())));
    }

    @Test
    void runsOnARuntimeWithoutJfr() throws Exception {
        // java.se does not contain jdk.jfr; jdk.unsupported is what Netty and JavaCPP read, jdk.crypto.ec TLS's curves.
        String modules = "java.se,jdk.unsupported,jdk.crypto.ec";
        String listed = HostProgram.run(work, List.of(java(), "--limit-modules", modules, "--list-modules"));
        assertFalse(listed.contains("jdk.jfr"), listed);
        assertCorrect(HostProgram.run(work, List.of(java(), "--limit-modules", modules, "-Dquickstart.ranks=2", "-cp",
                System.getProperty("java.class.path"), QuickStart.class.getName())));
    }

    private static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    private static void assertCorrect(String output) {
        assertTrue(output.contains("all results correct"), output);
        assertFalse(output.contains("NoClassDefFoundError") || output.contains("ClassNotFoundException"), output);
    }
}
