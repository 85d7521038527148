package org.jccl.core.rendezvous;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jccl.core.UniqueId;
import org.jccl.core.error.InvalidArgumentException;

/** How unique ids are stored as one value: their bytes back to back ({@link UniqueId#BYTES} each), in order. */
final class UniqueIds {
    private UniqueIds() {
    }

    static byte[] encode(List<UniqueId> ids) {
        Objects.requireNonNull(ids, "ids");
        if (ids.isEmpty()) throw new InvalidArgumentException("no unique ids to store");
        byte[] out = new byte[ids.size() * UniqueId.BYTES];
        for (int i = 0; i < ids.size(); i++) {
            System.arraycopy(Objects.requireNonNull(ids.get(i), "ids[" + i + "]").toBytes(), 0, out, i * UniqueId.BYTES,
                    UniqueId.BYTES);
        }
        return out;
    }

    static List<UniqueId> decode(byte[] value) {
        if (value.length == 0 || value.length % UniqueId.BYTES != 0) {
            throw new InvalidArgumentException("a stored value of " + value.length + " bytes is not a list of "
                    + UniqueId.BYTES + "-byte unique ids");
        }
        List<UniqueId> ids = new ArrayList<>(value.length / UniqueId.BYTES);
        for (int off = 0; off < value.length; off += UniqueId.BYTES) {
            byte[] one = new byte[UniqueId.BYTES];
            System.arraycopy(value, off, one, 0, UniqueId.BYTES);
            ids.add(UniqueId.fromBytes(one));
        }
        return List.copyOf(ids);
    }
}
