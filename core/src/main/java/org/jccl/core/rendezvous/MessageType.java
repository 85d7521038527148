package org.jccl.core.rendezvous;

import org.jspecify.annotations.Nullable;

/** The type byte of a frame. Codes are part of the wire protocol (docs/design.md): never renumber. */
enum MessageType {
    // server -> client
    CHALLENGE(0x01),
    JOINED(0x02),
    RESULT(0x03),
    ERROR(0x04),
    RANK_DEAD(0x05),
    HEARTBEAT_ACK(0x06),
    // client -> server
    JOIN(0x10),
    SET(0x11),
    GET(0x12),
    WAIT(0x13),
    ADD(0x14),
    COMPARE_AND_SET(0x15),
    DELETE(0x16),
    BARRIER(0x17),
    DEAD_RANKS(0x18),
    HEARTBEAT(0x19),
    LEAVE(0x1A);

    private static final @Nullable MessageType[] BY_CODE = new MessageType[256];

    static {
        for (MessageType t : values()) BY_CODE[t.code] = t;
    }

    final int code;

    MessageType(int code) {
        this.code = code;
    }

    /** The type with this code, or null for a code no version of the protocol uses. */
    static @Nullable MessageType of(int code) {
        return code < 0 || code > 255 ? null : BY_CODE[code];
    }
}
