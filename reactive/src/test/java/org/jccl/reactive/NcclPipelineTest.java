package org.jccl.reactive;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Jccl;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

/** The pipeline suite on NCCL with two GPUs of one process ({@code initAll(2)}); run on the GPU machine. */
@Tag("gpu")
class NcclPipelineTest extends PipelineSuite {
    @Override
    protected Backend backend() {
        return Jccl.backend(BackendKind.NCCL);
    }

    @Override
    protected int ranks() {
        return 2;
    }

    /** The suite's operations pair ranks (send/recv rings, roots other than 0): it needs two GPUs. */
    @BeforeAll
    static void needsTwoGpus() {
        int gpus = Jccl.isAvailable(BackendKind.NCCL) ? Jccl.backend(BackendKind.NCCL).deviceCount() : 0;
        assumeTrue(gpus >= 2, "needs 2 GPUs, found " + gpus);
    }
}
