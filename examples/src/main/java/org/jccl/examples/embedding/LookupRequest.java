package org.jccl.examples.embedding;

import org.jccl.examples.serving.PendingRequest;

/** One lookup on rank 0: the ids, the simulated compute time of its step; answered with the rows in id order. */
final class LookupRequest extends PendingRequest<float[][]> {
    final int[] ids;
    final int computeMillis;

    LookupRequest(int[] ids, int computeMillis) {
        this.ids = ids;
        this.computeMillis = computeMillis;
    }
}
