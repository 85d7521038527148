package org.jccl.core.nccl;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** Checks ncclConfig_t bytes against NCCL's header, written out here independently of {@link ConfigLayout}. */
final class ExpectedConfig {
    private ExpectedConfig() {
    }

    /** The header fields: size, NCCL_API_MAGIC, the version. */
    static void check(byte[] bytes, int version, int size) {
        assertEquals(size, bytes.length, "bytes logged");
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(size, b.getLong(0), "size");
        assertEquals(0xcafebeef, b.getInt(8), "magic");
        assertEquals(version, b.getInt(12), "version");
    }

    static int intAt(byte[] bytes, int offset) {
        return ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).getInt(offset);
    }

    static long longAt(byte[] bytes, int offset) {
        return ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).getLong(offset);
    }
}
