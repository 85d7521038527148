package org.jccl.e2e;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The Java, Kotlin and {@code pom.xml} snippets of the README and the guides ({@code docs/guides/}), turned into the
 * sources of a user project so that a build compiles every one of them and none can rot. The design document's
 * fences are design notes, not user code, and are not read.
 *
 * <p>A snippet that declares a type (Java) or a top-level function or class (Kotlin) is a whole file: it keeps its
 * own {@code package} line, or gets one of its own (a Kotlin file is named by a first line such as
 * {@code // src/main/kotlin/com/example/Main.kt}, which fixes its class, {@code MainKt}). Any other snippet is a
 * fragment: its statements become the body
 * of a method whose parameters the line before the fence names in an HTML comment the reader does not see,
 * {@code <!-- given: Communicator comm, Buffer buf -->} (Kotlin: {@code comm: CoroutineCommunicator}), with the
 * imports {@link #JAVA_IMPORTS} or {@link #KOTLIN_IMPORTS} (the guides say so at their top). {@code <!-- pom -->}
 * marks the application's whole {@code pom.xml}; {@code <!-- pom: NAME dependencies -->} and
 * {@code <!-- pom: NAME build -->} mark what a feature (Kotlin, metrics) adds to its {@code <dependencies>} and
 * {@code <build>}. A Java, Kotlin or XML fence that must not be compiled (pseudo-code) says why:
 * {@code <!-- not compiled: the reason -->}; every other XML fence is an error, so none is forgotten.
 */
final class DocSnippets {
    /** What a Java fragment may use without importing it; the guides list the same. */
    static final List<String> JAVA_IMPORTS = List.of("java.util.*", "java.util.concurrent.*", "java.time.Duration",
            "java.nio.ByteBuffer", "reactor.core.publisher.Flux", "reactor.core.publisher.Mono", "org.jccl.core.*",
            "org.jccl.reactive.*", "org.jccl.rma.*", "static org.jccl.core.DataType.*",
            "static org.jccl.core.ReduceOp.*");

    /** What a Kotlin fragment may use without importing it. */
    static final List<String> KOTLIN_IMPORTS = List.of("org.jccl.core.*", "org.jccl.reactive.*",
            "org.jccl.reactive.kotlin.*", "kotlinx.coroutines.*", "kotlinx.coroutines.flow.*");

    private static final Pattern FENCE = Pattern.compile("^(\\s*)```(\\w*)\\s*$");
    private static final Pattern DIRECTIVE =
            Pattern.compile("^\\s*<!--\\s*(given|pom|not compiled)\\s*:?\\s*(.*?)\\s*-->\\s*$");
    /** What a pom part's name ends with: where it goes in the pom. */
    private static final Pattern POM_PART = Pattern.compile("(.+) (dependencies|build)");
    /** The fence languages that are code to compile (or a pom part). */
    private static final List<String> CODE = List.of("java", "kotlin", "xml");
    private static final Pattern JAVA_TYPE = Pattern.compile(
            "^(?:(?:public|final|abstract|sealed|non-sealed)\\s+)*(?:class|record|interface|enum)\\s+(\\w+)",
            Pattern.MULTILINE);
    private static final Pattern PUBLIC_JAVA_TYPE = Pattern.compile(
            "^public\\s+(?:(?:final|abstract|sealed|non-sealed)\\s+)*(?:class|record|interface|enum)\\s+(\\w+)",
            Pattern.MULTILINE);
    private static final Pattern KOTLIN_DECLARATION = Pattern.compile(
            "^(?:(?:private|internal|data|suspend|inline)\\s+)*(?:fun|class|object|interface)\\s", Pattern.MULTILINE);
    private static final Pattern PACKAGE = Pattern.compile("^package\\s+([\\w.]+);?\\s*$", Pattern.MULTILINE);
    /** A whole Kotlin file's first line naming it, {@code // src/main/kotlin/com/example/Main.kt}: its class is MainKt. */
    private static final Pattern KOTLIN_FILE_NAME = Pattern.compile("^//\\s*(?:\\S*/)?(\\w+)\\.kt\\s*\n");

    /** One fenced snippet: where it is, its language, what the comment before it says, and its text. */
    record Snippet(Path doc, int line, String language, String directive, String argument, String code) {
        String where() {
            return doc.getFileName() + ":" + line;
        }

        boolean is(String directiveName, String directiveArgument) {
            return directiveName.equals(directive) && directiveArgument.equals(argument);
        }

        /** A Java, Kotlin or XML fence the docs mark as not to be compiled. */
        boolean notCompiled() {
            return "not compiled".equals(directive);
        }

        /** A Java or Kotlin fence that becomes a source file. */
        boolean compiled() {
            return ("java".equals(language) || "kotlin".equals(language)) && !notCompiled();
        }
    }

    private DocSnippets() {}

    /** Every snippet of {@code README.md} and of the Markdown files under {@code docs/guides/}, in file and line order. */
    static List<Snippet> of(Path checkout) throws IOException {
        List<Snippet> snippets = new ArrayList<>();
        for (Path doc : documents(checkout)) snippets.addAll(in(doc, Files.readAllLines(doc)));
        return snippets;
    }

    /** {@code README.md} and the Markdown files under {@code docs/guides/}, sorted: the documents whose code is compiled. */
    static List<Path> documents(Path checkout) throws IOException {
        List<Path> docs = new ArrayList<>(List.of(checkout.resolve("README.md")));
        try (Stream<Path> files = Files.walk(checkout.resolve("docs").resolve("guides"))) {
            files.filter(f -> f.toString().endsWith(".md")).sorted().forEach(docs::add);
        }
        return docs;
    }

    /** The snippets of one document. */
    static List<Snippet> in(Path doc, List<String> lines) {
        List<Snippet> snippets = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            Matcher open = FENCE.matcher(lines.get(i));
            if (!open.matches() || open.group(2).isEmpty()) continue;
            String indent = open.group(1);
            StringBuilder code = new StringBuilder();
            int end = i + 1;
            while (end < lines.size() && !lines.get(end).equals(indent + "```")) {
                String line = lines.get(end++);
                code.append(line.startsWith(indent) ? line.substring(indent.length()) : line.strip()).append('\n');
            }
            if (end == lines.size()) throw new IllegalArgumentException(doc + ":" + (i + 1) + ": a fence never closes");
            Matcher directive = i > 0 ? DIRECTIVE.matcher(lines.get(i - 1)) : null;
            boolean directed = directive != null && directive.matches();
            Snippet s = new Snippet(doc, i + 1, open.group(2).toLowerCase(Locale.ROOT),
                    directed ? directive.group(1) : "", directed ? directive.group(2) : "", code.toString());
            check(s);
            snippets.add(s);
            i = end;
        }
        return snippets;
    }

    /**
     * Refuses what would silently escape the build: a "not compiled" mark without its reason or on a fence that is not
     * code, a "given" on a fence that is not Java or Kotlin, a pom mark on a fence that is not XML or with a name that
     * does not say where it goes, and an XML fence with neither mark.
     */
    private static void check(Snippet s) {
        boolean code = CODE.contains(s.language());
        String problem = switch (s.directive()) {
            case "not compiled" -> !code ? "marks a " + s.language() + " fence, which is never compiled"
                    : s.argument().isEmpty() ? "gives no reason" : null;
            case "given" -> s.compiled() ? null : "marks a fence that is not Java or Kotlin";
            case "pom" -> !"xml".equals(s.language()) ? "marks a fence that is not XML"
                    : s.argument().isEmpty() || POM_PART.matcher(s.argument()).matches() ? null
                    : "names a part that is neither 'NAME dependencies' nor 'NAME build'";
            default -> "xml".equals(s.language()) ? "is XML but neither a pom part nor marked not compiled" : null;
        };
        if (problem != null) {
            throw new IllegalArgumentException(s.where() + ": the " + s.language() + " fence "
                    + (s.directive().isEmpty() ? "" : "marked '" + s.directive() + "' ") + problem);
        }
    }

    /** Writes every Java and Kotlin snippet as a source file under {@code project}'s {@code src/main}. */
    static void writeSources(List<Snippet> snippets, Path project) throws IOException {
        int index = 0;
        for (Snippet s : snippets) {
            index++;
            if (!s.compiled()) continue; // shell, text and marked fences are read, not compiled; pom() assembles XML
            String pkg = "snippets." + packagePart(s.doc()) + ".s" + index;
            if ("java".equals(s.language())) write(project.resolve("src/main/java"), javaSource(s, pkg));
            else write(project.resolve("src/main/kotlin"), kotlinSource(s, pkg, "Snippet" + index));
        }
    }

    /**
     * The application's {@code pom.xml}: the one whole pom, with every {@code NAME dependencies} part put before the
     * end of its last {@code <dependencies>} and every {@code NAME build} part before the end of its {@code <build>},
     * in document order.
     */
    static String pom(List<Snippet> snippets) {
        String pom = only(snippets, "pom", "").code();
        StringBuilder dependencies = new StringBuilder();
        StringBuilder build = new StringBuilder();
        for (Snippet s : snippets) {
            if (!"pom".equals(s.directive()) || s.argument().isEmpty()) continue;
            Matcher part = POM_PART.matcher(s.argument());
            if (!part.matches()) throw new IllegalArgumentException(s.where() + ": no pom part '" + s.argument() + "'");
            ("dependencies".equals(part.group(2)) ? dependencies : build).append(s.code());
        }
        int endOfDependencies = pom.lastIndexOf("</dependencies>");
        int endOfBuild = pom.lastIndexOf("</build>");
        if (endOfDependencies < 0 || endOfBuild < endOfDependencies) {
            throw new IllegalArgumentException("the README's pom has no <dependencies> followed by a <build>");
        }
        return pom.substring(0, endOfDependencies) + dependencies + pom.substring(endOfDependencies, endOfBuild)
                + build + pom.substring(endOfBuild);
    }

    /** A source file: the folder under the source root, its name and its text. */
    record Source(String pkg, String name, String text) {}

    static Source javaSource(Snippet s, String pkg) {
        String code = s.code();
        Matcher type = PUBLIC_JAVA_TYPE.matcher(code);
        if (!type.find()) type = JAVA_TYPE.matcher(code);
        if (type.find(0)) {
            Matcher own = PACKAGE.matcher(code);
            if (own.find()) return new Source(own.group(1), type.group(1) + ".java", code);
            return new Source(pkg, type.group(1) + ".java", "package " + pkg + ";\n" + code);
        }
        StringBuilder text = new StringBuilder("package " + pkg + ";\n");
        for (String i : JAVA_IMPORTS) text.append("import ").append(i).append(";\n");
        StringBuilder body = new StringBuilder();
        for (String line : code.split("\n", -1)) {
            if (line.startsWith("import ")) text.append(line).append('\n');
            else body.append("        ").append(line).append('\n');
        }
        text.append("/** ").append(s.where()).append(" */\n@SuppressWarnings(\"unused\")\nfinal class Fragment {\n")
                .append("    static void run(").append(s.is("given", "") ? "" : given(s)).append(") throws Exception {\n")
                .append(body).append("    }\n}\n");
        return new Source(pkg, "Fragment.java", text.toString());
    }

    static Source kotlinSource(Snippet s, String pkg, String fileName) {
        String code = s.code();
        if (KOTLIN_DECLARATION.matcher(code).find()) {
            Matcher named = KOTLIN_FILE_NAME.matcher(code);
            String name = (named.lookingAt() ? named.group(1) : fileName) + ".kt";
            Matcher own = PACKAGE.matcher(code);
            if (own.find()) return new Source(own.group(1), name, code);
            return new Source(pkg, name, "package " + pkg + "\n" + code);
        }
        StringBuilder text = new StringBuilder("package " + pkg + "\n");
        for (String i : KOTLIN_IMPORTS) text.append("import ").append(i).append('\n');
        StringBuilder body = new StringBuilder();
        for (String line : code.split("\n", -1)) {
            if (line.startsWith("import ")) text.append(line).append('\n');
            else body.append("    ").append(line).append('\n');
        }
        text.append("/** ").append(s.where()).append(" */\n@Suppress(\"UNUSED_PARAMETER\", \"UNUSED_VARIABLE\")\n")
                .append("suspend fun fragment(").append(s.is("given", "") ? "" : given(s)).append(") {\n")
                .append(body).append("}\n");
        return new Source(pkg, fileName + ".kt", text.toString());
    }

    private static String given(Snippet s) {
        return "given".equals(s.directive()) ? s.argument() : "";
    }

    private static Snippet only(List<Snippet> snippets, String directive, String argument) {
        List<Snippet> marked = snippets.stream().filter(s -> s.is(directive, argument)).toList();
        if (marked.size() != 1) {
            throw new IllegalArgumentException("the docs have " + marked.size() + " snippets marked <!-- " + directive
                    + (argument.isEmpty() ? "" : ": " + argument) + " -->; one is expected");
        }
        return marked.get(0);
    }

    private static void write(Path root, Source source) throws IOException {
        Path dir = root.resolve(source.pkg().replace('.', '/'));
        Files.createDirectories(dir);
        Path file = dir.resolve(source.name());
        if (Files.exists(file)) throw new IllegalArgumentException("two snippets both write " + file);
        Files.writeString(file, source.text());
    }

    /** {@code docs/guides/kv-transfer.md} → {@code kv_transfer}: a Java package name part. */
    private static String packagePart(Path doc) {
        String name = doc.getFileName().toString().replaceFirst("\\.md$", "").toLowerCase(Locale.ROOT);
        return name.replaceAll("[^a-z0-9]", "_");
    }
}
