package org.jccl.core.nccl;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Dlpack;
import org.jccl.core.DlpackTensor;
import org.jccl.core.Jccl;
import org.jccl.core.ReduceOp;
import org.jccl.core.Work;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.spi.MemoryKind;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Memory jccl did not allocate, on the GPUs: device memory from {@code cudaMalloc} (called through jccl's native layer
 * directly, as another library would) written by {@code cudaMemset}, all-reduced in place and freed by its release
 * callback after the last use; and a DLPack round trip of device memory. Uses every GPU present (one or more).
 */
@Tag("gpu")
class ForeignMemoryGpuTest {
    private static final int BYTES = 1 << 20;
    private static Backend backend;
    /** A second handle on the same libraries, standing for "another library" that allocates on its own. */
    private static NativeLibrary other;

    @BeforeAll
    static void open() {
        backend = Jccl.backend(BackendKind.NCCL);
        assumeTrue(backend.deviceCount() >= 1, "needs a GPU");
        other = NcclDriver.open(BackendKind.NCCL).library();
    }

    @Test
    void cudaMallocedMemoryWrittenByCudaMemsetIsAllReducedInPlaceAndReleasedAfterItsLastUse() throws Exception {
        int n = backend.deviceCount();
        List<Communicator> comms = backend.initAll(n).get(120, TimeUnit.SECONDS);
        AtomicInteger freed = new AtomicInteger();
        List<Buffer> wrapped = new ArrayList<>();
        try {
            List<Work> works = new ArrayList<>();
            for (Communicator c : comms) {
                long address = mallocAndSet(c.device(), c.rank() + 1);
                Buffer b = backend.wrapWithRelease(c.device(), address, BYTES, () -> {
                    other.checkRuntime(NativeApi.jn_rt_free(other.ctx, address), "cudaFree");
                    freed.incrementAndGet();
                });
                assertEquals(MemoryKind.FOREIGN, b.kind());
                wrapped.add(b);
                works.add(c.allReduce(b, b, BYTES, DataType.UINT8, ReduceOp.SUM));
            }
            for (Work w : works) w.get(60, TimeUnit.SECONDS);
            byte expected = (byte) (n * (n + 1) / 2);
            for (Buffer b : wrapped) {
                ByteBuffer got = ByteBuffer.allocateDirect(BYTES);
                b.read(0, got);
                for (int i = 0; i < BYTES; i += 4099) assertEquals(expected, got.get(i), "byte " + i);
            }
            for (Buffer b : wrapped) b.close();
            await().atMost(Duration.ofSeconds(30)).until(() -> freed.get() == n);
        } finally {
            for (Buffer b : wrapped) b.close();
            for (Communicator c : comms) c.close();
        }
    }

    @Test
    void aDeviceBufferExportedAsDlpackAndImportedAgainIsAllReducedInPlace() throws Exception {
        int n = backend.deviceCount();
        List<Communicator> comms = backend.initAll(n).get(120, TimeUnit.SECONDS);
        List<Buffer> mine = new ArrayList<>();
        int exportsBefore = DlpackNative.liveExports();
        try {
            List<DlpackTensor> tensors = new ArrayList<>();
            List<Work> works = new ArrayList<>();
            for (Communicator c : comms) {
                Buffer b = backend.allocate(c.device(), 4 * 256);
                float[] values = new float[256];
                java.util.Arrays.fill(values, c.rank() + 1);
                b.write(0, values);
                mine.add(b);
                long tensor = Dlpack.exportTensor(b, DataType.FLOAT32, new long[] {16, 16});
                DlpackTensor t = Dlpack.importTensor(c, tensor);
                tensors.add(t);
                works.add(c.allReduce(t.buffer(), t.buffer(), t.count(), t.type(), ReduceOp.SUM));
            }
            for (Work w : works) w.get(60, TimeUnit.SECONDS);
            float[] expected = new float[256];
            java.util.Arrays.fill(expected, n * (n + 1) / 2f);
            for (Buffer b : mine) assertArrayEquals(expected, b.readFloats(0, 256));
            for (DlpackTensor t : tensors) t.close();
            await().atMost(Duration.ofSeconds(30)).until(() -> DlpackNative.liveExports() == exportsBefore);
        } finally {
            for (Buffer b : mine) b.close();
            for (Communicator c : comms) c.close();
        }
    }

    @Test
    void aDeviceThatDoesNotExistIsRefused() {
        assertThrows(InvalidArgumentException.class, () -> backend.wrap(backend.deviceCount(), 1L << 20, 64, new Object()));
        assertThrows(InvalidArgumentException.class, () -> backend.wrap(-1, 1L << 20, 64, new Object()));
    }

    /** {@code cudaMalloc} on {@code device}, every byte set to {@code value} by {@code cudaMemset}, finished. */
    private static long mallocAndSet(int device, int value) {
        long[] address = new long[1];
        other.checkRuntime(NativeApi.jn_rt_set_device(other.ctx, device), "cudaSetDevice");
        other.checkRuntime(NativeApi.jn_rt_malloc(other.ctx, address, BYTES), "cudaMalloc");
        other.checkRuntime(NativeApi.jn_rt_memset_async(other.ctx, address[0], value, BYTES, 0), "cudaMemsetAsync");
        other.checkRuntime(NativeApi.jn_rt_stream_synchronize(other.ctx, 0), "cudaStreamSynchronize");
        return address[0];
    }
}
