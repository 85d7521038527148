package org.jccl.core.nccl;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.bytedeco.javacpp.BytePointer;
import org.jccl.core.CommConfig;
import org.jccl.core.ConfigField;
import org.jccl.core.error.UnsupportedFeatureException;
import org.jspecify.annotations.Nullable;

/**
 * Lays out {@code ncclConfig_t} for the loaded library version. The structure is append-only: a header
 * ({@code size_t size; unsigned magic; unsigned version;}) then the members in {@link ConfigField} order, each at its
 * natural alignment ({@code int} 4, {@code const char*} 8 on LP64). The library reads only the members its
 * {@code version} field says exist and resets the others to defaults, so the version written is the loaded
 * library's, capped at the newest layout jccl describes; members it does not know stay out of the structure.
 * Unset members are {@code NCCL_CONFIG_UNDEF_INT} ({@code INT_MIN}) or {@code NULL}.
 */
final class ConfigLayout {
    /** {@code NCCL_API_MAGIC}. */
    static final int MAGIC = 0xcafebeef;
    /** {@code NCCL_CONFIG_UNDEF_INT}. */
    static final int UNDEF_INT = Integer.MIN_VALUE;
    /**
     * The newest library version whose members {@link ConfigField} lists completely: the whole 2.29 series (NCCL
     * gates members on minor versions, so a library of 2.30 or newer resets its newer members to their defaults).
     */
    static final int NEWEST_DESCRIBED = 22999;
    private static final int HEADER_BYTES = 16;

    private ConfigLayout() {
    }

    /** The {@code version} field written for a library of {@code loadedVersion}. */
    static int declaredVersion(int loadedVersion) {
        return Math.min(loadedVersion, NEWEST_DESCRIBED);
    }

    /** The byte offset of {@code field} in {@code ncclConfig_t} (the same in every version that has it). */
    static int offsetOf(ConfigField field) {
        int offset = HEADER_BYTES;
        for (ConfigField f : ConfigField.values()) {
            int size = f.isString() ? 8 : 4;
            offset = align(offset, size);
            if (f == field) return offset;
            offset += size;
        }
        throw new IllegalArgumentException(field.toString());
    }

    /** {@code sizeof(ncclConfig_t)} as a library of {@code declaredVersion} defines it. */
    static int sizeFor(int declaredVersion) {
        int end = HEADER_BYTES;
        for (ConfigField f : ConfigField.values()) {
            if (f.sinceVersion() > declaredVersion) continue;
            end = offsetOf(f) + (f.isString() ? 8 : 4);
        }
        return align(end, 8);
    }

    /**
     * The structure's bytes for {@code config}.
     *
     * @param strings receives the native copies of string members; the caller keeps them alive while the library
     *                may read them
     * @throws UnsupportedFeatureException if a set member is newer than the loaded library
     */
    static byte[] encode(CommConfig config, int loadedVersion, String library, List<BytePointer> strings) {
        for (Map.Entry<ConfigField, Object> e : config.values().entrySet()) {
            if (e.getKey().sinceVersion() > loadedVersion) {
                throw new UnsupportedFeatureException("ncclConfig_t." + e.getKey().cName(), library,
                        LibraryVersions.format(loadedVersion), "NCCL " + LibraryVersions.format(e.getKey().sinceVersion()));
            }
        }
        int declared = declaredVersion(loadedVersion);
        int size = sizeFor(declared);
        ByteBuffer b = ByteBuffer.allocate(size).order(ByteOrder.nativeOrder());
        b.putLong(0, size);
        b.putInt(8, MAGIC);
        b.putInt(12, declared);
        for (ConfigField f : ConfigField.values()) {
            int at = offsetOf(f);
            if (at >= size) continue;
            // Every slot inside the structure is written, also one the library gates on a later version.
            Object value = config.values().get(f);
            if (f.isString()) {
                b.putLong(at, value == null ? 0L : nativeString((String) value, strings));
            } else {
                b.putInt(at, value == null ? UNDEF_INT : (Integer) value);
            }
        }
        return b.array();
    }

    /** Null (the library's defaults, or the parent's configuration for split/shrink) when nothing is set. */
    static byte @Nullable [] encodeOrNull(CommConfig config, int loadedVersion, String library, List<BytePointer> strings) {
        return config.values().isEmpty() ? null : encode(config, loadedVersion, library, strings);
    }

    private static long nativeString(String s, List<BytePointer> strings) {
        byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
        BytePointer p = new BytePointer(utf8.length + 1L);
        p.put(utf8).put(utf8.length, (byte) 0);
        strings.add(p);
        return p.address();
    }

    /** A fresh list for {@link #encode}'s string copies. */
    static List<BytePointer> newStringList() {
        return new ArrayList<>(2);
    }

    private static int align(int offset, int alignment) {
        return (offset + alignment - 1) / alignment * alignment;
    }
}
