package org.jccl.examples.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * One row of the bandwidth table: an operation at one size, with its out-of-place and in-place measurements side by
 * side as nccl-tests prints them; a form that was not measured is null. {@code redop} is "none" for operations
 * that do not reduce and {@code root} -1 for those without a root, as nccl-tests shows them.
 */
record BandwidthRow(BenchOp op, String path, long bytes, long count, String type, String redop, int root,
                    Timing outOfPlace, Timing inPlace) {
    BandwidthRow {
        if (outOfPlace == null && inPlace == null) throw new IllegalArgumentException("a row measures at least one form");
    }

    /** The measured forms, out-of-place first. */
    List<Timing> measured() {
        List<Timing> forms = new ArrayList<>(2);
        if (outOfPlace != null) forms.add(outOfPlace);
        if (inPlace != null) forms.add(inPlace);
        return forms;
    }

    /** The bus bandwidth a chart shows for this row: out-of-place when measured (nccl-tests' usual figure). */
    double plottedBusbw() {
        return (outOfPlace != null ? outOfPlace : inPlace).busbw();
    }
}
