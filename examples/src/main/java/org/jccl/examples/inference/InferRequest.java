package org.jccl.examples.inference;

import org.jccl.examples.serving.PendingRequest;

/** One inference on rank 0: {@link MlpModel#IN} inputs, answered with {@link MlpModel#OUT} outputs. */
final class InferRequest extends PendingRequest<float[]> {
    final float[] input;

    InferRequest(float[] input) {
        this.input = input;
    }
}
