package org.jccl.core.host;

import static org.jccl.core.host.HostTesting.host;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Operation;
import org.jccl.core.ReduceOp;
import org.jccl.core.error.InvalidArgumentException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** A null argument is a bad argument like any other: an InvalidArgumentException naming it, and nothing issued. */
class NullArgumentsTest {

    @Test
    void nullArgumentsAreInvalidArgumentsNamingTheParameter() throws Exception {
        Communicator c = host().initAll(1).get(30, TimeUnit.SECONDS).get(0);
        try (Buffer b = host().allocate(0, 64)) {
            expect("type", () -> c.allReduce(b, b, 4, null, ReduceOp.SUM));
            expect("type", () -> Operation.send(b, 4, null, 0));
            expect("operation", () -> c.submit(null));
            expect("src", () -> b.write(0, (java.nio.ByteBuffer) null));
            expect("dst", () -> c.stream().copy(null, b, 4));
            InvalidArgumentException noBuffer = assertThrows(InvalidArgumentException.class,
                    () -> c.allReduce(null, b, 4, DataType.FLOAT32, ReduceOp.SUM));
            assertTrue(noBuffer.getMessage().contains("send buffer is required"), noBuffer.getMessage());
            assertEquals(0, c.pendingCount());
            c.allReduce(b, b, 4, DataType.FLOAT32, ReduceOp.SUM).get(30, TimeUnit.SECONDS);
        } finally {
            c.close();
        }
    }

    private static void expect(String name, Executable call) {
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, call);
        assertEquals(name + " must not be null", e.getMessage());
    }
}
