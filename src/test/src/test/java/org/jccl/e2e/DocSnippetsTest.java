package org.jccl.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.jccl.e2e.DocSnippets.Snippet;
import org.jccl.e2e.DocSnippets.Source;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How a document's fences become sources; {@link UserProjectEndToEndTest} compiles what this makes. */
class DocSnippetsTest {
    private static final Path DOC = Path.of("docs", "guides", "kv-transfer.md");

    private static List<Snippet> parse(String... lines) {
        return DocSnippets.in(DOC, List.of(lines));
    }

    @Test
    void aFenceBecomesASnippetWithTheDirectiveOfTheCommentBeforeIt() {
        List<Snippet> snippets = parse("text", "<!-- given: Communicator comm -->", "```java", "comm.rank();", "```",
                "", "```sh", "mvn verify", "```");
        assertEquals(2, snippets.size());
        Snippet first = snippets.get(0);
        assertEquals(3, first.line());
        assertEquals("java", first.language());
        assertEquals("given", first.directive());
        assertEquals("Communicator comm", first.argument());
        assertEquals("comm.rank();\n", first.code());
        assertEquals("", snippets.get(1).directive());
    }

    @Test
    void anIndentedFenceInAListLosesItsIndent() {
        Snippet s = parse("- item:", "  ```kotlin", "  val x = 1", "  ```").get(0);
        assertEquals("val x = 1\n", s.code());
    }

