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
 * The Java, Kotlin and {@code pom.xml} snippets of the README and the guides, turned into the sources of a user
 * project so that a build compiles every one of them and none can rot.
 *
 * <p>A snippet that declares a type (Java) or a top-level function or class (Kotlin) is a whole file: it keeps its
 * own {@code package} line, or gets one of its own. Any other snippet is a fragment: its statements become the body
 * of a method whose parameters the line before the fence names in an HTML comment the reader does not see,
 * {@code <!-- given: Communicator comm, Buffer buf -->} (Kotlin: {@code comm: CoroutineCommunicator}), with the
 * imports {@link #JAVA_IMPORTS} or {@link #KOTLIN_IMPORTS} (the guides say so at their top). {@code <!-- pom -->}
 * marks the application's whole {@code pom.xml}; {@code <!-- pom: kotlin dependencies -->} and
 * {@code <!-- pom: kotlin build -->} mark what Kotlin adds to its {@code <dependencies>} and {@code <build>}.
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
    private static final Pattern DIRECTIVE = Pattern.compile("^\\s*<!--\\s*(given|pom)\\s*:?\\s*(.*?)\\s*-->\\s*$");
    private static final Pattern JAVA_TYPE = Pattern.compile(
            "^(?:(?:public|final|abstract|sealed|non-sealed)\\s+)*(?:class|record|interface|enum)\\s+(\\w+)",
            Pattern.MULTILINE);
    private static final Pattern PUBLIC_JAVA_TYPE = Pattern.compile(
            "^public\\s+(?:(?:final|abstract|sealed|non-sealed)\\s+)*(?:class|record|interface|enum)\\s+(\\w+)",
            Pattern.MULTILINE);
    private static final Pattern KOTLIN_DECLARATION = Pattern.compile(
            "^(?:(?:private|internal|data|suspend|inline)\\s+)*(?:fun|class|object|interface)\\s", Pattern.MULTILINE);
    private static final Pattern PACKAGE = Pattern.compile("^package\\s+([\\w.]+);?\\s*$", Pattern.MULTILINE);

    /** One fenced snippet: where it is, its language, what the comment before it says, and its text. */
    record Snippet(Path doc, int line, String language, String directive, String argument, String code) {
        String where() {
            return doc.getFileName() + ":" + line;
        }

        boolean is(String directiveName, String directiveArgument) {
            return directiveName.equals(directive) && directiveArgument.equals(argument);
        }
    }

    private DocSnippets() {}

    /** Every snippet of {@code README.md} and of the Markdown files under {@code docs/}, in file and line order. */
    static List<Snippet> of(Path checkout) throws IOException {
        List<Path> docs = new ArrayList<>(List.of(checkout.resolve("README.md")));
        try (Stream<Path> files = Files.walk(checkout.resolve("docs"))) {
            files.filter(f -> f.toString().endsWith(".md")).sorted().forEach(docs::add);
        }
        List<Snippet> snippets = new ArrayList<>();
        for (Path doc : docs) snippets.addAll(in(doc, Files.readAllLines(doc)));
        return snippets;
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
            snippets.add(new Snippet(doc, i + 1, open.group(2).toLowerCase(Locale.ROOT),
                    directed ? directive.group(1) : "", directed ? directive.group(2) : "", code.toString()));
            i = end;
        }
        return snippets;
    }

    /** Writes every Java and Kotlin snippet as a source file under {@code project}'s {@code src/main}. */
    static void writeSources(List<Snippet> snippets, Path project) throws IOException {
        int index = 0;
        for (Snippet s : snippets) {
            index++;
            String pkg = "snippets." + packagePart(s.doc()) + ".s" + index;
            switch (s.language()) {
                case "java" -> write(project.resolve("src/main/java"), javaSource(s, pkg));
                case "kotlin" -> write(project.resolve("src/main/kotlin"), kotlinSource(s, pkg, "Snippet" + index));
                default -> { } // shell, text and XML are read, not compiled; the pom is assembled by pom()
            }
        }
    }

    /** The application's {@code pom.xml}: the marked whole pom, with what Kotlin adds put in its place. */
    static String pom(List<Snippet> snippets) {
        String pom = only(snippets, "pom", "").code();
        String dependencies = only(snippets, "pom", "kotlin dependencies").code();
        String build = only(snippets, "pom", "kotlin build").code();
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
            Matcher own = PACKAGE.matcher(code);
            if (own.find()) return new Source(own.group(1), fileName + ".kt", code);
            return new Source(pkg, fileName + ".kt", "package " + pkg + "\n" + code);
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
