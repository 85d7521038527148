package org.jccl.core;

import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;

/**
 * Immutable communicator configuration: the {@code ncclConfig_t} fields to set (unset fields keep the library's
 * default, {@code NCCL_CONFIG_UNDEF_INT}). Built with {@link #builder()}; {@link #DEFAULT} sets nothing.
 *
 * <p>{@code blocking(false)} asks for non-blocking creation: the library returns {@code ncclInProgress} at once and
 * jccl's event thread polls the communicator until it is ready, completing the creation future then.
 */
public final class CommConfig {
    /** The library's defaults for every field (blocking creation). */
    public static final CommConfig DEFAULT = builder().build();

    private final Map<ConfigField, Object> values;

    private CommConfig(EnumMap<ConfigField, Object> values) {
        this.values = Collections.unmodifiableMap(values);
    }

    public static Builder builder() {
        return new Builder(new EnumMap<>(ConfigField.class));
    }

    /** A builder starting from this configuration. */
    public Builder toBuilder() {
        EnumMap<ConfigField, Object> copy = new EnumMap<>(ConfigField.class);
        copy.putAll(values);
        return new Builder(copy);
    }

    /** The fields that are set, with {@code Integer} or {@code String} values. */
    public Map<ConfigField, Object> values() {
        return values;
    }

    /** Whether creation blocks (the library's default) or is polled by the event thread. */
    public boolean isBlocking() {
        Object v = values.get(ConfigField.BLOCKING);
        return v == null || ((Integer) v) != 0;
    }

    @Override
    public String toString() {
        return "CommConfig" + values;
    }

    /** Builds a {@link CommConfig}; setters check their arguments at once. */
    public static final class Builder {
        private final EnumMap<ConfigField, Object> values;

        private Builder(EnumMap<ConfigField, Object> values) {
            this.values = values;
        }

        /** {@code config.blocking}: false makes creation and collectives return {@code ncclInProgress}. */
        public Builder blocking(boolean blocking) {
            return set(ConfigField.BLOCKING, blocking ? 1 : 0);
        }

        /** {@code config.commName}: a name for logs. */
        public Builder name(String name) {
            return set(ConfigField.COMM_NAME, name);
        }

        /** Sets an integer field. */
        public Builder set(ConfigField field, int value) {
            Errors.requireArgument(field, "field");
            if (field.isString()) throw new InvalidArgumentException(field.cName() + " takes a string, not an int");
            values.put(field, value);
            return this;
        }

        /** Sets a string field. */
        public Builder set(ConfigField field, String value) {
            Errors.requireArgument(field, "field");
            Errors.requireArgument(value, "value");
            if (!field.isString()) throw new InvalidArgumentException(field.cName() + " takes an int, not a string");
            values.put(field, value);
            return this;
        }

        public CommConfig build() {
            return new CommConfig(new EnumMap<>(values));
        }
    }
}
