package org.jccl.examples.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code --plot}: bus bandwidth against message size (log2 axis) as an SVG image, one curve per series, with axis
 * labels and a legend; curves of the same operation share a colour, compared ones are dashed.
 * <p>
 * Written by hand rather than with a charting library: the chart is a few dozen lines, circles and labels, while
 * a library (JFreeChart with an SVG exporter, say) would add megabytes of dependencies to an examples module whose
 * job is to show jccl; and SVG is plain XML that a browser shows and a test can parse with the JDK alone.
 * Every point carries {@code data-bytes} and {@code data-busbw} and a tooltip, so figures can be read back exactly.
 */
final class SvgPlot {
    private static final int WIDTH = 960;
    private static final int HEIGHT = 560;
    private static final int LEFT = 80;
    private static final int LEGEND = 250;
    private static final int TOP = 50;
    private static final int BOTTOM = 70;
    /** Tableau's ten colours: distinct for the nine operations and legible on white. */
    private static final String[] COLOURS = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
        "#ff9da7", "#9c755f", "#bab0ac"};
    /** Compared curves are dashed; several of one operation (from several files) each get their own pattern. */
    private static final String[] DASHES = {"6 4", "2 3", "10 3 2 3", "12 6"};

    private final StringBuilder svg = new StringBuilder();
    private final int minExp;
    private final int maxExp;
    private final double yTop;
    private final double yStep;

    private SvgPlot(List<Series> series) {
        long lo = Long.MAX_VALUE;
        long hi = 1;
        double top = 0;
        for (Series s : series) {
            for (Series.Point p : s.points()) {
                lo = Math.min(lo, p.bytes());
                hi = Math.max(hi, p.bytes());
                top = Math.max(top, p.busbw());
            }
        }
        if (lo == Long.MAX_VALUE) lo = 1;
        minExp = (int) Math.floor(log2(lo));
        maxExp = Math.max(minExp + 1, (int) Math.ceil(log2(hi)));
        yStep = niceStep(top > 0 ? top : 1);
        yTop = Math.max(yStep, Math.ceil(top / yStep) * yStep);
    }

    static void write(Path file, String title, String subtitle, List<Series> series) throws IOException {
        Files.writeString(file, render(title, subtitle, series), StandardCharsets.UTF_8);
    }

    static String render(String title, String subtitle, List<Series> series) {
        SvgPlot plot = new SvgPlot(series);
        plot.draw(title, subtitle, series);
        return plot.svg.toString();
    }

    private void draw(String title, String subtitle, List<Series> series) {
        svg.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        svg.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\""
                + " font-family=\"sans-serif\" font-size=\"12\">\n", WIDTH, HEIGHT, WIDTH, HEIGHT));
        svg.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
        text(WIDTH / 2.0, 20, "middle", "font-size=\"15\"", title);
        text(WIDTH / 2.0, 38, "middle", "font-size=\"11\" fill=\"#555555\"", subtitle);
        axes();
        Map<String, String> colours = new HashMap<>();
        Map<String, Integer> comparedSoFar = new HashMap<>();
        double legendRow = Math.min(20, (HEIGHT - TOP - 20) / (double) Math.max(1, series.size()));
        for (int i = 0; i < series.size(); i++) {
            Series s = series.get(i);
            String colour = colours.computeIfAbsent(s.key(), k -> COLOURS[colours.size() % COLOURS.length]);
            String dash = "";
            if (s.compare()) {
                int earlier = comparedSoFar.merge(s.key(), 1, Integer::sum) - 1;
                dash = " stroke-dasharray=\"" + DASHES[earlier % DASHES.length] + "\"";
            }
            curve(s, colour, dash);
            legendEntry(TOP + 10 + i * legendRow, s, colour, dash);
        }
        svg.append("</svg>\n");
    }

    private void axes() {
        int right = WIDTH - LEGEND;
        int bottom = HEIGHT - BOTTOM;
        int every = sizeTickStep(maxExp - minExp);
        int first = Math.floorDiv(minExp + every - 1, every) * every;
        svg.append("<g class=\"grid\" stroke=\"#e0e0e0\">\n");
        for (int e = first; e <= maxExp; e += every) line(x(Math.pow(2, e)), TOP, x(Math.pow(2, e)), bottom, "");
        for (double v = yStep; v <= yTop + yStep / 2; v += yStep) line(LEFT, y(v), right, y(v), "");
        svg.append("</g>\n");
        svg.append(String.format(Locale.ROOT, "<rect class=\"frame\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"black\"/>\n",
                LEFT, TOP, right - LEFT, bottom - TOP));
        for (int e = first; e <= maxExp; e += every) text(x(Math.pow(2, e)), bottom + 18, "middle", "", sizeLabel(e));
        int decimals = Math.max(0, (int) -Math.floor(Math.log10(yStep)));
        for (double v = 0; v <= yTop + yStep / 2; v += yStep) {
            text(LEFT - 8, y(v) + 4, "end", "", String.format(Locale.ROOT, "%." + decimals + "f", v));
        }
        text((LEFT + right) / 2.0, bottom + 45, "middle", "class=\"axis-label\"", "message size (bytes, log2 scale)");
        svg.append(String.format(Locale.ROOT, "<text class=\"axis-label\" x=\"0\" y=\"0\" text-anchor=\"middle\""
                + " transform=\"translate(%d %.1f) rotate(-90)\">bus bandwidth (GB/s)</text>\n", LEFT - 55, (TOP + bottom) / 2.0));
    }

    private void curve(Series s, String colour, String dash) {
        svg.append("<g class=\"series\" data-label=\"").append(escape(s.label())).append("\" data-compare=\"").append(s.compare())
                .append("\">\n");
        StringBuilder points = new StringBuilder();
        for (Series.Point p : s.points()) points.append(String.format(Locale.ROOT, "%.1f,%.1f ", x(p.bytes()), y(p.busbw())));
        svg.append("<polyline fill=\"none\" stroke=\"").append(colour).append("\" stroke-width=\"2\"").append(dash)
                .append(" points=\"").append(points.toString().strip()).append("\"/>\n");
        for (Series.Point p : s.points()) {
            svg.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\" data-bytes=\"%d\" data-busbw=\"%.3f\">"
                    + "<title>%s: %d B, %.2f GB/s</title></circle>\n", x(p.bytes()), y(p.busbw()), colour, p.bytes(), p.busbw(),
                    escape(s.label()), p.bytes(), p.busbw()));
        }
        svg.append("</g>\n");
    }

    private void legendEntry(double top, Series s, String colour, String dash) {
        double left = WIDTH - LEGEND + 20;
        svg.append("<g class=\"legend\">");
        svg.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"%s/>",
                left, top, left + 28, top, colour, dash));
        svg.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%.1f\">%s</text>", left + 36, top + 4, escape(s.label())));
        svg.append("</g>\n");
    }

    private void line(double x1, double y1, double x2, double y2, String attributes) {
        svg.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"%s/>\n", x1, y1, x2, y2, attributes));
    }

    private void text(double x, double y, String anchor, String attributes, String content) {
        svg.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\"%s>%s</text>\n", x, y, anchor,
                attributes.isEmpty() ? "" : " " + attributes, escape(content)));
    }

    private double x(double bytes) {
        return LEFT + (log2(bytes) - minExp) / (maxExp - minExp) * (WIDTH - LEGEND - LEFT);
    }

    private double y(double busbw) {
        return HEIGHT - BOTTOM - busbw / yTop * (HEIGHT - BOTTOM - TOP);
    }

    private static double log2(double v) {
        return Math.log(v) / Math.log(2);
    }

    /**
     * Powers of two between size labels: at most a dozen labels, on multiples of the step, so that with steps
     * of 1, 2, 5 or 10 the round sizes 1K, 1M, 1G are among them.
     */
    static int sizeTickStep(int span) {
        for (int step : new int[] {1, 2, 5, 10}) if (span / step <= 12) return step;
        return (span + 11) / 12;
    }

    /** A round step (1, 2 or 5 times a power of ten) giving about five gridlines up to {@code max}. */
    static double niceStep(double max) {
        double raw = max / 5;
        double magnitude = Math.pow(10, Math.floor(Math.log10(raw)));
        double norm = raw / magnitude;
        return (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * magnitude;
    }

    /** 2^exp bytes as nccl-tests-style sizes: 8, 512, 1K, 64M, 2G. */
    static String sizeLabel(int exp) {
        String[] units = {"", "K", "M", "G", "T", "P"};
        int unit = Math.max(0, Math.min(units.length - 1, exp / 10));
        return (1L << (exp - unit * 10)) + units[unit];
    }

    static String escape(String s) {
        StringBuilder out = new StringBuilder(s.length());
        for (char c : s.toCharArray()) {
            switch (c) {
                case '&' -> out.append("&amp;");
                case '<' -> out.append("&lt;");
                case '>' -> out.append("&gt;");
                case '"' -> out.append("&quot;");
                case '\'' -> out.append("&apos;");
                default -> out.append(c);
            }
        }
        return out.toString();
    }
}
