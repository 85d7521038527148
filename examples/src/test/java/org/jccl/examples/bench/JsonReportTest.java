package org.jccl.examples.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Bench's JSON lines: one object per row, both forms as objects, nothing else on stdout. */
class JsonReportTest {
    @Test
    void aBandwidthRowIsOneObjectWithBothForms() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        Report r = Report.to(new PrintStream(bytes, true, StandardCharsets.UTF_8), true, true);
        r.header("title", "bandwidth");
        r.bandwidth(new BandwidthRow(BenchOp.REDUCE, "reactive", 4096, 1024, "float32", "sum", 1,
                new Timing(10, 0.4096, 0.4096, 0, 120.5), null));
        r.bandwidthFooter();
        List<String> lines = bytes.toString(StandardCharsets.UTF_8).lines().toList();
        assertEquals(1, lines.size(), "no header or footer: " + lines);
        Map<String, Object> row = MiniJson.parseObject(lines.get(0));
        assertEquals("bandwidth", row.get("mode"));
        assertEquals("reduce", row.get("op"));
        assertEquals("reactive", row.get("path"));
        assertEquals(4096.0, row.get("size"));
        assertEquals(1.0, row.get("root"));
        assertEquals(Map.of("time_us", 10.0, "algbw_gbs", 0.410, "busbw_gbs", 0.410, "wrong", 0.0, "event_cpu_ns_per_op", 120.5),
                row.get("out_of_place"));
        assertNull(row.get("in_place"));
        assertEquals(true, row.containsKey("in_place"));
    }

    @Test
    void anIdleResultCarriesTheEventThreadAndEveryJcclThread() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        Report r = Report.to(new PrintStream(bytes, true, StandardCharsets.UTF_8), true, false);
        r.idle(2.0, 0.5, "WAITING", 480.25, 10);
        Map<String, Object> row = MiniJson.parseObject(bytes.toString(StandardCharsets.UTF_8).strip());
        assertEquals(Map.of("mode", "idle", "seconds", 2.0, "event_cpu_us", 0.5, "state", "WAITING", "jccl_threads", 10.0,
                "jccl_cpu_us", 480.3), row);
    }
}
