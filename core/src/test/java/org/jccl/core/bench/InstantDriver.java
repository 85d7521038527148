package org.jccl.core.bench;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.jccl.core.BackendKind;
import org.jccl.core.CommConfig;
import org.jccl.core.DataType;
import org.jccl.core.DeviceInfo;
import org.jccl.core.UniqueId;
import org.jccl.core.error.Errors;
import org.jccl.core.spi.Driver;
import org.jccl.core.spi.DriverComm;
import org.jccl.core.spi.DriverConstants;
import org.jccl.core.spi.DriverEvent;
import org.jccl.core.spi.DriverStream;
import org.jccl.core.spi.Features;
import org.jccl.core.spi.LaunchOp;
import org.jccl.core.spi.MemoryBlock;
import org.jccl.core.spi.MemoryKind;

/**
 * A driver that does nothing and whose events are complete as soon as they are recorded: what remains of an
 * operation is jccl's own CPU path (validation, admission, the launch-queue hand-off, the event thread's completion),
 * which {@link IssuePathBenchmark} measures. It keeps no history, so it costs the same at the millionth operation.
 */
final class InstantDriver implements Driver {
    private final AtomicLong addresses = new AtomicLong(1L << 30);

    @Override
    public BackendKind kind() {
        return BackendKind.HOST;
    }

    @Override
    public boolean hasDevices() {
        return false;
    }

    @Override
    public String describe() {
        return "instant driver (benchmark: no library, events complete when recorded)";
    }

    @Override
    public int version() {
        return 0;
    }

    @Override
    public Features features() {
        return new Features("instant", "0", Set.of());
    }

    @Override
    public int deviceCount() {
        return 0;
    }

    @Override
    public DeviceInfo deviceInfo(int device) {
        return new DeviceInfo(device, "instant", 0, 0, 0, 0, "");
    }

    @Override
    public void setDevice(int device) {
    }

    @Override
    public MemoryBlock allocate(int device, long bytes, MemoryKind kind) {
        long address = addresses.getAndAdd((bytes + 4095) / 4096 * 4096 + 4096);
        return new MemoryBlock(address, bytes, DriverConstants.HOST_DEVICE, kind) {
            @Override
            public ByteBuffer hostView() {
                return null;
            }

            @Override
            protected void free() {
            }
        };
    }

    @Override
    public void write(MemoryBlock dst, long offset, ByteBuffer src) {
    }

    @Override
    public void read(MemoryBlock src, long offset, ByteBuffer dst) {
    }

    @Override
    public void copyAsync(MemoryBlock dst, long dstOffset, MemoryBlock src, long srcOffset, long bytes, DriverStream stream) {
    }

    @Override
    public void memsetAsync(MemoryBlock dst, long offset, int value, long bytes, DriverStream stream) {
    }

    @Override
    public DriverStream createStream(int device) {
        return new DriverStream() {
            @Override
            public int device() {
                return DriverConstants.HOST_DEVICE;
            }

            @Override
            public long handle() {
                return 1;
            }

            @Override
            public void waitEvent(DriverEvent event) {
            }

            @Override
            public void synchronize() {
            }

            @Override
            public void destroy() {
            }
        };
    }

    @Override
    public DriverStream wrapStream(int device, long handle) {
        return createStream(device);
    }

    @Override
    public DriverEvent createEvent(int device, boolean timing) {
        return new DriverEvent() {
            @Override
            public int device() {
                return DriverConstants.HOST_DEVICE;
            }

            @Override
            public long handle() {
                return 1;
            }

            @Override
            public void record(DriverStream stream) {
            }

            @Override
            public int query() {
                return DriverConstants.EVENT_DONE;
            }

            @Override
            public void synchronize() {
            }

            @Override
            public float elapsedMillisSince(DriverEvent start) {
                return 0;
            }

            @Override
            public void destroy() {
            }
        };
    }

    @Override
    public void pollEvents(DriverEvent[] events, int n, int[] status) {
        for (int i = 0; i < n; i++) status[i] = DriverConstants.EVENT_DONE;
    }

    @Override
    public String runtimeErrorString(int code) {
        return "instant driver error " + code;
    }

    @Override
    public String resultString(int code) {
        return Errors.resultName(code);
    }

    @Override
    public byte[] newUniqueId() {
        return new byte[UniqueId.BYTES];
    }

    @Override
    public DriverComm initRank(int nranks, byte[] uniqueId, int rank, int device, CommConfig config) {
        return new Comm(rank, nranks);
    }

    @Override
    public DriverComm initRankScalable(int nranks, int rank, List<byte[]> uniqueIds, int device, CommConfig config) {
        return new Comm(rank, nranks);
    }

    @Override
    public List<DriverComm> initAll(int[] devices) {
        List<DriverComm> comms = new ArrayList<>();
        for (int i = 0; i < devices.length; i++) comms.add(new Comm(i, devices.length));
        return comms;
    }

    @Override
    public void groupStart() {
    }

    @Override
    public void groupEnd() {
    }

    @Override
    public float groupSimulateEnd() {
        return 0;
    }

    @Override
    public void launch(DriverComm comm, LaunchOp operation, DriverStream stream) {
    }

    private record Comm(int rank, int size) implements DriverComm {
        @Override
        public int device() {
            return DriverConstants.HOST_DEVICE;
        }

        @Override
        public int asyncError() {
            return Errors.SUCCESS;
        }

        @Override
        public String lastError() {
            return "";
        }

        @Override
        public void finalizeComm() {
        }

        @Override
        public void destroy() {
        }

        @Override
        public void abort() {
        }

        @Override
        public DriverComm split(int color, int key, CommConfig config) {
            return new Comm(0, 1);
        }

        @Override
        public DriverComm shrink(int[] excludedRanks, CommConfig config) {
            return new Comm(0, size - excludedRanks.length);
        }

        @Override
        public long register(MemoryBlock block, long offset, long bytes) {
            return 1;
        }

        @Override
        public void deregister(long handle) {
        }

        @Override
        public int createPreMulSum(double hostScalar, MemoryBlock deviceScalar, long deviceScalarOffset, DataType type) {
            return 5;
        }

        @Override
        public void destroyReduceOp(int code) {
        }
    }
}
