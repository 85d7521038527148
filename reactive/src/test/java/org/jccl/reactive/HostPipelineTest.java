package org.jccl.reactive;

import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Jccl;

/** The pipeline suite on the host backend with two ranks (ranks as threads of this JVM). */
class HostPipelineTest extends PipelineSuite {
    @Override
    protected Backend backend() {
        return Jccl.backend(BackendKind.HOST);
    }

    @Override
    protected int ranks() {
        return 2;
    }
}
