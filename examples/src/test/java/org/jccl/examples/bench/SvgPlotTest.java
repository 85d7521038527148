package org.jccl.examples.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/** The --plot image: well-formed SVG, one curve per series with its points in size order, labels and legend. */
class SvgPlotTest {
    static final String SVG = "http://www.w3.org/2000/svg";

    /** Parses with the JDK's DocumentBuilder: any malformed markup or bad escaping fails here. */
    static Document parse(String svg) throws Exception {
        DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
        factory.setNamespaceAware(true);
        return factory.newDocumentBuilder().parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
    }

    /** The curves ({@code g class="series"}) of a parsed plot. */
    static List<Element> curves(Document doc) {
        List<Element> curves = new ArrayList<>();
        NodeList groups = doc.getElementsByTagNameNS(SVG, "g");
        for (int i = 0; i < groups.getLength(); i++) {
            Element g = (Element) groups.item(i);
            if (g.getAttribute("class").equals("series")) curves.add(g);
        }
        return curves;
    }

    /** Asserts a curve's points go left to right in increasing size; returns the sizes. */
    static List<Long> sizesInOrder(Element curve) {
        NodeList circles = curve.getElementsByTagNameNS(SVG, "circle");
        List<Long> sizes = new ArrayList<>();
        double lastX = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < circles.getLength(); i++) {
            Element c = (Element) circles.item(i);
            long bytes = Long.parseLong(c.getAttribute("data-bytes"));
            double x = Double.parseDouble(c.getAttribute("cx"));
            if (!sizes.isEmpty()) assertTrue(bytes > sizes.get(sizes.size() - 1), "sizes increase along " + curve.getAttribute("data-label"));
            assertTrue(x > lastX, "x increases with size along " + curve.getAttribute("data-label"));
            sizes.add(bytes);
            lastX = x;
        }
        String[] polyline = ((Element) curve.getElementsByTagNameNS(SVG, "polyline").item(0)).getAttribute("points").split(" ");
        assertEquals(sizes.size(), polyline.length, "the line joins every point");
        return sizes;
    }

    private static Series series(String label, boolean compare, long... sizes) {
        List<Series.Point> points = new ArrayList<>();
        for (long s : sizes) points.add(new Series.Point(s, s / 1000.0));
        return new Series(label, label.split(" ")[0], compare, points);
    }

    @Test
    void oneCurvePerSeriesWithPointsInIncreasingSizeOrder() throws Exception {
        List<Series> series = List.of(series("allreduce (core)", false, 4096, 8, 1 << 20, 512), // out of order on purpose
                series("allgather (core)", false, 8, 512, 4096), series("allreduce (raw)", true, 1 << 20, 8, 4096));
        Document doc = parse(SvgPlot.render("title", "subtitle", series));
        List<Element> curves = curves(doc);
        assertEquals(3, curves.size());
        assertEquals(List.of(8L, 512L, 4096L, 1L << 20), sizesInOrder(curves.get(0)));
        assertEquals(List.of(8L, 512L, 4096L), sizesInOrder(curves.get(1)));
        assertEquals(List.of(8L, 4096L, 1L << 20), sizesInOrder(curves.get(2)));
        assertEquals("allreduce (raw)", curves.get(2).getAttribute("data-label"));
        assertEquals("true", curves.get(2).getAttribute("data-compare"));
        Element compared = (Element) curves.get(2).getElementsByTagNameNS(SVG, "polyline").item(0);
        Element own = (Element) curves.get(0).getElementsByTagNameNS(SVG, "polyline").item(0);
        assertTrue(compared.hasAttribute("stroke-dasharray") && !own.hasAttribute("stroke-dasharray"), "compared curves are dashed");
        assertEquals(own.getAttribute("stroke"), compared.getAttribute("stroke"), "one operation, one colour");
    }

    @Test
    void axesAreLabelledAndTheLegendNamesEveryCurve() throws Exception {
        Document doc = parse(SvgPlot.render("Bus bandwidth", "host", List.of(series("allreduce (core)", false, 8, 1 << 30),
                series("sendrecv (core)", false, 8, 64))));
        List<String> texts = texts(doc);
        assertTrue(texts.contains("message size (bytes, log2 scale)"), texts.toString());
        assertTrue(texts.contains("bus bandwidth (GB/s)"), texts.toString());
        assertTrue(texts.containsAll(List.of("32", "1K", "32K", "1M", "32M", "1G")), "size ticks in nccl-tests' units: " + texts);
        assertTrue(texts.containsAll(List.of("allreduce (core)", "sendrecv (core)")), "legend: " + texts);
    }

    @Test
    void labelsFromFilesAreEscaped() throws Exception {
        Document doc = parse(SvgPlot.render("a <b> & \"c\"", "'d'", List.of(series("x & <y> (raw)", true, 8, 16))));
        assertEquals("x & <y> (raw)", curves(doc).get(0).getAttribute("data-label"));
        assertTrue(texts(doc).contains("a <b> & \"c\""));
    }

    @Test
    void noPointsStillMakesAnImage() throws Exception {
        Document doc = parse(SvgPlot.render("t", "s", List.of()));
        assertEquals("svg", doc.getDocumentElement().getLocalName());
        assertEquals(0, curves(doc).size());
    }

    @Test
    void sizeLabelsAndGridSteps() {
        assertEquals("8", SvgPlot.sizeLabel(3));
        assertEquals("512", SvgPlot.sizeLabel(9));
        assertEquals("1K", SvgPlot.sizeLabel(10));
        assertEquals("128M", SvgPlot.sizeLabel(27));
        assertEquals("2G", SvgPlot.sizeLabel(31));
        assertEquals(50.0, SvgPlot.niceStep(230), 1e-9);
        assertEquals(0.2, SvgPlot.niceStep(0.9), 1e-9);
        assertEquals(1.0, SvgPlot.niceStep(5), 1e-9);
        assertEquals(1, SvgPlot.sizeTickStep(12));
        assertEquals(2, SvgPlot.sizeTickStep(13));
        assertEquals(5, SvgPlot.sizeTickStep(27));
        assertEquals(10, SvgPlot.sizeTickStep(65));
    }

    private static List<String> texts(Document doc) {
        NodeList nodes = doc.getElementsByTagNameNS(SVG, "text");
        List<String> texts = new ArrayList<>();
        for (int i = 0; i < nodes.getLength(); i++) texts.add(nodes.item(i).getTextContent());
        return texts;
    }
}
