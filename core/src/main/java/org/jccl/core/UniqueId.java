package org.jccl.core;

import java.io.Serializable;
import java.util.Arrays;
import java.util.Base64;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;

/**
 * {@code ncclUniqueId}: created by one rank, given to every rank before communicator creation (by the
 * rendezvous, a file, any channel). Serializable, and printable as Base64 for transport in text.
 */
public final class UniqueId implements Serializable {
    private static final long serialVersionUID = 1L;
    /** {@code NCCL_UNIQUE_ID_BYTES}. */
    public static final int BYTES = 128;

    private final byte[] bytes;

    private UniqueId(byte[] bytes) {
        this.bytes = bytes;
    }

    /** An id from its bytes, exactly {@link #BYTES} of them. */
    public static UniqueId fromBytes(byte[] bytes) {
        Errors.requireArgument(bytes, "bytes");
        if (bytes.length != BYTES) {
            throw new InvalidArgumentException("a unique id has " + BYTES + " bytes, not " + bytes.length);
        }
        return new UniqueId(bytes.clone());
    }

    /** An id from the Base64 text {@link #toBase64()} made. */
    public static UniqueId fromBase64(String text) {
        Errors.requireArgument(text, "text");
        try {
            return fromBytes(Base64.getDecoder().decode(text.trim()));
        } catch (IllegalArgumentException e) {
            throw new InvalidArgumentException("not a Base64 unique id: " + e.getMessage());
        }
    }

    public byte[] toBytes() {
        return bytes.clone();
    }

    public String toBase64() {
        return Base64.getEncoder().encodeToString(bytes);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof UniqueId other && Arrays.equals(bytes, other.bytes);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(bytes);
    }

    /** A short fingerprint, never the whole id (it grants entry to the communicator). */
    @Override
    public String toString() {
        return "UniqueId[" + Integer.toHexString(hashCode()) + "]";
    }
}
