package org.jccl.core.engine;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.jccl.core.error.InvalidUsageException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What modules keep on one communicator, one value per key, made on first use and ended with the communicator:
 * {@link #closing()} when its close begins or an abort fails its work, {@link #gone()} once the library destroyed or
 * aborted it, each in the reverse order of creation and at most once. Values that are not {@link Attached} are only
 * dropped. Owned by {@link CommunicatorState}.
 */
public final class Attachments {
    private static final Logger LOG = LoggerFactory.getLogger(Attachments.class);

    /** What an attached value is told as its communicator ends. */
    public interface Attached {
        /** The communicator is closing or aborting. */
        void closing();

        /** The communicator is gone: release without calling the library. */
        void gone();
    }

    private final String label;
    private final Map<Object, Object> values = new LinkedHashMap<>();
    private boolean closingTold;
    private boolean ended;

    Attachments(String label) {
        this.label = label;
    }

    /**
     * The value for {@code key}, made by {@code create} if there is none yet.
     *
     * @throws InvalidUsageException once the communicator ended, for a key with no value
     */
    @SuppressWarnings("unchecked")
    public synchronized <T> T get(Object key, Supplier<T> create) {
        Object value = values.get(key);
        if (value != null) return (T) value;
        if (closingTold || ended) throw new InvalidUsageException(label + " is closed: nothing new can be attached to it");
        T made = create.get();
        values.put(key, made);
        return made;
    }

    /** The value for {@code key}, or null. */
    public synchronized @Nullable Object peek(Object key) {
        return values.get(key);
    }

    void closing() {
        List<Attached> told;
        synchronized (this) {
            if (closingTold) return;
            closingTold = true;
            told = inReverse();
        }
        for (Attached a : told) run(a::closing, "closing");
    }

    void gone() {
        List<Attached> told;
        synchronized (this) {
            if (ended) return;
            ended = true;
            told = inReverse();
            values.clear();
        }
        for (Attached a : told) run(a::gone, "release");
    }

    private List<Attached> inReverse() {
        List<Attached> out = new ArrayList<>();
        for (Object v : values.values()) if (v instanceof Attached a) out.add(0, a);
        return out;
    }

    private void run(Runnable step, String what) {
        try {
            step.run();
        } catch (RuntimeException e) { // one module's failure must not keep the others from ending
            LOG.warn("{} an attachment's {} failed", label, what, e);
        }
    }
}
