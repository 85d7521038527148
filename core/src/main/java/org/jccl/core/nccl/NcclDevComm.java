package org.jccl.core.nccl;

import java.nio.ByteBuffer;
import org.bytedeco.javacpp.BytePointer;
import org.jccl.core.spi.DevCommHandle;

/**
 * A device communicator's native memory: its requirements (NCCL may read them at a group's end) and the
 * {@code ncclDevComm} NCCL writes, which kernels receive by value. Fields are decoded on each read, since inside a
 * group NCCL writes them after {@code ncclDevCommCreate} returned.
 */
final class NcclDevComm implements DevCommHandle {
    private final BytePointer requirements;
    private final BytePointer devComm;
    private final int libraryVersion;

    NcclDevComm(byte[] requirements, int libraryVersion) {
        this.libraryVersion = libraryVersion;
        this.requirements = new BytePointer(DeviceApiLayout.REQUIREMENTS_CAPACITY);
        this.requirements.fill(0);
        this.requirements.put(requirements);
        this.devComm = new BytePointer(DeviceApiLayout.DEV_COMM_CAPACITY);
        this.devComm.fill(0);
    }

    long requirementsAddress() {
        return requirements.address();
    }

    long devCommAddress() {
        return devComm.address();
    }

    /** The device communicator's bytes, read in place (position 0, whole capacity: nothing is moved by readers). */
    private ByteBuffer devComm() {
        return devComm.asBuffer();
    }

    private DeviceApiLayout.DevCommFields fields() {
        return DeviceApiLayout.devCommFields(devComm(), libraryVersion);
    }

    @Override
    public byte[] bytes() {
        byte[] out = new byte[DeviceApiLayout.devCommBytes(libraryVersion)];
        devComm().get(out);
        return out;
    }

    @Override
    public int rank() {
        return fields().rank();
    }

    @Override
    public int size() {
        return fields().size();
    }

    @Override
    public int lsaRank() {
        return fields().lsaRank();
    }

    @Override
    public int lsaSize() {
        return fields().lsaSize();
    }

    @Override
    public int ginContextCount() {
        return fields().ginContextCount();
    }

    @Override
    public int ginSignalCount() {
        return fields().ginSignalCount();
    }

    @Override
    public int ginCounterCount() {
        return fields().ginCounterCount();
    }

    @Override
    public void free() {
        requirements.close();
        devComm.close();
    }
}
