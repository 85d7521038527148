package org.jccl.core.jfr;

import org.jspecify.annotations.Nullable;

/**
 * One event of NCCL's profiler as jccl's plugin recorded it, decoded, for {@link JfrEvents#ncclActivity}. Not API.
 *
 * @param communicator     the jccl communicator's id, empty outside a jccl operation
 * @param sequence         the jccl operation's sequence number, -1 if none
 * @param kind             NCCL's event type (CollApi, Coll, ...)
 * @param function         AllReduce, Send, ...
 * @param count            elements, or bytes for a proxy operation; -1 if none
 * @param dataType         NCCL's name of the element type
 * @param peer             root or peer, -1 if none
 * @param channels         channels of a task, the channel of a proxy operation; -1 otherwise
 * @param algorithm        a collective task's algorithm
 * @param protocol         a collective task's protocol
 * @param ncclSequence     NCCL's sequence number of a collective task, -1 otherwise
 * @param ncclCommunicator NCCL's communicator hash, hexadecimal
 * @param rank             the rank NCCL reported
 * @param startedMillis    when NCCL started the event, milliseconds since the epoch
 * @param elapsedNanos     from NCCL's start of the event to its stop
 */
public record NcclActivity(String communicator, long sequence, String kind, @Nullable String function, long count,
                           @Nullable String dataType, int peer, int channels, @Nullable String algorithm,
                           @Nullable String protocol, long ncclSequence, String ncclCommunicator, int rank,
                           long startedMillis, long elapsedNanos) {
}
