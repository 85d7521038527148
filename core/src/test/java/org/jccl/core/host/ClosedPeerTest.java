package org.jccl.core.host;

import static org.jccl.core.host.HostTesting.await;
import static org.jccl.core.host.HostTesting.failure;
import static org.jccl.core.host.HostTesting.host;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.ReduceOp;
import org.jccl.core.UniqueId;
import org.jccl.core.error.RemoteErrorException;
import org.jccl.core.launch.Launcher;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A peer that closed its communicator is a remote failure, told at once, as an aborted peer is — not a hang that
 * ends after the work timeout (10 minutes here) blaming the operation order. In one JVM, over TCP between threads,
 * and across processes.
 */
class ClosedPeerTest {
    private final List<AutoCloseable> opened = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = opened.size() - 1; i >= 0; i--) opened.get(i).close();
    }

    private List<Communicator> keep(List<Communicator> comms) {
        opened.addAll(comms);
        return comms;
    }

    private Buffer buffer() {
        Buffer b = host().allocate(0, 64);
        opened.add(b);
        return b;
    }

    @Test
    void aCollectiveAfterAPeerClosedFailsAtOnceInOneJvm() throws Exception {
        collectiveAfterRankZeroClosed(keep(await(host().initAll(2))));
    }

    @Test
    void aCollectiveAfterAPeerClosedFailsAtOnceOverTcp() throws Exception {
        collectiveAfterRankZeroClosed(keep(HostTesting.join(UniqueId.fromBytes(new HostDriver().newNetworkUniqueId()), 2)));
    }

    private void collectiveAfterRankZeroClosed(List<Communicator> comms) {
        comms.get(0).close();
        Throwable e = failure(comms.get(1).allReduce(buffer(), buffer(), 4, DataType.FLOAT32, ReduceOp.SUM));
        assertInstanceOf(RemoteErrorException.class, e);
        assertTrue(e.getMessage().contains("rank 0 closed the communicator"), e.getMessage());
    }

    /** The closed rank takes part in nothing more; ranks that do not need it go on until one does. */
    @Test
    void pointToPointBetweenTheOthersWorksAndARecvFromTheClosedRankFails() throws Exception {
        List<Communicator> comms = keep(await(host().initAll(3)));
        comms.get(0).close();
        Buffer b1 = buffer();
        Buffer b2 = buffer();
        await(java.util.concurrent.CompletableFuture.allOf(comms.get(1).send(b1, 4, DataType.FLOAT32, 2),
                comms.get(2).recv(b2, 4, DataType.FLOAT32, 1)));
        Throwable e = failure(comms.get(1).recv(b1, 4, DataType.FLOAT32, 0));
        assertInstanceOf(RemoteErrorException.class, e);
        assertTrue(e.getMessage().contains("rank 0 closed the communicator"), e.getMessage());
    }

    @Test
    void aCollectiveAfterAPeerClosedFailsAtOnceAcrossProcesses() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        int code = Launcher.run(List.of("--nproc", "2", "--", CrossProcessRankMain.class.getName(), "closedPeer"), out, out);
        String o = bytes.toString(StandardCharsets.UTF_8);
        assertEquals(0, code, o);
        assertTrue(o.contains("[rank 1] allReduce after rank 0 closed: RemoteErrorException"), o);
        assertTrue(o.contains("rank 0 closed the communicator"), o);
    }
}
