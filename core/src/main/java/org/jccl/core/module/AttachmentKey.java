package org.jccl.core.module;

import java.util.Objects;
import java.util.function.Function;

/**
 * Names a module's {@link Attachment} and makes it: {@link ModuleContext#attachment} returns the one instance of a
 * communicator, made by {@link #create} on first use. Keys compare by identity: declare each once, as a constant.
 *
 * @param <T> the attachment's type
 */
public final class AttachmentKey<T extends Attachment> {
    private final String name;
    private final Function<ModuleContext, T> factory;

    private AttachmentKey(String name, Function<ModuleContext, T> factory) {
        this.name = Objects.requireNonNull(name, "name");
        this.factory = Objects.requireNonNull(factory, "factory");
    }

    /** A key whose attachment {@code factory} makes from the communicator's context. */
    public static <T extends Attachment> AttachmentKey<T> of(String name, Function<ModuleContext, T> factory) {
        return new AttachmentKey<>(name, factory);
    }

    /** Makes the attachment for {@code context}'s communicator. */
    public T create(ModuleContext context) {
        return Objects.requireNonNull(factory.apply(context), () -> name + ": the factory returned null");
    }

    public String name() {
        return name;
    }

    @Override
    public String toString() {
        return "AttachmentKey[" + name + "]";
    }
}
