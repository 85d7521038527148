package org.jccl.core.rendezvous;

/**
 * One decoded message. Frames are small (bounded by the configured maximum), so the payload is a plain array:
 * no reference-counted buffer outlives the decoder.
 *
 * @param type      what the frame asks or answers
 * @param requestId pairs a request with its answer; 0 for unsolicited frames
 * @param payload   the type-specific body ({@link PayloadReader} reads it)
 */
record Frame(MessageType type, int requestId, byte[] payload) {
    /** Bytes before the payload, after the length field: type (1) and request id (4). */
    static final int HEADER_BYTES = 5;
    /** The length field itself. */
    static final int LENGTH_FIELD_BYTES = 4;

    static Frame of(MessageType type, int requestId, PayloadWriter payload) {
        return new Frame(type, requestId, payload.toByteArray());
    }

    static Frame empty(MessageType type, int requestId) {
        return new Frame(type, requestId, new byte[0]);
    }
}
