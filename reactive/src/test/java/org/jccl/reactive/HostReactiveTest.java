package org.jccl.reactive;

import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Jccl;

/** The reactive suite on the host backend with three ranks (ranks as threads of this JVM). */
class HostReactiveTest extends ReactiveSuite {
    @Override
    protected Backend backend() {
        return Jccl.backend(BackendKind.HOST);
    }

    @Override
    protected int ranks() {
        return 3;
    }
}
