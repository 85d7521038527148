package org.jccl.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jccl.core.config.JcclSettings;
import org.junit.jupiter.api.Test;

/**
 * The docs stay true as files move and settings are added: every relative link of every Markdown file reaches a file
 * and, for an {@code #anchor}, a heading of it (as GitHub names headings); the launching guide's configuration table
 * names every setting; the README stays short enough to read in ten minutes.
 */
class DocsTest {
    private static final Path CHECKOUT = Path.of("..", "..").toAbsolutePath().normalize();
    /** Folders that hold no docs of ours: build outputs, VCS data, packed GPU runs, IDE files. */
    private static final Set<String> NOT_DOCS =
            Set.of("target", ".git", ".gpu", ".whl", ".idea", ".vscode", "node_modules");
    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");
    private static final Pattern HEADING = Pattern.compile("^#{1,6}\\s+(.*?)\\s*#*\\s*$");
    private static final Pattern FENCE = Pattern.compile("^\\s*(```|~~~)");
    private static final Pattern INLINE_CODE = Pattern.compile("(`+).*?\\1");
    private static final Pattern SCHEME = Pattern.compile("^[a-zA-Z][a-zA-Z0-9+.-]*:");
    private static final int README_MAX_LINES = 300;

    @Test
    void everyRelativeLinkReachesAFileAndItsHeading() throws IOException {
        List<Path> docs = markdownFiles();
        assertTrue(docs.contains(CHECKOUT.resolve("README.md")), "the walk finds the README: " + docs);
        List<String> broken = new ArrayList<>();
        int checked = 0;
        for (Path doc : docs) {
            List<String> lines = prose(Files.readAllLines(doc));
            for (int i = 0; i < lines.size(); i++) {
                Matcher link = LINK.matcher(lines.get(i));
                while (link.find()) {
                    String target = link.group(1);
                    if (SCHEME.matcher(target).find()) continue; // http:, https:, mailto: are not checked here
                    checked++;
                    String problem = problem(doc, target);
                    if (problem != null) {
                        broken.add(CHECKOUT.relativize(doc) + ":" + (i + 1) + ": " + target + ": " + problem);
                    }
                }
            }
        }
        assertTrue(checked > 20, "the docs' links were not found: " + checked);
        assertEquals(List.of(), broken, "broken links");
    }

    @Test
    void theConfigurationTableNamesEverySetting() throws IOException {
        String guide = Files.readString(CHECKOUT.resolve("docs/guides/launching.md"));
        List<String> missing = new ArrayList<>();
        for (JcclSettings.Setting s : JcclSettings.ALL) {
            if (s.property().startsWith("jccl.") && !guide.contains("| `" + s.property() + "`")) missing.add(s.property());
        }
        String prefix = JcclSettings.NCCL_ENV_PREFIX + "NAME";
        if (!guide.contains("| `" + prefix + "`")) missing.add(prefix);
        assertEquals(List.of(), missing, "settings of JcclSettings missing from docs/guides/launching.md's table");
    }

    @Test
    void theReadmeStaysShort() throws IOException {
        long lines = Files.readAllLines(CHECKOUT.resolve("README.md")).size();
        assertTrue(lines <= README_MAX_LINES, "README.md has " + lines + " lines; a newcomer reads at most "
                + README_MAX_LINES + " in ten minutes: move detail to a guide under docs/guides/");
    }

    @Test
    void headingsAreNamedAsGitHubNamesThem() {
        assertEquals("collectives-on-2--h200-nvlink-nccl-2289--2026-11-23",
                slug("Collectives on 2 × H200 (NVLink), NCCL 2.28.9 — 2026-11-23"));
        assertEquals("one-sided-operations-rmabench-against-raw_rma_benchc",
                slug("One-sided operations: `RmaBench` against `raw_rma_bench.c`"));
        assertEquals("see-the-guide", slug("See [the guide](guide.md)"));
        assertEquals(Set.of("a", "a-1", "b-c"),
                anchors(List.of("# A", "text", "## A", "```sh", "# not a heading", "```", "### B `c`")));
    }

    /** Why {@code target}, linked from {@code doc}, does not resolve; null if it does. */
    private static String problem(Path doc, String target) throws IOException {
        int hash = target.indexOf('#');
        String file = hash < 0 ? target : target.substring(0, hash);
        Path resolved = file.isEmpty() ? doc : doc.getParent().resolve(file).normalize();
        if (!resolved.startsWith(CHECKOUT)) return "leaves the checkout";
        if (!Files.exists(resolved)) return "no such file";
        if (hash < 0) return null;
        if (!resolved.toString().endsWith(".md")) return "an anchor into a file that is not Markdown";
        String anchor = target.substring(hash + 1);
        return anchors(Files.readAllLines(resolved)).contains(anchor) ? null : "no heading with that anchor";
    }

    /** The anchors of a document's headings: GitHub's names, a repeated one suffixed -1, -2, .... */
    static Set<String> anchors(List<String> lines) {
        Set<String> anchors = new HashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        for (String line : outsideFences(lines)) {
            Matcher heading = HEADING.matcher(line);
            if (!heading.matches()) continue;
            String slug = slug(heading.group(1));
            int n = seen.merge(slug, 1, Integer::sum) - 1;
            anchors.add(n == 0 ? slug : slug + "-" + n);
        }
        return anchors;
    }

    /** GitHub's anchor for a heading: link texts kept, lower case, punctuation but '-' and '_' dropped, spaces as '-'. */
    static String slug(String heading) {
        String text = heading.replaceAll("\\[([^\\]]*)\\]\\([^)]*\\)", "$1").toLowerCase(Locale.ROOT);
        return text.replaceAll("[^\\p{L}\\p{N}\\p{M} _-]", "").replace(' ', '-');
    }

    /** The lines, those inside code fences (and the fences) blank: what may hold headings. */
    private static List<String> outsideFences(List<String> lines) {
        List<String> outside = new ArrayList<>();
        boolean inFence = false;
        for (String line : lines) {
            boolean fence = FENCE.matcher(line).find();
            if (fence) inFence = !inFence;
            outside.add(fence || inFence ? "" : line);
        }
        return outside;
    }

    /** The lines outside code fences, with inline code blanked too: what may hold links. */
    private static List<String> prose(List<String> lines) {
        return outsideFences(lines).stream().map(l -> INLINE_CODE.matcher(l).replaceAll("")).toList();
    }

    /** Every Markdown file of the checkout, outside build outputs and tool folders, in path order. */
    private static List<Path> markdownFiles() throws IOException {
        List<Path> docs = new ArrayList<>();
        Files.walkFileTree(CHECKOUT, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path folder, BasicFileAttributes attributes) {
                return NOT_DOCS.contains(folder.getFileName().toString()) ? FileVisitResult.SKIP_SUBTREE
                        : FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attributes) {
                if (file.toString().endsWith(".md")) docs.add(file);
                return FileVisitResult.CONTINUE;
            }
        });
        docs.sort(null);
        return docs;
    }
}
