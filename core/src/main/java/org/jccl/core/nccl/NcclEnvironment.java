package org.jccl.core.nccl;

import java.util.Map;
import java.util.Objects;
import org.jccl.core.config.JcclSettings;
import org.jccl.core.error.InvalidArgumentException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sets the {@code NCCL_*} variables given as {@code jccl.nccl.env.NAME=value} properties in this process's C
 * environment, where NCCL's {@code getenv} reads them — a JVM cannot change its own environment, so this goes through
 * jccl's JNI library. It runs before each load of NCCL or RCCL and changes only variables whose value differs, so a
 * later load with unchanged properties calls no {@code setenv} while NCCL's threads may be reading the environment.
 * NCCL reads most variables once, at its first initialization in the process, and caches each value at first use:
 * set them before the first backend is created.
 */
final class NcclEnvironment {
    private static final Logger LOG = LoggerFactory.getLogger(NcclEnvironment.class);

    private NcclEnvironment() {
    }

    /**
     * Applies every {@code jccl.nccl.env.*} property.
     *
     * @throws InvalidArgumentException if a property names no NCCL variable or the C library refuses one
     */
    static synchronized void apply() {
        for (Map.Entry<String, String> e : JcclSettings.ncclEnvironment().entrySet()) {
            String name = e.getKey();
            String value = e.getValue();
            String current = NativeApi.jn_getenv(name);
            if (Objects.equals(current, value)) continue;
            int errno = NativeApi.jn_setenv(name, value);
            if (errno != 0) {
                throw new InvalidArgumentException(JcclSettings.NCCL_ENV_PREFIX + name + ": setenv failed (errno " + errno + ")");
            }
            if (current == null) {
                LOG.info("jccl: {}={} (from {}{})", name, value, JcclSettings.NCCL_ENV_PREFIX, name);
            } else {
                LOG.warn("jccl: {}={} replaces the environment's {}={} (property {}{} wins)", name, value, name, current,
                        JcclSettings.NCCL_ENV_PREFIX, name);
            }
        }
    }
}
