package org.jccl.examples.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayInputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/** The latency plot is well-formed SVG whose points read back as the rows' figures; the load stays on loopback. */
class LatencyPlotTest {
    @Test
    void eachLevelIsAPointOfEachPercentileCarryingItsFigures() throws Exception {
        List<LoadGenerator.Row> rows = List.of(
                new LoadGenerator.Row(1, 100, 0, 0, 1.0, 100, 1_500, 3_000, 4_000),
                new LoadGenerator.Row(16, 800, 0, 0, 1.0, 800, 12_000, 30_000, 45_500));
        String svg = LatencyPlot.render("a <service>", rows);
        NodeList circles = DocumentBuilderFactory.newInstance().newDocumentBuilder()
                .parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8))).getElementsByTagName("circle");
        assertEquals(6, circles.getLength());
        Element p999At16 = (Element) circles.item(5);
        assertEquals("16", p999At16.getAttribute("data-clients"));
        assertEquals("45.500", p999At16.getAttribute("data-ms"));
    }

    @Test
    void theLoadGeneratorRefusesAHostOtherThanLoopback() {
        LoadGenerator.Workload none = new LoadGenerator.Workload() {
            @Override
            public String path(long index) {
                return "/";
            }

            @Override
            public boolean check(long index, String body) {
                return true;
            }
        };
        assertThrows(IllegalArgumentException.class, () -> new LoadGenerator(URI.create("http://192.0.2.1:80"), none));
    }
}
