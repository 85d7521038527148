package org.jccl.reactive;

import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Jccl;
import org.junit.jupiter.api.Tag;

/** The reactive suite on NCCL with two GPUs of one process ({@code initAll(2)}); run on the GPU machine. */
@Tag("gpu")
class NcclReactiveTest extends ReactiveSuite {
    @Override
    protected Backend backend() {
        return Jccl.backend(BackendKind.NCCL);
    }

    @Override
    protected int ranks() {
        return 2;
    }
}
