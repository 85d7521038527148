package org.jccl.rma;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Communicator;
import org.jccl.core.Jccl;
import org.jccl.core.jfr.JfrSettings;
import org.jccl.core.jfr.LifecycleEvent;
import org.jccl.core.jfr.OperationEvent;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A module's set-up calls and operations pass through core's, so JFR records them as it records core's: window
 * registrations as lifecycle calls, signals as operations (host backend, two ranks in this JVM).
 */
class WindowEventsHostTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path dumps;
    private int dumpCount;
    private final Backend backend = Jccl.backend(BackendKind.HOST);
    private List<Communicator> comms;
    private Recording recording;

    @BeforeEach
    void open() throws Exception {
        recording = new Recording(JfrSettings.configuration());
        recording.start();
        comms = backend.initAll(2).get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }

    @AfterEach
    void close() {
        comms.forEach(Communicator::close);
        recording.close();
    }

    /** The values of {@code field} of the events named {@code name} of this test's communicator recorded so far. */
    private List<String> recorded(String name, String field) {
        Path file = dumps.resolve("dump-" + ++dumpCount + ".jfr");
        try {
            recording.dump(file);
            List<String> out = new ArrayList<>();
            for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
                if (e.getEventType().getName().equals(name) && comms.get(0).id().equals(e.getString("communicator"))) {
                    out.add(e.getString(field));
                }
            }
            out.sort(null);
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void windowRegistrationsAreLifecycleCallsAndSignalsAreOperations() throws Exception {
        List<Window> windows = OneSided.registerAll(comms, 4096, WindowFlag.COLL_SYMMETRIC).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        OneSided.of(comms.get(1)).signal(0).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        OneSided.of(comms.get(0)).waitSignal(SignalWait.of(1, 1)).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        OneSided.closeAll(windows).get(WAIT.toSeconds(), TimeUnit.SECONDS);

        List<String> expectedCalls = List.of("initAll", "ncclCommWindowDeregister", "ncclCommWindowDeregister",
                "ncclCommWindowRegister", "ncclCommWindowRegister");
        await().atMost(WAIT).untilAsserted(() -> assertEquals(expectedCalls, recorded(LifecycleEvent.NAME, "call")));
        // A communicator's first window takes the one-sided set-up on every rank, and closing a window first drains
        // what was issued on it: module operations of their own.
        List<String> expectedOperations = List.of("oneSidedSetUp", "oneSidedSetUp", "signal", "waitSignal", "windowDrain", "windowDrain");
        await().atMost(WAIT).untilAsserted(() -> assertEquals(expectedOperations, recorded(OperationEvent.NAME, "operation")));
    }
}
