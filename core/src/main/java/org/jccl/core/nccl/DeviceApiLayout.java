package org.jccl.core.nccl;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.jccl.core.error.UnsupportedFeatureException;
import org.jccl.core.spi.CommProperties;
import org.jccl.core.spi.DevCommRequirements;

/**
 * The device API's host structures as each NCCL version lays them out (LP64, natural alignment), from its
 * {@code nccl_device/core.h} and {@code impl/comm__types.h} and checked on the GPU machine against the real headers
 * ({@code DeviceApiLayoutGpuTest}):
 * <ul>
 *   <li>2.28: {@code ncclDevCommRequirements} is 56 bytes without a header; {@code ncclDevComm} 200 bytes,
 *       {@code ginContextCount} a byte at 136.</li>
 *   <li>2.29: both requirements and {@code ncclCommProperties} start with NCCL's versioned header
 *       ({@code size_t size; unsigned magic; unsigned version}), requirements gain {@code ginConnectionType},
 *       {@code ginExclusiveContexts}, {@code ginQueueDepth} (88 bytes); {@code ncclDevComm} is 224 bytes,
 *       {@code ginContextCount} a 32-bit count at 200.</li>
 * </ul>
 * Rank, size, LSA rank and LSA size lead {@code ncclDevComm} at 0, 4, 12 and 16 in both. Versioned structures of a
 * newer library are written in the 2.29 layout with its version, which the library reads as an older caller's; the
 * GIN counts of its device communicator are not decoded (reported as -1, unknown).
 */
final class DeviceApiLayout {
    /** Native bytes reserved for a device communicator: more than any version's {@code sizeof(ncclDevComm)}. */
    static final int DEV_COMM_CAPACITY = 4096;
    /** Native bytes reserved for requirements. */
    static final int REQUIREMENTS_CAPACITY = 256;
    static final int PROPERTIES_BYTES = 56;
    private static final int V2_29 = 22900;
    private static final int V2_29_LATEST = 22999;
    private static final int HEADER_BYTES = 16;

    private DeviceApiLayout() {
    }

    /** Whether the library has the 2.29 layouts. */
    static boolean versioned(int libraryVersion) {
        return libraryVersion >= V2_29;
    }

    /** The version a versioned structure declares: the loaded one, capped at the newest layout described here. */
    static int declaredVersion(int libraryVersion) {
        return Math.min(libraryVersion, V2_29_LATEST);
    }

    /**
     * {@code ncclDevCommRequirements} for the loaded version, no resource or team requirement lists.
     *
     * @throws UnsupportedFeatureException for a 2.29 field set on an older library
     */
    static byte[] requirements(DevCommRequirements r, int libraryVersion, String library) {
        boolean v229 = versioned(libraryVersion);
        if (!v229 && r.usesNccl229Fields()) {
            throw new UnsupportedFeatureException("ncclDevCommRequirements.ginConnectionType/ginExclusiveContexts/ginQueueDepth",
                    library, LibraryVersions.format(libraryVersion), "NCCL 2.29.2");
        }
        int base = v229 ? HEADER_BYTES : 0;
        ByteBuffer b = ByteBuffer.allocate(v229 ? 88 : 56).order(ByteOrder.nativeOrder());
        if (v229) header(b, 88, libraryVersion);
        // resourceRequirementsList and teamRequirementsList stay NULL (base + 0, base + 8)
        b.put(base + 16, (byte) (r.lsaMultimem() ? 1 : 0));
        b.putInt(base + 20, r.barrierCount());
        b.putInt(base + 24, r.lsaBarrierCount());
        b.putInt(base + 28, r.railGinBarrierCount());
        b.putInt(base + 32, r.lsaLLA2ABlockCount());
        b.putInt(base + 36, r.lsaLLA2ASlotCount());
        b.put(base + 40, (byte) (r.ginForceEnable() ? 1 : 0));
        b.putInt(base + 44, r.ginContextCount());
        b.putInt(base + 48, r.ginSignalCount());
        b.putInt(base + 52, r.ginCounterCount());
        if (v229) {
            b.putInt(base + 56, r.ginConnectionType());
            b.put(base + 60, (byte) (r.ginExclusiveContexts() ? 1 : 0));
            b.putInt(base + 64, r.ginQueueDepth());
        }
        return b.array();
    }

    /** An empty {@code ncclCommProperties} (2.29+) with its header, for the library to fill. */
    static byte[] emptyProperties(int libraryVersion) {
        ByteBuffer b = ByteBuffer.allocate(PROPERTIES_BYTES).order(ByteOrder.nativeOrder());
        header(b, PROPERTIES_BYTES, libraryVersion);
        return b.array();
    }

    static CommProperties properties(byte[] filled) {
        ByteBuffer b = ByteBuffer.wrap(filled).order(ByteOrder.nativeOrder());
        return new CommProperties(b.getInt(16), b.getInt(20), b.getInt(24), b.getInt(28), b.get(32) != 0, b.get(33) != 0,
                b.getInt(36), b.getInt(40), b.get(44) != 0, b.getInt(48));
    }

    /** {@code sizeof(ncclDevComm)}; for a library newer than 2.29, 2.29's (a kernel's parameter size says more). */
    static int devCommBytes(int libraryVersion) {
        return versioned(libraryVersion) ? 224 : 200;
    }

    /** The fields of a device communicator jccl reports, read from its bytes. */
    record DevCommFields(int rank, int size, int lsaRank, int lsaSize, int ginContextCount, int ginSignalCount,
                         int ginCounterCount) {
    }

    static DevCommFields devCommFields(ByteBuffer devComm, int libraryVersion) {
        ByteBuffer b = devComm.order(ByteOrder.nativeOrder());
        int contexts;
        int signals = b.getInt(180);
        int counters = b.getInt(188);
        if (!versioned(libraryVersion)) {
            contexts = Byte.toUnsignedInt(b.get(136));
        } else if (libraryVersion <= V2_29_LATEST) {
            contexts = b.getInt(200);
        } else {
            contexts = -1;
            signals = -1;
            counters = -1;
        }
        return new DevCommFields(b.getInt(0), b.getInt(4), b.getInt(12), b.getInt(16), contexts, signals, counters);
    }

    private static void header(ByteBuffer b, int size, int libraryVersion) {
        b.putLong(0, size);
        b.putInt(8, ConfigLayout.MAGIC);
        b.putInt(12, declaredVersion(libraryVersion));
    }
}
