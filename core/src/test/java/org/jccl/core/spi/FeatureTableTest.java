package org.jccl.core.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The backends guide's table of optional library functions is {@link Feature}, rendered: one source for both. */
class FeatureTableTest {
    private static final String BEGIN = "<!-- functions: generated from org.jccl.core.spi.Feature, checked by FeatureTableTest -->\n";
    private static final String END = "<!-- /functions -->";

    @Test
    void backendsGuideTableIsTheFeatureList() throws Exception {
        String guide = Files.readString(Path.of("..", "docs", "guides", "backends.md"), StandardCharsets.UTF_8);
        int begin = guide.indexOf(BEGIN);
        int end = guide.indexOf(END, Math.max(begin, 0));
        assertTrue(begin >= 0 && end > begin, "docs/guides/backends.md holds the generated table between its markers");
        assertEquals(rendered(), guide.substring(begin + BEGIN.length(), end),
                "docs/guides/backends.md's table of library functions differs from org.jccl.core.spi.Feature; paste the expected one");
    }

    private static String rendered() {
        return "| optional library function | first version |\n| --- | --- |\n"
                + Stream.of(Feature.values()).map(FeatureTableTest::row).collect(Collectors.joining());
    }

    private static String row(Feature f) {
        String names = "`" + f.function() + "`";
        if (f.functions().size() > 1) {
            names += f.functions().stream().skip(1).map(n -> "`" + n + "`").collect(Collectors.joining(", ", " (or ", ")"));
        }
        String version = f.firstVersion().equals(Feature.RCCL_ONLY) ? "RCCL only" : f.firstVersion();
        return "| " + names + " | " + version + " |\n";
    }
}
