package org.jccl.examples.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/**
 * Latency against load as an SVG image: p50, p99 and p99.9 (ms, linear axis) against concurrent clients (log2
 * axis), one labelled point per level with its requests/s in the tooltip. Drawn by hand like the bench's bandwidth
 * plot (a few lines and circles; no charting library in an examples module), sharing its scale steps, with its own
 * axes since that plot is bandwidth against message size.
 */
public final class LatencyPlot {
    private static final int WIDTH = 860;
    private static final int HEIGHT = 500;
    private static final int LEFT = 80;
    private static final int RIGHT = 150;
    private static final int TOP = 50;
    private static final int BOTTOM = 60;
    private static final String[] NAMES = {"p50", "p99", "p99.9"};
    private static final String[] COLOURS = {"#4e79a7", "#f28e2b", "#e15759"};

    private LatencyPlot() {
    }

    /** Writes the plot of {@code rows} to {@code file}. */
    public static void write(Path file, String title, List<LoadGenerator.Row> rows) throws IOException {
        Files.writeString(file, render(title, rows), StandardCharsets.UTF_8);
    }

    static String render(String title, List<LoadGenerator.Row> rows) {
        List<ToDoubleFunction<LoadGenerator.Row>> series = List.of(r -> r.p50() / 1e3, r -> r.p99() / 1e3, r -> r.p999() / 1e3);
        double top = 0;
        int maxExp = 1;
        for (LoadGenerator.Row r : rows) {
            for (ToDoubleFunction<LoadGenerator.Row> f : series) top = Math.max(top, finite(f.applyAsDouble(r)));
            maxExp = Math.max(maxExp, exp(r.clients()));
        }
        double step = SvgPlot.niceStep(top > 0 ? top : 1);
        double yTop = Math.max(step, Math.ceil(top / step) * step);
        int plotW = WIDTH - LEFT - RIGHT;
        int plotH = HEIGHT - TOP - BOTTOM;
        StringBuilder svg = new StringBuilder();
        svg.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                + "font-family=\"sans-serif\" font-size=\"12\">%n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>%n", WIDTH, HEIGHT));
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"28\" font-size=\"16\">%s</text>%n", LEFT, SvgPlot.escape(title)));
        for (double y = 0; y <= yTop + step / 2; y += step) {
            double py = TOP + plotH - y / yTop * plotH;
            svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                    + "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>%n", LEFT, py, LEFT + plotW, py, LEFT - 6, py + 4, label(y)));
        }
        for (int e = 0; e <= maxExp; e++) {
            double px = LEFT + (double) e / maxExp * plotW;
            svg.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%d</text>%n", px, TOP + plotH + 18, 1 << e));
        }
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">concurrent clients</text>%n"
                + "<text transform=\"translate(20 %d) rotate(-90)\" text-anchor=\"middle\">latency (ms)</text>%n",
                LEFT + plotW / 2, HEIGHT - 15, TOP + plotH / 2));
        for (int s = 0; s < series.size(); s++) {
            StringBuilder path = new StringBuilder();
            StringBuilder points = new StringBuilder();
            for (LoadGenerator.Row r : rows) {
                double v = finite(series.get(s).applyAsDouble(r));
                double px = LEFT + (double) exp(r.clients()) / maxExp * plotW;
                double py = TOP + plotH - v / yTop * plotH;
                path.append(path.length() == 0 ? "M" : " L").append(String.format(Locale.ROOT, "%.1f %.1f", px, py));
                points.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\" data-clients=\"%d\" "
                        + "data-ms=\"%.3f\"><title>%d clients: %s %.3f ms, %.0f req/s</title></circle>%n",
                        px, py, COLOURS[s], r.clients(), v, r.clients(), NAMES[s], v, r.perSecond()));
            }
            svg.append(String.format(Locale.ROOT, "<path d=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>%n", path, COLOURS[s]));
            svg.append(points);
            int ly = TOP + 10 + s * 20;
            svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"/>"
                    + "<text x=\"%d\" y=\"%d\">%s</text>%n", WIDTH - RIGHT + 15, ly, WIDTH - RIGHT + 40, ly, COLOURS[s],
                    WIDTH - RIGHT + 46, ly + 4, NAMES[s]));
        }
        return svg.append("</svg>\n").toString();
    }

    private static int exp(int clients) {
        return 31 - Integer.numberOfLeadingZeros(Math.max(1, clients));
    }

    private static double finite(double v) {
        return Double.isFinite(v) ? v : 0;
    }

    private static String label(double v) {
        return v == Math.rint(v) ? Long.toString((long) v) : String.format(Locale.ROOT, "%.2f", v);
    }
}
