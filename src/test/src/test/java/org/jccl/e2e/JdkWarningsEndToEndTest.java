package org.jccl.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.jar.Attributes;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.jccl.core.Jccl;
import org.jccl.core.launch.Launcher;
import org.jccl.examples.QuickStart;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * jccl prints no JVM warning on any JDK it supports: on every JDK under {@code /usr/lib/jvm}, the quick start runs as a
 * normal program (with {@code --enable-native-access=ALL-UNNAMED}, as the README says), as an executable jar whose
 * manifest grants native access (what an application's jar does), and a two-rank job runs under jccl's launcher
 * (rendezvous and host ranks over TCP: Netty); any line with {@code WARNING:} fails the test. JDK 17, 21 and 25 are
 * expected; one that is not installed is reported as skipped, not installed: CI runs exactly the README's test command
 * on whatever machine it has.
 */
class JdkWarningsEndToEndTest {
    private static final Path JVMS = Path.of("/usr/lib/jvm");
    private static final List<Integer> EXPECTED = List.of(17, 21, 25);

    @TempDir
    Path work;

    @TestFactory
    Stream<DynamicTest> noProgramPrintsAWarningOnAnyInstalledJdk() throws IOException {
        Map<Integer, Path> installed = installedJdks();
        List<Integer> features = new ArrayList<>(EXPECTED);
        for (int f : installed.keySet()) if (!features.contains(f)) features.add(f);
        return features.stream().flatMap(feature -> {
            Path home = installed.get(feature);
            return Stream.of(
                    DynamicTest.dynamicTest("JDK " + feature + ": the quick start with -cp", () -> quickStartWithClassPath(feature, home)),
                    DynamicTest.dynamicTest("JDK " + feature + ": the quick start as an executable jar", () -> quickStartAsJar(feature, home)),
                    DynamicTest.dynamicTest("JDK " + feature + ": two ranks under the launcher", () -> twoRanksUnderTheLauncher(feature, home)));
        });
    }

    @Test
    void jcclsJarsGrantNativeAccessInTheirManifest() throws IOException {
        URL where = Jccl.class.getProtectionDomain().getCodeSource().getLocation();
        Assumptions.assumeTrue(where.getPath().endsWith(".jar"), "jccl-core is on the class path as classes (" + where
                + "), not as its jar: the manifest is checked where the build packaged it");
        try (JarFile jar = new JarFile(new File(where.getPath()))) {
            assertEquals("ALL-UNNAMED", jar.getManifest().getMainAttributes().getValue("Enable-Native-Access"));
        }
    }

    private void quickStartWithClassPath(int feature, Path home) throws Exception {
        List<String> command = List.of(java(feature, home), "--enable-native-access=ALL-UNNAMED", "-Dquickstart.ranks=2",
                "-cp", System.getProperty("java.class.path"), QuickStart.class.getName());
        assertClean(HostProgram.run(work, command), "all results correct");
    }

    private void quickStartAsJar(int feature, Path home) throws Exception {
        Path jar = work.resolve("quickstart-" + feature + ".jar");
        Manifest manifest = new Manifest();
        Attributes a = manifest.getMainAttributes();
        a.put(Attributes.Name.MANIFEST_VERSION, "1.0");
        a.put(Attributes.Name.MAIN_CLASS, QuickStart.class.getName());
        a.put(new Attributes.Name("Enable-Native-Access"), "ALL-UNNAMED");
        a.put(Attributes.Name.CLASS_PATH, Stream.of(System.getProperty("java.class.path").split(File.pathSeparator))
                .map(p -> Path.of(p).toUri().toString()).collect(Collectors.joining(" ")));
        try (OutputStream out = Files.newOutputStream(jar); JarOutputStream ignored = new JarOutputStream(out, manifest)) {
            // only the manifest: the classes come from its Class-Path
        }
        assertClean(HostProgram.run(work, List.of(java(feature, home), "-Dquickstart.ranks=2", "-jar", jar.toString())), "all results correct");
    }

    private void twoRanksUnderTheLauncher(int feature, Path home) throws Exception {
        List<String> command = List.of(java(feature, home), "--enable-native-access=ALL-UNNAMED", "-cp",
                System.getProperty("java.class.path"), Launcher.class.getName(), "--nproc", "2", "--",
                BarrierRankMain.class.getName());
        String output = HostProgram.run(work, command);
        assertClean(output, "rank 0 ok");
        assertTrue(output.contains("rank 1 ok"), output);
    }

    /** The JDK's java, or the test is skipped, saying the JDK is not installed here. */
    private static String java(int feature, Path home) {
        Assumptions.assumeTrue(home != null, "JDK " + feature + " is not installed under " + JVMS + ": not checked here"
                + " (install it, e.g. Debian's openjdk-" + feature + "-jdk-headless or Temurin, to check it)");
        return home.resolve("bin/java").toString();
    }

    private static void assertClean(String output, String success) {
        List<String> warnings = output.lines().filter(l -> l.contains("WARNING:")).toList();
        assertEquals(List.of(), warnings, output);
        assertTrue(output.contains(success), output);
    }

    /** Every JDK of 17 or newer under /usr/lib/jvm, by feature version (links to one JDK counted once). */
    private static Map<Integer, Path> installedJdks() throws IOException {
        Map<Integer, Path> found = new TreeMap<>();
        if (!Files.isDirectory(JVMS)) return found;
        try (Stream<Path> dirs = Files.list(JVMS)) {
            for (Path dir : dirs.toList()) {
                Path home = dir.toRealPath();
                Integer feature = feature(home);
                if (feature != null && feature >= 17 && Files.isExecutable(home.resolve("bin/java"))) found.putIfAbsent(feature, home);
            }
        }
        return found;
    }

    /** The feature version a JDK's {@code release} file names ({@code JAVA_VERSION="25.0.1"} is 25), or null. */
    private static Integer feature(Path home) {
        Path release = home.resolve("release");
        if (!Files.isRegularFile(release)) return null;
        Properties p = new Properties();
        try (InputStream in = Files.newInputStream(release)) {
            p.load(in);
        } catch (IOException e) {
            return null;
        }
        String v = p.getProperty("JAVA_VERSION", "").replace("\"", "");
        String first = v.split("[.+-]")[0];
        return first.matches("\\d+") ? Integer.valueOf(first) : null;
    }
}
