package org.jccl.core;

import org.jccl.core.error.Errors;
import org.jccl.core.module.ModuleContext;

/**
 * Where modules built on core (window-rma, device-api, …) obtain a communicator's {@link ModuleContext}: the one door
 * from core's API to the module contract, kept out of {@link Communicator} so that the API does not depend on the
 * contract that depends on it. Applications do not need it.
 */
public final class Modules {
    private Modules() {
    }

    /** The module context of {@code communicator}: one instance per communicator, made on first use. */
    public static ModuleContext context(Communicator communicator) {
        Errors.requireArgument(communicator, "communicator");
        return communicator.state().attachments().get(Modules.class, () -> new CommunicatorContext(communicator));
    }
}
