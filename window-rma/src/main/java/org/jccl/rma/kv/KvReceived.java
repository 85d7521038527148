package org.jccl.rma.kv;

/**
 * What a receiver reports once a request's every layer is usable in its pool.
 *
 * @param request       the request's name
 * @param sender        the prefill rank
 * @param blocks        the destination blocks, now the application's: give them back to the allocator when done
 * @param bytes         the bytes that arrived
 * @param transferNanos from the grant to the last layer usable
 */
public record KvReceived(String request, int sender, int[] blocks, long bytes, long transferNanos) {
    public KvReceived {
        blocks = blocks.clone();
    }

    @Override
    public int[] blocks() {
        return blocks.clone();
    }
}
