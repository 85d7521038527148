package org.jccl.device;

/** GPU-initiated networking as a communicator offers it ({@code ncclGinType_t}). */
public enum GinType {
    /** No GIN: device communicators reach peers by load/store only. */
    NONE(0),
    /** GIN through a CPU proxy thread. */
    PROXY(2),
    /** GIN by the GPU itself (GDAKI). */
    GDAKI(3),
    /** A type this jccl does not know. */
    OTHER(-1);

    private final int code;

    GinType(int code) {
        this.code = code;
    }

    /** The library's code. */
    public int code() {
        return code;
    }

    static GinType of(int code) {
        for (GinType t : values()) if (t.code == code) return t;
        return OTHER;
    }
}