    @Test
    void aFenceThatNeverClosesIsAnError() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> parse("```java", "x();"));
        assertTrue(e.getMessage().contains("kv-transfer.md:1"), e.getMessage());
    }

    @Test
    void aJavaFragmentIsTheBodyOfAMethodTakingWhatItIsGiven() {
        Snippet s = parse("<!-- given: Communicator comm -->", "```java", "import java.util.List;", "comm.rank();", "```")
                .get(0);
        Source source = DocSnippets.javaSource(s, "snippets.kv_transfer.s1");
        assertEquals("snippets.kv_transfer.s1", source.pkg());
        assertEquals("Fragment.java", source.name());
        assertTrue(source.text().contains("import java.util.List;\n"), source.text());
        assertTrue(source.text().contains("static void run(Communicator comm) throws Exception {\n        comm.rank();"),
                source.text());
    }

    @Test
    void aJavaTypeKeepsItsOwnPackageOrGetsOne() {
        Snippet own = parse("```java", "package com.example;", "public final class Main {}", "```").get(0);
        assertEquals(new Source("com.example", "Main.java", "package com.example;\npublic final class Main {}\n"),
                DocSnippets.javaSource(own, "snippets.x.s1"));
        Snippet none = parse("```java", "record Pair(int a, int b) {}", "```").get(0);
        assertEquals("snippets.x.s2", DocSnippets.javaSource(none, "snippets.x.s2").pkg());
        assertEquals("Pair.java", DocSnippets.javaSource(none, "snippets.x.s2").name());
    }

    @Test
    void aKotlinFragmentIsTheBodyOfASuspendFunction() {
        Snippet s = parse("<!-- given: comm: CoroutineCommunicator -->", "```kotlin", "comm.barrier()", "```").get(0);
        Source source = DocSnippets.kotlinSource(s, "snippets.kv_transfer.s3", "Snippet3");
        assertTrue(source.text().contains("suspend fun fragment(comm: CoroutineCommunicator) {\n    comm.barrier()"),
                source.text());
        Snippet program = parse("```kotlin", "fun main() = println(1)", "```").get(0);
        assertTrue(DocSnippets.kotlinSource(program, "p.s4", "Snippet4").text().startsWith("package p.s4\nfun main()"));
    }

    @Test
    void aKotlinFileIsNamedByItsFirstLineSoThatItsClassIsKnown() {
        Snippet named = parse("```kotlin", "// src/main/kotlin/com/example/CoroutineRanks.kt", "package com.example", "",
                "fun main() = println(1)", "```").get(0);
        Source source = DocSnippets.kotlinSource(named, "p.s5", "Snippet5");
        assertEquals("com.example", source.pkg());
        assertEquals("CoroutineRanks.kt", source.name());
        Snippet unnamed = parse("```kotlin", "package com.example", "fun main() = println(1)", "```").get(0);
        assertEquals("Snippet6.kt", DocSnippets.kotlinSource(unnamed, "p.s6", "Snippet6").name());
    }

    @Test
    void thePomGetsWhatEachFeatureAddsInPlace() {
        List<Snippet> snippets = parse("<!-- pom -->", "```xml",
                "<project><dependencies><a/></dependencies><build><b/></build></project>", "```",
                "<!-- pom: kotlin dependencies -->", "```xml", "<k/>", "```",
                "<!-- pom: kotlin build -->", "```xml", "<plugins/>", "```",
                "<!-- pom: metrics dependencies -->", "```xml", "<m/>", "```");
        assertEquals("<project><dependencies><a/><k/>\n<m/>\n</dependencies><build><b/><plugins/>\n</build></project>\n",
                DocSnippets.pom(snippets));
    }

    @Test
    void aMissingOrRepeatedPomIsAnError() {
        String[] part = {"<!-- pom: kotlin build -->", "```xml", "<plugins/>", "```"};
        assertThrows(IllegalArgumentException.class, () -> DocSnippets.pom(parse(part)));
        List<Snippet> twice = parse("<!-- pom -->", "```xml", "<project/>", "```", "<!-- pom -->", "```xml", "<project/>",
                "```");
        assertThrows(IllegalArgumentException.class, () -> DocSnippets.pom(twice));
    }

    @Test
    void aFenceMarkedNotCompiledIsReadButWritesNoSource(@TempDir Path project) throws Exception {
        List<Snippet> snippets = parse("<!-- not compiled: pseudo-code -->", "```java", "for each rank: allReduce", "```",
                "```java", "class Real {}", "```");
        assertTrue(snippets.get(0).notCompiled());
        assertEquals("pseudo-code", snippets.get(0).argument());
        assertFalse(snippets.get(0).compiled());
        assertTrue(snippets.get(1).compiled());
        DocSnippets.writeSources(snippets, project);
        try (Stream<Path> files = Files.walk(project)) {
            assertEquals(List.of("Real.java"), files.filter(Files::isRegularFile).map(f -> f.getFileName().toString())
                    .toList());
        }
    }

    @Test
    void whatWouldEscapeTheBuildSilentlyIsAnError() {
        // an XML fence that is no pom part; a mark without its reason; marks on fences they cannot apply to
        assertError("kv-transfer.md:1", "```xml", "<dependency/>", "```");
        assertError("gives no reason", "<!-- not compiled -->", "```java", "x();", "```");
        assertError("never compiled", "<!-- not compiled: output -->", "```text", "3.0", "```");
        assertError("not Java or Kotlin", "<!-- given: int n -->", "```sh", "echo", "```");
        assertError("not XML", "<!-- pom -->", "```java", "class P {}", "```");
        assertError("neither", "<!-- pom: kotlin -->", "```xml", "<k/>", "```");
    }

    private static void assertError(String expected, String... lines) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> parse(lines));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }

    @Test
    void theDocumentsAreTheReadmeAndTheGuidesNotTheDesign(@TempDir Path checkout) throws Exception {
        Files.createDirectories(checkout.resolve("docs/guides/sub"));
        for (String f : List.of("README.md", "docs/design.md", "docs/guides/b.md", "docs/guides/a.md",
                "docs/guides/sub/c.md", "docs/guides/notes.txt")) {
            Files.writeString(checkout.resolve(f), "text\n");
        }
        assertEquals(List.of("README.md", "docs/guides/a.md", "docs/guides/b.md", "docs/guides/sub/c.md"),
                DocSnippets.documents(checkout).stream().map(d -> checkout.relativize(d).toString().replace('\\', '/'))
                        .toList());
    }
}
