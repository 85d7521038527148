package org.jccl.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.module.ModuleContext;
import org.jccl.core.module.StreamOperation;
import org.jccl.core.spi.MemoryRef;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A module's operations in a core group: placed in the order added, described, their buffers checked and held. */
class ModuleOperationGroupTest {
    final Backend host = Jccl.backend(BackendKind.HOST);
    List<Communicator> comms;
    List<Buffer> buffers = new ArrayList<>();

    @BeforeEach
    void open() throws Exception {
        comms = host.initAll(2).get(30, TimeUnit.SECONDS);
        for (Communicator c : comms) {
            Buffer b = host.allocate(-1, 8);
            b.write(0, new float[] {1 + c.rank(), 10});
            buffers.add(b);
        }
    }

    @AfterEach
    void close() {
        comms.forEach(Communicator::close);
        buffers.forEach(Buffer::close);
    }

    /** A module's operation that zeroes {@code b} on the communicator's stream. */
    static StreamOperation zero(Communicator c, Buffer b) {
        ModuleContext context = Modules.context(c);
        MemoryRef ref = context.memory(b);
        return new StreamOperation("zero(bytes=8)", List.of(b),
                stream -> context.driver().memsetAsync(ref.block(), ref.offset(), 0, 8, stream));
    }

    @Test
    void aModulesOperationJoinsTheGroupAndItsWork() throws Exception {
        // Stream work a module enqueues itself runs when enqueued, before the group's collectives (as CUDA work does
        // inside ncclGroupStart/End): rank 0's zero precedes the all-reduce either way.
        Buffer scratch = host.allocate(-1, 8);
        buffers.add(scratch);
        Work w = Group.create()
                .add(comms.get(0), zero(comms.get(0), buffers.get(0)))
                .add(comms.get(0), Operation.allReduce(buffers.get(0), buffers.get(0), 2, DataType.FLOAT32, ReduceOp.SUM))
                .add(comms.get(1), Operation.allReduce(buffers.get(1), buffers.get(1), 2, DataType.FLOAT32, ReduceOp.SUM))
                .add(comms.get(1), zero(comms.get(1), scratch))
                .submit();
        w.get(30, TimeUnit.SECONDS);
        assertArrayEquals(new float[] {2, 10}, buffers.get(0).readFloats(0, 2)); // 0 + 2, 0 + 10
        assertArrayEquals(new float[] {2, 10}, buffers.get(1).readFloats(0, 2));
        String d = w.describe();
        assertTrue(d.matches(".*group\\(zero\\(seq=\\d+, bytes=8\\), allReduce\\(seq=.*\\), " + java.util.regex.Pattern.quote(comms.get(1).describe())
                + " allReduce\\(seq=.*\\), " + java.util.regex.Pattern.quote(comms.get(1).describe()) + " zero\\(seq=\\d+, bytes=8\\)\\)"), d);
    }

    @Test
    void aClosedBufferIsRefusedAndSimulationDoesNotCoverModules() {
        Buffer gone = host.allocate(-1, 8);
        StreamOperation op = zero(comms.get(0), gone);
        gone.close();
        assertThrows(InvalidUsageException.class, () -> Group.create().add(comms.get(0), op));
        assertThrows(InvalidArgumentException.class, () -> Group.create().add(comms.get(0), (StreamOperation) null));
        Group g = Group.create().add(comms.get(0), zero(comms.get(0), buffers.get(0)));
        assertThrows(InvalidUsageException.class, g::simulate);
    }
}
