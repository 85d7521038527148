package org.jccl.core;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.jccl.core.error.Errors;
import org.jccl.core.spi.Driver;
import org.jccl.core.spi.DriverComm;
import org.jccl.core.spi.DriverConstants;
import org.jccl.core.spi.DriverEvent;
import org.jccl.core.spi.DriverStream;
import org.jccl.core.spi.MemoryBlock;
import org.jccl.core.spi.MemoryKind;
import org.jspecify.annotations.Nullable;

/**
 * A driver with no library behind it, for tests and benchmarks of the engine: like the host backend its ranks are
 * on device -1, its memory is address ranges that nothing reads or writes, its streams, copies and groups do nothing,
 * and its unique ids are zeros. Subclasses decide what matters to them: events, launches, and what communicators
 * ({@link Comm}) answer.
 */
public abstract class NoLibraryDriver implements Driver {
    private final String name;
    private final AtomicLong addresses;

    /**
     * @param name         what {@link #deviceInfo} and {@link #runtimeErrorString} call it
     * @param firstAddress where the first block starts (blocks are a page apart, so no two overlap)
     */
    protected NoLibraryDriver(String name, long firstAddress) {
        this.name = name;
        this.addresses = new AtomicLong(firstAddress);
    }

    /** A communicator of this driver with {@code rank} of {@code size}: made by every init, split, shrink and grow. */
    protected abstract DriverComm comm(int rank, int size);

    /** The device a block allocated for {@code device} says it is on. */
    protected int blockDevice(int device) {
        return DriverConstants.HOST_DEVICE;
    }

    /** Called when a block is freed. */
    protected void freed(MemoryBlock block) {
    }

    /** The handle of a new stream. */
    protected long newStreamHandle() {
        return 1;
    }

    /** Called when the stream with {@code streamHandle} is made to wait for {@code event}. */
    protected void waited(long streamHandle, DriverEvent event) {
    }

    @Override
    public BackendKind kind() {
        return BackendKind.HOST;
    }

    @Override
    public boolean hasDevices() {
        return false;
    }

    @Override
    public DeviceInfo deviceInfo(int device) {
        return new DeviceInfo(device, name, 0, 0, 0, 0, "");
    }

    @Override
    public void setDevice(int device) {
    }

    @Override
    public MemoryBlock allocate(int device, long bytes, MemoryKind kind) {
        long address = addresses.getAndAdd((bytes + 4095) / 4096 * 4096 + 4096);
        return new MemoryBlock(address, bytes, blockDevice(device), kind) {
            @Override
            public @Nullable ByteBuffer hostView() {
                return null;
            }

            @Override
            protected void free() {
                freed(this);
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
        long handle = newStreamHandle();
        return new DriverStream() {
            @Override
            public int device() {
                return DriverConstants.HOST_DEVICE;
            }

            @Override
            public long handle() {
                return handle;
            }

            @Override
            public void waitEvent(DriverEvent event) {
                waited(handle, event);
            }

            @Override
            public void synchronize() {
            }

            @Override
            public void destroy() {
                streamDestroyed(handle);
            }
        };
    }

    /** Called when a stream of this driver is destroyed. */
    protected void streamDestroyed(long handle) {
    }

    @Override
    public DriverStream wrapStream(int device, long handle) {
        return createStream(device);
    }

    @Override
    public String runtimeErrorString(int code) {
        return name + " error " + code;
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
        return comm(rank, nranks);
    }

    @Override
    public DriverComm initRankScalable(int nranks, int rank, List<byte[]> uniqueIds, int device, CommConfig config) {
        return comm(rank, nranks);
    }

    @Override
    public List<DriverComm> initAll(int[] devices) {
        List<DriverComm> comms = new ArrayList<>();
        for (int i = 0; i < devices.length; i++) comms.add(comm(i, devices.length));
        return comms;
    }

    @Override
    public void groupStart() {
    }

    @Override
    public void groupEnd() {
    }

    /**
     * A communicator that reports no error and does nothing: splits, shrinks and grows make another of the driver's
     * ({@link #comm}); a split with {@link DriverConstants#SPLIT_NO_COLOR} makes none, as NCCL's.
     */
    protected class Comm implements DriverComm {
        private final int rank;
        private final int size;

        public Comm(int rank, int size) {
            this.rank = rank;
            this.size = size;
        }

        @Override
        public int rank() {
            return rank;
        }

        @Override
        public int size() {
            return size;
        }

        @Override
        public int device() {
            return DriverConstants.HOST_DEVICE;
        }

        @Override
        public int asyncError() {
            return Errors.SUCCESS;
        }

        @Override
        public @Nullable String lastError() {
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
        public @Nullable DriverComm split(int color, int key, CommConfig config) {
            return color == DriverConstants.SPLIT_NO_COLOR ? null : comm(0, 1);
        }

        @Override
        public DriverComm shrink(int[] excludedRanks, CommConfig config) {
            return comm(0, size - excludedRanks.length);
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
