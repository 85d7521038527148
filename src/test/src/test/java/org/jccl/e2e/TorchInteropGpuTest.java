package org.jccl.e2e;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Jccl;
import org.jccl.core.Operation;
import org.jccl.core.ReduceOp;
import org.jccl.core.UniqueId;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A JVM service and a Python GPU worker in one NCCL communicator: jccl makes the unique id and is rank 0 on GPU 0;
 * a PyTorch process (its tensors and stream, the NCCL library torch loads, called through ctypes) reads the id from
 * a file and is rank 1 on GPU 1. Both run allReduce, broadcast, reduce, allGather, reduceScatter, allToAll and a
 * send/recv pair in the same order and check every element they receive. Needs two GPUs and python3 with torch.
 */
@Tag("gpu")
class TorchInteropGpuTest {
    private static final int N = 1024;

    @TempDir
    Path dir;

    @Test
    void aJcclRankAndATorchRankShareOneCommunicator() throws Exception {
        assumeTrue(Jccl.isAvailable(BackendKind.NCCL), "NCCL is not loadable here");
        Backend nccl = Jccl.backend(BackendKind.NCCL);
        assumeTrue(nccl.deviceCount() >= 2, "needs 2 GPUs, found " + nccl.deviceCount());
        assumeTrue(torchPresent(), "python3 with torch is not installed");
        int torchNccl = torchNcclVersion();
        assumeTrue(torchNccl == nccl.version(), "the ranks of one communicator need one NCCL version: torch's is "
                + torchNccl + ", jccl loaded " + nccl.describe());

        Path script = dir.resolve("torch_peer.py");
        try (InputStream in = TorchInteropGpuTest.class.getResourceAsStream("torch_peer.py")) {
            Files.copy(in, script);
        }
        UniqueId id = nccl.newUniqueId();
        Path idFile = Files.write(dir.resolve("nccl.id"), id.toBytes());
        Process peer = new ProcessBuilder("python3", script.toString(), idFile.toString())
                .redirectErrorStream(true).redirectOutput(dir.resolve("peer.log").toFile()).start();
        try (Communicator c = join(nccl, id, peer);
             Buffer a = nccl.allocate(0, 4L * 2 * N);
             Buffer b = nccl.allocate(0, 4L * 2 * N)) {
            float[] idx = new float[N];
            for (int i = 0; i < N; i++) idx[i] = i;

            write(a, idx);
            c.allReduce(a, b, N, DataType.FLOAT32, ReduceOp.SUM).get(60, TimeUnit.SECONDS);
            assertArrayEquals(map(idx, 2, 1000), read(b, N), "allReduce");

            write(a, map(idx, 2, 0));
            c.broadcast(a, b, N, DataType.FLOAT32, 0).get(60, TimeUnit.SECONDS);
            assertArrayEquals(map(idx, 2, 0), read(b, N), "broadcast");

            write(a, idx);
            c.reduce(a, b, N, DataType.FLOAT32, ReduceOp.SUM, 0).get(60, TimeUnit.SECONDS);
            assertArrayEquals(map(idx, 2, 1000), read(b, N), "reduce");

            c.allGather(a, b, N, DataType.FLOAT32).get(60, TimeUnit.SECONDS);
            float[] gathered = new float[2 * N];
            for (int i = 0; i < N; i++) {
                gathered[i] = i;
                gathered[N + i] = i + 1000;
            }
            assertArrayEquals(gathered, read(b, 2 * N), "allGather");

            float[] twoBlocks = new float[2 * N];
            for (int j = 0; j < 2 * N; j++) twoBlocks[j] = j;
            write(a, twoBlocks);
            c.reduceScatter(a, b, N, DataType.FLOAT32, ReduceOp.SUM).get(60, TimeUnit.SECONDS);
            float[] block0 = new float[N];
            for (int j = 0; j < N; j++) block0[j] = 2 * j + 1000;
            assertArrayEquals(block0, read(b, N), "reduceScatter");

            c.allToAll(a, b, N, DataType.FLOAT32).get(60, TimeUnit.SECONDS);
            float[] exchanged = new float[2 * N];
            for (int i = 0; i < N; i++) {
                exchanged[i] = i;
                exchanged[N + i] = i + 1000;
            }
            assertArrayEquals(exchanged, read(b, 2 * N), "allToAll");

            write(a, idx);
            c.submitGroup(List.of(Operation.send(a, N, DataType.FLOAT32, 1), Operation.recv(b, N, DataType.FLOAT32, 1)))
                    .get(60, TimeUnit.SECONDS);
            assertArrayEquals(map(idx, 1, 1000), read(b, N), "send/recv");
        } finally {
            if (!peer.waitFor(120, TimeUnit.SECONDS)) peer.destroyForcibly();
        }
        String log = Files.readString(dir.resolve("peer.log"));
        assertEquals(0, peer.exitValue(), "the torch rank failed:\n" + log);
    }

    /** Rank 0's communicator; if it cannot form, the failure carries what the torch rank printed. */
    private Communicator join(Backend nccl, UniqueId id, Process peer) throws Exception {
        try {
            return nccl.initRank(id, 2, 0, 0).get(90, TimeUnit.SECONDS);
        } catch (Exception e) {
            peer.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            throw new AssertionError("no communicator with the torch rank:\n" + Files.readString(dir.resolve("peer.log")), e);
        }
    }

    private static boolean torchPresent() {
        try {
            Process p = new ProcessBuilder("python3", "-c", "import torch, nvidia.nccl").redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            return p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (Exception e) {
            return false;
        }
    }

    /** The version of the NCCL library torch's Python package ships, as {@code ncclGetVersion} reports it; -1 if unknown. */
    private static int torchNcclVersion() {
        String script = "import ctypes, os, nvidia.nccl\n"
                + "lib = ctypes.CDLL(os.path.join(list(nvidia.nccl.__path__)[0], 'lib', 'libnccl.so.2'))\n"
                + "v = ctypes.c_int()\nlib.ncclGetVersion(ctypes.byref(v))\nprint(v.value)\n";
        try {
            Process p = new ProcessBuilder("python3", "-c", script).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).trim();
            return p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0 ? Integer.parseInt(out) : -1;
        } catch (Exception e) {
            return -1;
        }
    }

    private static float[] map(float[] x, float scale, float offset) {
        float[] out = new float[x.length];
        for (int i = 0; i < x.length; i++) out[i] = scale * x[i] + offset;
        return out;
    }

    private static void write(Buffer b, float[] values) {
        ByteBuffer bytes = ByteBuffer.allocateDirect(4 * values.length).order(ByteOrder.nativeOrder());
        bytes.asFloatBuffer().put(values);
        b.write(0, bytes);
    }

    private static float[] read(Buffer b, int n) {
        ByteBuffer bytes = ByteBuffer.allocateDirect(4 * n).order(ByteOrder.nativeOrder());
        b.read(0, bytes);
        float[] out = new float[n];
        bytes.flip();
        bytes.asFloatBuffer().get(out);
        return out;
    }

}
