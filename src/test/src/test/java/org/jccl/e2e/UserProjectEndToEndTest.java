package org.jccl.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.jccl.e2e.DocSnippets.Snippet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a new user does after the quick start, from the README's "Using it": install jccl from a copy of this checkout
 * ({@code mvn -B -q -DskipTests install}), write an application from the docs, build it, get its class path with
 * {@code dependency:build-classpath}, and run its programs on the host backend.
 *
 * <p>The application is the docs themselves ({@link DocSnippets}): the README's {@code <!-- pom -->} with every
 * {@code <!-- pom: ... -->} part merged in (the jccl version set to this build's), and every Java and Kotlin snippet of
 * the README and of {@code docs/guides/} as a source file, so that the build compiles each one against the real API.
 * Then it runs the README's first program ({@code com.example.AllRanks}: every rank of one process), its Kotlin program
 * ({@code com.example.CoroutineRanksKt}) and the launching guide's {@code com.example.OneRankPerProcess} under jccl's
 * launcher, and checks what each prints.
 *
 * <p>Both Maven runs use a local repository of their own in the test's folder, so the developer's is never written;
 * it reads the build's local repository as a first remote (a {@code file:} URL in a settings file of the test's), so
 * nothing already downloaded is fetched again, and anything else (the install plugin) comes from Maven Central.
 */
class UserProjectEndToEndTest {
    /** Folders of a checkout that are not sources: build outputs, VCS data, packed GPU runs, IDE files. */
    private static final Set<String> NOT_SOURCES = Set.of("target", ".git", ".gpu", ".whl", ".idea", ".vscode");
    /** The version of the jccl-parent import in the docs' pom. */
    private static final Pattern JCCL_PARENT_VERSION =
            Pattern.compile("(<artifactId>jccl-parent</artifactId>\\s*<version>)([^<]+)(</version>)");

    @TempDir
    Path dir;

    @Test
    void anApplicationWrittenFromTheDocsBuildsAndRunsOnEveryRank() throws Exception {
        Path checkout = Path.of("..", "..").toAbsolutePath().normalize();
        List<Snippet> snippets = DocSnippets.of(checkout);
        long compiled = snippets.stream().filter(Snippet::compiled).count();
        List<String> notCompiled = snippets.stream().filter(Snippet::notCompiled)
                .map(s -> s.where() + " (" + s.argument() + ")").toList();
        System.out.printf("docs: %d Java and Kotlin snippets compiled, %d marked not compiled %s%n", compiled,
                notCompiled.size(), notCompiled);
        assertTrue(compiled >= 20, "the docs' snippets were not found: " + compiled);
        assertTrue(notCompiled.size() <= 3, "few fences may escape the compiler, and each says why: " + notCompiled);

        Path settings = isolatedSettings();
        Path clone = dir.resolve("jccl");
        copySources(checkout, clone);
        run(clone, 15, maven(settings, "-DskipTests", "install"));

        Path app = dir.resolve("app");
        Files.createDirectories(app);
        Files.writeString(app.resolve("pom.xml"), applicationPom(snippets));
        DocSnippets.writeSources(snippets, app);
        run(app, 10, maven(settings, "package", "dependency:build-classpath", "-Dmdep.outputFile=cp.txt"));
        String classPath = app.resolve("target/classes") + File.pathSeparator
                + Files.readString(app.resolve("cp.txt")).trim();

        String allRanks = run(app, 2, java(classPath, "com.example.AllRanks"));
        assertEquals(2, allRanks.lines().filter(l -> l.equals("sum = 3.0, last = 3.0")).count(), allRanks);

        String kotlin = run(app, 2, java(classPath, "com.example.CoroutineRanksKt"));
        assertEquals(2, kotlin.lines().filter(l -> l.equals("kotlin sum = 3.0")).count(), kotlin);

        String perProcess = run(app, 3, java(classPath, "org.jccl.core.launch.Launcher", "--nproc", "2", "--",
                "com.example.OneRankPerProcess"));
        assertTrue(perProcess.contains("rank 0 of 2: sum = 3.0"), perProcess);
        assertTrue(perProcess.contains("rank 1 of 2: sum = 3.0"), perProcess);
    }

    /** The docs' pom for this build: the README's jccl version (a release, or this snapshot) made this build's. */
    private static String applicationPom(List<Snippet> snippets) {
        String pom = DocSnippets.pom(snippets);
        Matcher parent = JCCL_PARENT_VERSION.matcher(pom);
        assertTrue(parent.find(), "the README's pom imports jccl-parent with a version:\n" + pom);
        String kotlin = property("kotlin.version");
        assertTrue(pom.contains("<artifactId>kotlin-maven-plugin</artifactId><version>" + kotlin + "</version>"),
                "the README's Kotlin plugin is the Kotlin version jccl is built with, " + kotlin);
        return parent.replaceFirst("$1" + Matcher.quoteReplacement(property("jccl.version")) + "$3");
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

    /** The README's command line: {@code java --enable-native-access=ALL-UNNAMED -cp ... Main}. */
    private static List<String> java(String classPath, String... mainAndArgs) {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED", "-cp", classPath));
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
