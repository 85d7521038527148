package org.jccl.core;

import java.util.function.LongFunction;
import org.jccl.core.engine.IssuePath;
import org.jccl.core.spi.MemoryBlock;

/**
 * One entry of a submission ({@link Submission}), in issue order among its communicator's: an operation lowered and
 * ready for the launch thread, or a module's operation, or a step's replay.
 *
 * @param enqueue   what the launch thread enqueues
 * @param describer names it with its sequence number, e.g. {@code allReduce(seq=17, count=8, float32, sum)}
 * @param held      the memory it uses, each block retained and released once by the work
 * @param bytes     what {@link Work#bytes()} counts for it
 */
record SubmissionPart(IssuePath.Enqueue enqueue, LongFunction<String> describer, MemoryBlock[] held, long bytes) {
    String describe(long sequence) {
        return describer.apply(sequence);
    }
}
