package org.jccl.examples.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** --compare reads Bench's own JSON lines and raw_nccl_bench's two columns. */
class CompareFileTest {
    @TempDir
    Path dir;

    private Path file(String text) throws Exception {
        return Files.writeString(dir.resolve("other.txt"), text, StandardCharsets.UTF_8);
    }

    @Test
    void benchJsonGivesOneCurvePerOperationAndPath() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        Report json = Report.to(new PrintStream(bytes, true, StandardCharsets.UTF_8), true, true);
        json.bandwidth(new BandwidthRow(BenchOp.ALL_REDUCE, "raw", 2048, 512, "float32", "sum", -1, new Timing(1, 2, 3, -1, 0),
                new Timing(1, 2, 4, -1, 0)));
        json.bandwidth(new BandwidthRow(BenchOp.ALL_REDUCE, "raw", 1024, 256, "float32", "sum", -1, new Timing(1, 1, 1.5, -1, 0), null));
        json.bandwidth(new BandwidthRow(BenchOp.BROADCAST, "raw", 1024, 256, "float32", "none", 0, null, new Timing(1, 7, 7, -1, 0)));
        json.latency(BenchOp.ALL_REDUCE, "raw", 8, 10, 1, 2, 3, 1.5, 0); // not a bandwidth line: skipped
        List<Series> series = CompareFile.read(file(bytes.toString(StandardCharsets.UTF_8)));
        assertEquals(2, series.size());
        assertEquals("allreduce (raw)", series.get(0).label());
        assertEquals("allreduce", series.get(0).key());
        assertTrue(series.get(0).compare());
        assertEquals(List.of(new Series.Point(1024, 1.5), new Series.Point(2048, 3)), series.get(0).points(), "out-of-place, by size");
        assertEquals(List.of(new Series.Point(1024, 7)), series.get(1).points(), "in-place when only that was measured");
    }

    @Test
    void launcherPrefixesAndBenchsEarlierFlatJsonRead() throws Exception {
        List<Series> series = CompareFile.read(file("""
                [rank 0] {"mode":"bandwidth","op":"sendrecv","path":"core","size":64,"busbw_gbs":0.5}
                [rank 0] # a comment among the results
                """));
        assertEquals(List.of(new Series.Point(64, 0.5)), series.get(0).points());
        assertEquals("sendrecv (core)", series.get(0).label());
    }

    @Test
    void twoColumnsNamedByTheirCommentLine() throws Exception {
        List<Series> series = CompareFile.read(file("""
                # raw NCCL 2.28.9, 2 rank(s): bus bandwidth (GB/s) by size (B), out-of-place
                # allreduce (raw)
                67108864 269.4
                33554432 250.1

                # allgather (raw)
                33554432 200.5
                """));
        assertEquals(2, series.size());
        assertEquals("allreduce (raw)", series.get(0).label());
        assertEquals("allreduce", series.get(0).key());
        assertEquals(List.of(new Series.Point(33554432, 250.1), new Series.Point(67108864, 269.4)), series.get(0).points());
        assertEquals("allgather (raw)", series.get(1).label());
    }

    @Test
    void twoColumnsWithoutANameAreNamedByTheFile() throws Exception {
        List<Series> series = CompareFile.read(file("8 0.1\n16 0.2\n"));
        assertEquals("other.txt", series.get(0).label());
        assertEquals(2, series.get(0).points().size());
    }

    @Test
    void badFilesAreRefusedWithTheLine() throws Exception {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> CompareFile.read(file("# x\n8 0.1\n16 0.2 9\n")));
        assertTrue(e.getMessage().contains("line 3"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> CompareFile.read(file("# nothing but comments\n")));
        assertThrows(IllegalArgumentException.class, () -> CompareFile.read(file("{\"mode\":\"bandwidth\",\"op\":\"allreduce\"}\n")));
        assertThrows(IllegalArgumentException.class, () -> CompareFile.read(file("{\"mode\":\"bandwidth\",\n")));
    }
}
