package org.jccl.examples.bench;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One curve of the bandwidth plot: bus bandwidth by message size, points in increasing size order. {@code key}
 * groups curves of the same operation (one colour), {@code compare} marks a curve read from another run (dashed).
 */
record Series(String label, String key, boolean compare, List<Point> points) {
    record Point(long bytes, double busbw) {
    }

    Series {
        points = points.stream().sorted(Comparator.comparingLong(Point::bytes)).toList();
    }

    /** This run's curves: one per operation, in the order measured, labelled "operation (path)". */
    static List<Series> byOperation(List<BandwidthRow> rows) {
        Map<BenchOp, List<Point>> points = new LinkedHashMap<>();
        Map<BenchOp, String> paths = new LinkedHashMap<>();
        for (BandwidthRow row : rows) {
            points.computeIfAbsent(row.op(), op -> new ArrayList<>()).add(new Point(row.bytes(), row.plottedBusbw()));
            paths.putIfAbsent(row.op(), row.path());
        }
        List<Series> series = new ArrayList<>();
        points.forEach((op, p) -> series.add(new Series(label(op, paths.get(op)), op.id, false, p)));
        return series;
    }

    static String label(BenchOp op, String path) {
        return op.id + " (" + path + ")";
    }
}
