package org.jccl.rma;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Jccl;
import org.jccl.core.Work;
import org.jccl.core.nccl.NativeMemory;
import org.junit.jupiter.api.Test;

/** A window over memory jccl did not allocate (a direct ByteBuffer's), on host ranks: a put lands in it in place. */
class ForeignWindowHostTest {
    private static final int BYTES = 4096;

    @Test
    void aPutLandsInAWindowOverAnotherLibrarysMemory() throws Exception {
        Backend host = Jccl.backend(BackendKind.HOST);
        List<Communicator> comms = host.initAll(2).get(30, TimeUnit.SECONDS);
        ByteBuffer[] memory = new ByteBuffer[2];
        List<Buffer> buffers = new ArrayList<>();
        List<Window> windows = new ArrayList<>();
        try {
            List<CompletableFuture<Window>> registering = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                memory[r] = ByteBuffer.allocateDirect(BYTES).order(ByteOrder.nativeOrder());
                Buffer b = host.wrap(-1, NativeMemory.addressOf(memory[r]), BYTES, memory[r]);
                buffers.add(b);
                registering.add(OneSided.of(comms.get(r)).register(b, WindowFlag.COLL_SYMMETRIC));
            }
            for (CompletableFuture<Window> f : registering) windows.add(f.get(30, TimeUnit.SECONDS));
            for (int i = 0; i < 16; i++) memory[0].putInt(BYTES / 2 + 4 * i, 100 + i); // rank 0's source, in its window
            Buffer source = buffers.get(0).slice(BYTES / 2, 64);
            Work put = OneSided.of(comms.get(0)).putSignal(windows.get(0), source, 16, DataType.INT32, 1, 128);
            OneSided.of(comms.get(1)).waitSignal(SignalWait.of(0, 1)).get(30, TimeUnit.SECONDS);
            put.get(30, TimeUnit.SECONDS);
            for (int i = 0; i < 16; i++) {
                assertEquals(100 + i, memory[1].getInt(128 + 4 * i), "int " + i + ", read from rank 1's own ByteBuffer");
            }
        } finally {
            OneSided.closeAll(windows).get(30, TimeUnit.SECONDS);
            for (Buffer b : buffers) b.close();
            for (Communicator c : comms) c.close();
        }
    }
}
