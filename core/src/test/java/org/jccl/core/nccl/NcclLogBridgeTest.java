package org.jccl.core.nccl;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jccl.core.config.JcclSettings;
import org.jccl.core.error.InvalidArgumentException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code jccl.nccl.log=slf4j}: NCCL's lines read from a pipe, each at its level; the GPU side is NcclLogGpuTest's. */
class NcclLogBridgeTest {
    @AfterEach
    void clear() {
        System.clearProperty(JcclSettings.NCCL_LOG.property());
    }

    private static List<String> delivered(String... lines) {
        List<String> out = new ArrayList<>();
        for (String line : lines) NcclLogBridge.deliver(line, (level, text) -> out.add(level + " " + text));
        return out;
    }

    @Test
    void eachLineKeepsItsLevelAndLosesTheLevelWord() {
        assertEquals(List.of("INFO gpu7:123:456 [0] NCCL version 2.28.9+cuda13.0",
                        "WARN gpu7:123:789 [1] misc/socket.cc:50 NCCL WARN-like text stays",
                        "TRACE gpu7:1:2 [0] 12.5 enqueue",
                        "INFO h:1:2 [0] quoting NCCL WARN text",
                        "INFO a continuation line"),
                delivered("gpu7:123:456 [0] NCCL INFO NCCL version 2.28.9+cuda13.0",
                        "gpu7:123:789 [1] NCCL WARN misc/socket.cc:50 NCCL WARN-like text stays",
                        "gpu7:1:2 [0] NCCL TRACE 12.5 enqueue",
                        "h:1:2 [0] NCCL INFO quoting NCCL WARN text",
                        "a continuation line", "", "   "));
    }

    @Test
    void linesWrittenIntoThePipeArriveInOrderAcrossWritersThatComeAndGo(@TempDir Path dir) throws IOException {
        List<String> seen = new CopyOnWriteArrayList<>();
        NcclLogBridge bridge = NcclLogBridge.open(dir, (level, text) -> seen.add(level + " " + text));
        assertTrue(Files.exists(bridge.pipe()) && !Files.isRegularFile(bridge.pipe()), "a named pipe: " + bridge.pipe());
        // NCCL opens the file once per process; a second writer after the first closed must not end the reader.
        for (int writer = 0; writer < 2; writer++) {
            try (FileOutputStream out = new FileOutputStream(bridge.pipe().toFile())) {
                out.write(("h:1:2 [0] NCCL INFO writer " + writer + "\nh:1:2 [0] NCCL WARN trouble " + writer + "\n")
                        .getBytes(StandardCharsets.UTF_8));
            }
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> seen.size() == 4);
        assertEquals(List.of("INFO h:1:2 [0] writer 0", "WARN h:1:2 [0] trouble 0", "INFO h:1:2 [0] writer 1",
                "WARN h:1:2 [0] trouble 1"), seen);
        assertTrue(bridge.reader().isAlive() && bridge.reader().isDaemon(), "the reader waits on, as a daemon");
    }

    @Test
    void aModeThatIsNeitherStdoutNorSlf4jIsRefusedNamingTheProperty() {
        System.setProperty(JcclSettings.NCCL_LOG.property(), "syslog");
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, NcclLogBridge::applyIfAsked);
        assertTrue(e.getMessage().contains("jccl.nccl.log") && e.getMessage().contains("syslog"), e.getMessage());
    }
}
