package org.jccl.examples.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads the curves of another run for {@code --compare}, in one of two formats:
 * <ul>
 *   <li>Bench's (or raw_nccl_bench's) {@code --json} lines: one curve per operation and path, from each bandwidth
 *       line's out-of-place busbw (in-place when only that was measured); other lines are skipped. A launcher's
 *       {@code [rank 0] } prefix is allowed, so saved {@code --per-process} output reads as is.</li>
 *   <li>Two columns, as raw_nccl_bench {@code --two-column} prints: {@code SIZE BUSBW} lines (bytes, GB/s); a
 *       {@code #} line names the curve its data lines start (the last such line before them), else the file
 *       does.</li>
 * </ul>
 */
final class CompareFile {
    private CompareFile() {
    }

    static List<Series> read(Path file) throws IOException {
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        boolean json = lines.stream().map(CompareFile::jsonPart).anyMatch(l -> l != null);
        List<Series> series = json ? fromJson(lines, file) : fromColumns(lines, file);
        if (series.isEmpty()) throw new IllegalArgumentException(file + " holds no bandwidth results");
        return series;
    }

    private static List<Series> fromJson(List<String> lines, Path file) {
        Map<String, List<Series.Point>> points = new LinkedHashMap<>();
        for (String line : lines) {
            String object = jsonPart(line);
            if (object == null) continue;
            Map<String, Object> fields = MiniJson.parseObject(object);
            if (!"bandwidth".equals(fields.get("mode"))) continue;
            String label = fields.get("op") + " (" + fields.get("path") + ")";
            points.computeIfAbsent(label, l -> new ArrayList<>()).add(new Series.Point((long) number(fields, "size", file), busbw(fields, file)));
        }
        List<Series> series = new ArrayList<>();
        points.forEach((label, p) -> series.add(new Series(label, key(label), true, p)));
        return series;
    }

    /** The out-of-place busbw, else the in-place one, else a flat {@code busbw_gbs} (Bench's JSON before both forms). */
    @SuppressWarnings("unchecked")
    private static double busbw(Map<String, Object> fields, Path file) {
        for (String form : new String[] {"out_of_place", "in_place"}) {
            if (fields.get(form) instanceof Map<?, ?> timing) return number((Map<String, Object>) timing, "busbw_gbs", file);
        }
        return number(fields, "busbw_gbs", file);
    }

    private static List<Series> fromColumns(List<String> lines, Path file) {
        List<Series> series = new ArrayList<>();
        String nextName = file.getFileName().toString();
        String name = null;
        List<Series.Point> points = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty()) continue;
            if (line.startsWith("#")) {
                if (!points.isEmpty()) series.add(new Series(name, key(name), true, points)); // a comment ends a curve
                points = new ArrayList<>();
                if (!line.substring(1).isBlank()) nextName = line.substring(1).strip();
                continue;
            }
            if (points.isEmpty()) name = nextName;
            String[] columns = line.split("\\s+");
            try {
                if (columns.length != 2) throw new NumberFormatException("two columns expected");
                points.add(new Series.Point(Long.parseLong(columns[0]), Double.parseDouble(columns[1])));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(file + " line " + (i + 1) + ": expected 'SIZE BUSBW' (bytes, GB/s), got: " + line);
            }
        }
        if (!points.isEmpty()) series.add(new Series(name, key(name), true, points));
        return series;
    }

    /** The JSON object on {@code line} (after an optional "[rank N] " prefix), or null when it holds none. */
    private static String jsonPart(String line) {
        String s = line.strip();
        if (s.startsWith("[rank ")) s = s.substring(s.indexOf(']') + 1).strip();
        return s.startsWith("{") ? s : null;
    }

    /** Curves of the same operation share a colour: the key is the operation a label starts with, if it names one. */
    private static String key(String label) {
        String first = label.split("[\\s(]", 2)[0];
        for (BenchOp op : BenchOp.values()) if (op.id.equals(first)) return op.id;
        return label;
    }

    private static double number(Map<String, Object> fields, String name, Path file) {
        if (fields.get(name) instanceof Double d) return d;
        throw new IllegalArgumentException(file + ": a bandwidth line without a number for \"" + name + "\": " + fields);
    }
}
