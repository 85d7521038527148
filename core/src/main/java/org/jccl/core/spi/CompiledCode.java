package org.jccl.core.spi;

import org.jspecify.annotations.Nullable;

/**
 * What the run-time compiler produced.
 *
 * @param succeeded whether it compiled
 * @param log       the compiler's messages (warnings too), possibly empty
 * @param ptx       the PTX, NUL-terminated, or null when compilation failed
 * @param cubin     the cubin where the options named a real architecture ({@code sm_90}), else null
 */
public record CompiledCode(boolean succeeded, String log, byte @Nullable [] ptx, byte @Nullable [] cubin) {
}
