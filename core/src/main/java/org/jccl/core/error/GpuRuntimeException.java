package org.jccl.core.error;

import org.jspecify.annotations.Nullable;

/** The CUDA or HIP runtime failed a call; the result code is the runtime's ({@code cudaError_t}/{@code hipError_t}). */
public class GpuRuntimeException extends JcclException {
    private static final long serialVersionUID = 1L;

    public GpuRuntimeException(String message) {
        super(message, -1, null, null, null, null);
    }

    public GpuRuntimeException(String message, int resultCode, @Nullable String libraryMessage, @Nullable String lastError,
              @Nullable String work, @Nullable Throwable cause) {
        super(message, resultCode, libraryMessage, lastError, work, cause);
    }
}
