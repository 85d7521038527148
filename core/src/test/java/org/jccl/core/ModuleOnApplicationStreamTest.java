package org.jccl.core;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.module.ModuleContext;
import org.jccl.core.module.Retention;
import org.jccl.core.module.StreamOperation;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@link ModuleContext#issueOn}: a module's operation on an application's stream, in that stream's order. */
class ModuleOnApplicationStreamTest {
    final Backend host = Jccl.backend(BackendKind.HOST);
    Communicator comm;
    Stream app;
    Buffer data;

    @BeforeEach
    void open() throws Exception {
        comm = host.initAll(1).get(30, TimeUnit.SECONDS).get(0);
        app = host.createStream(comm.device());
        data = host.allocate(comm.device(), 8);
    }

    @AfterEach
    void close() {
        app.close();
        data.close();
        comm.close();
    }

    @Test
    void itRunsAfterWhatTheStreamHadAndReleasesItsHoldWhenDone() throws Exception {
        try (Buffer source = host.allocate(comm.device(), 8)) {
            source.write(0, new float[] {5, 6});
            app.copy(data, source, 8);
            AtomicInteger held = new AtomicInteger();
            Retention counted = () -> {
                held.incrementAndGet();
                return held::decrementAndGet;
            };
            StreamOperation zero = ModuleOperationGroupTest.zero(comm, data);
            Work w = Modules.context(comm).issueOn(app, new StreamOperation(zero.what(), zero.uses(), zero.task(), counted));
            w.get(30, TimeUnit.SECONDS);
            assertArrayEquals(new float[] {0, 0}, data.readFloats(0, 2), "the copy before it ran first");
            await().atMost(Duration.ofSeconds(30)).until(() -> held.get() == 0);
        }
    }

    @Test
    void aClosedStreamBufferOrHeldResourceIsRefusedWithNothingEnqueued() {
        ModuleContext context = Modules.context(comm);
        StreamOperation zero = ModuleOperationGroupTest.zero(comm, data);
        Retention closed = () -> {
            throw new InvalidUsageException("the window is closed");
        };
        assertThrows(InvalidUsageException.class,
                () -> context.issueOn(app, new StreamOperation(zero.what(), zero.uses(), zero.task(), closed)));
        Buffer gone = host.allocate(comm.device(), 8);
        StreamOperation onGone = ModuleOperationGroupTest.zero(comm, gone);
        gone.close();
        assertThrows(InvalidUsageException.class, () -> context.issueOn(app, onGone));
        Stream other = host.createStream(comm.device());
        other.close();
        assertThrows(InvalidUsageException.class, () -> context.issueOn(other, zero));
        assertEquals(0, comm.pendingCount());
    }
}
