package org.jccl.core.nccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Jccl;
import org.jccl.core.ReduceOp;
import org.jccl.core.UniqueId;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Two JVMs, one GPU each, joined by initRank through a unique id in a file: allReduce and send/recv. */
@Tag("gpu")
class NcclTwoProcessGpuTest {
    static final int N = 4096;

    @TempDir
    Path dir;

    @Test
    void twoProcessesAllReduceAndExchange() throws Exception {
        Backend backend = Jccl.backend(BackendKind.NCCL);
        assumeTrue(backend.deviceCount() >= 2, "needs two GPUs");
        UniqueId id = backend.newUniqueId();
        Path idFile = dir.resolve("id");
        Files.writeString(idFile, id.toBase64());
        String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
        Process peer = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"), Peer.class.getName(), idFile.toString())
                .redirectErrorStream(true).start();
        CompletableFuture<String> peerOutput = CompletableFuture.supplyAsync(() -> {
            try (InputStream in = peer.getInputStream()) {
                return new String(in.readAllBytes(), StandardCharsets.UTF_8);
            } catch (Exception e) {
                return e.toString();
            }
        });
        try {
            assertEquals(List.of(), run(backend, id, 0), "rank 0's mismatches");
            assertTrue(peer.waitFor(180, TimeUnit.SECONDS), "the peer JVM finished");
            String output = peerOutput.get(30, TimeUnit.SECONDS);
            assertEquals(0, peer.exitValue(), output);
            assertTrue(output.contains("peer OK"), output);
        } finally {
            peer.destroyForcibly();
        }
    }

    /** Runs one rank; returns the mismatches found (empty when every value is right). */
    static List<String> run(Backend backend, UniqueId id, int rank) throws Exception {
        try (Communicator comm = backend.initRank(id, 2, rank, rank).get(120, TimeUnit.SECONDS);
             Buffer send = backend.allocate(rank, 4L * N); Buffer recv = backend.allocate(rank, 4L * N)) {
            ByteBuffer data = ByteBuffer.allocateDirect(4 * N).order(ByteOrder.nativeOrder());
            for (int i = 0; i < N; i++) data.putInt(4 * i, (rank + 1) * i);
            send.write(0, data);
            comm.allReduce(send, recv, N, DataType.INT32, ReduceOp.SUM).get(60, TimeUnit.SECONDS);
            recv.read(0, data.clear());
            java.util.ArrayList<String> wrong = new java.util.ArrayList<>();
            for (int i = 0; i < N; i++) if (data.getInt(4 * i) != 3 * i) wrong.add("allReduce[" + i + "]=" + data.getInt(4 * i));
            if (rank == 0) {
                comm.send(send, N, DataType.INT32, 1).get(60, TimeUnit.SECONDS);
            } else {
                comm.recv(recv, N, DataType.INT32, 0).get(60, TimeUnit.SECONDS);
                recv.read(0, data.clear());
                for (int i = 0; i < N; i++) if (data.getInt(4 * i) != i) wrong.add("recv[" + i + "]=" + data.getInt(4 * i));
            }
            return wrong.subList(0, Math.min(10, wrong.size()));
        }
    }

    /** The second process: rank 1 on device 1. */
    public static final class Peer {
        private Peer() {
        }

        /** Joins with the id in the file named by {@code args[0]}; exits 0 and prints "peer OK" when all values match. */
        public static void main(String[] args) throws Exception {
            UniqueId id = UniqueId.fromBase64(Files.readString(Paths.get(args[0])).trim());
            List<String> wrong = run(Jccl.backend(BackendKind.NCCL), id, 1);
            System.out.println(wrong.isEmpty() ? "peer OK" : "peer mismatches: " + wrong);
            System.exit(wrong.isEmpty() ? 0 : 1);
        }
    }
}
