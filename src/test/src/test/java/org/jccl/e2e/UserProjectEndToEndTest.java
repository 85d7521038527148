package org.jccl.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a new user does after the quick start, from the README's "In your own project": install jccl from a copy of
 * this checkout ({@code mvn -B -q -DskipTests install}), build a separate application that imports jccl's parent as a
 * BOM and has Java and Kotlin sources, get its class path with {@code dependency:build-classpath}, and run its
 * programs on the host backend: every rank of one process (Java and Kotlin), and one rank per process under jccl's
 * launcher. Every printed result is checked.
 *
 * <p>Both Maven runs use a local repository of their own in the test's folder, so the developer's is never written;
 * it reads the build's local repository as a first remote (a {@code file:} URL in a settings file of the test's), so
 * nothing already downloaded is fetched again, and anything else (the install plugin) comes from Maven Central.
 */
class UserProjectEndToEndTest {
    /** Folders of a checkout that are not sources: build outputs, VCS data, packed GPU runs, IDE files. */
    private static final Set<String> NOT_SOURCES = Set.of("target", ".git", ".gpu", ".whl", ".idea", ".vscode");

    @TempDir
    Path dir;

    @Test
    void anApplicationBuiltAgainstTheInstalledArtifactsRunsOnEveryRank() throws Exception {
        Path settings = isolatedSettings();
        Path clone = dir.resolve("jccl");
        copySources(Path.of("..", "..").toAbsolutePath().normalize(), clone);
        run(clone, 15, maven(settings, "-DskipTests", "install"));

        Path app = dir.resolve("app");
        copySources(Path.of("user-project").toAbsolutePath(), app);
        Path pom = app.resolve("pom.xml");
        Files.writeString(pom, Files.readString(pom)
                .replace("@JCCL_VERSION@", property("jccl.version"))
                .replace("@KOTLIN_VERSION@", property("kotlin.version")));
        run(app, 10, maven(settings, "package", "dependency:build-classpath", "-Dmdep.outputFile=cp.txt"));
        String classPath = app.resolve("target/classes") + java.io.File.pathSeparator + Files.readString(app.resolve("cp.txt")).trim();

        String allRanks = run(app, 2, java(classPath, "com.example.AllRanks"));
        assertEquals(2, allRanks.lines().filter(l -> l.equals("sum = 3.0, last = 3.0")).count(), allRanks);

        String kotlin = run(app, 2, java(classPath, "com.example.CoroutineRanksKt"));
        assertEquals(2, kotlin.lines().filter(l -> l.equals("kotlin sum = 3.0")).count(), kotlin);

        String perProcess = run(app, 3, java(classPath, "org.jccl.core.launch.Launcher", "--nproc", "2", "--",
                "com.example.OneRankPerProcess"));
        assertTrue(perProcess.contains("rank 0 of 2: sum = 3.0"), perProcess);
        assertTrue(perProcess.contains("rank 1 of 2: sum = 3.0"), perProcess);
    }

    private static List<String> maven(Path settings, String... goals) {
        List<String> command = new ArrayList<>(List.of("mvn", "-B", "-q", "-s", settings.toString()));
        command.addAll(List.of(goals));
        return command;
    }

    /** Settings with a fresh local repository, reading the build's own local repository as a remote before Central. */
    private Path isolatedSettings() throws IOException {
        String outer = Path.of(property("maven.repo.local")).toUri().toString();
        String repository = "<id>build-local</id><url>" + outer + "</url>"
                + "<releases><enabled>true</enabled></releases><snapshots><enabled>false</enabled></snapshots>";
        Path settings = dir.resolve("settings.xml");
        Files.writeString(settings, "<settings>"
                + "<localRepository>" + dir.resolve("m2") + "</localRepository>"
                + "<profiles><profile><id>build-local</id>"
                + "<repositories><repository>" + repository + "</repository></repositories>"
                + "<pluginRepositories><pluginRepository>" + repository + "</pluginRepository></pluginRepositories>"
                + "</profile></profiles>"
                + "<activeProfiles><activeProfile>build-local</activeProfile></activeProfiles>"
                + "</settings>");
        return settings;
    }

    private static List<String> java(String classPath, String... mainAndArgs) {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java, "-cp", classPath));
        command.addAll(List.of(mainAndArgs));
        return command;
    }

    private static String property(String key) {
        String value = System.getProperty(key);
        if (value == null || value.isEmpty()) fail("the build passes " + key + " to this test (src/test/pom.xml)");
        return value;
    }

    /** Runs {@code command} in {@code where} on the host backend; its output, or a failure that shows it. */
    private static String run(Path where, int minutes, List<String> command) throws Exception {
        Path log = Files.createTempFile(where.getParent(), "out", ".log");
        ProcessBuilder builder = new ProcessBuilder(command).directory(where.toFile())
                .redirectErrorStream(true).redirectOutput(log.toFile());
        builder.environment().put("JCCL_BACKEND", "host");
        Process p = builder.start();
        boolean ended = p.waitFor(minutes, TimeUnit.MINUTES);
        if (!ended) {
            p.descendants().forEach(ProcessHandle::destroyForcibly); // a launcher's ranks, a Maven build's forks
            p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }
        String output = Files.readString(log, StandardCharsets.UTF_8);
        if (!ended) fail(command + " did not end within " + minutes + " min:\n" + output);
        assertEquals(0, p.exitValue(), command + " failed:\n" + output);
        return output;
    }

    /** Copies a source tree, leaving out build outputs and tool folders. */
    private static void copySources(Path from, Path to) throws IOException {
        try (Stream<Path> files = Files.walk(from)) {
            files.filter(f -> from.relativize(f).toString().isEmpty() || !isExcluded(from.relativize(f))).forEach(f -> {
                try {
                    Path target = to.resolve(from.relativize(f).toString());
                    if (Files.isDirectory(f)) Files.createDirectories(target);
                    else Files.copy(f, target);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        }
    }

    private static boolean isExcluded(Path relative) {
        for (Path part : relative) if (NOT_SOURCES.contains(part.toString())) return true;
        return false;
    }
}
