package org.jccl.core.error;

import org.jspecify.annotations.Nullable;

/**
 * The loaded library lacks a function, or the backend does not implement it. A missing function is a missing
 * feature, never a crash: the message names the function, the loaded library file and its version, and the first
 * version that has it; for a backend that loads no library (the host backend) it names the backend and no version.
 */
public class UnsupportedFeatureException extends JcclException {
    private static final long serialVersionUID = 1L;

    private final String function;

    /**
     * A function the loaded library lacks.
     *
     * @param function      the missing function
     * @param library       the loaded library file (or what stands for it)
     * @param loadedVersion its version
     * @param firstVersion  the first version that has the function, or null where none applies
     */
    public UnsupportedFeatureException(String function, String library, String loadedVersion, @Nullable String firstVersion) {
        super(function + " is not available in " + library + " (version " + loadedVersion + ")"
                + (firstVersion == null ? "" : "; it first appears in " + firstVersion));
        this.function = function;
    }

    /**
     * A function a backend without a collective library does not implement: no library version is named, since no
     * upgrade of one would bring it.
     *
     * @param function the missing function
     * @param backend  the backend, e.g. {@code the host backend (pure Java)}
     */
    public UnsupportedFeatureException(String function, String backend) {
        super(function + " is not implemented by " + backend + ", which loads no NCCL or RCCL library;"
                + " a GPU backend (nccl, rccl) whose library has it provides it");
        this.function = function;
    }

    /** The missing function, e.g. {@code ncclCommShrink}. */
    public String function() {
        return function;
    }
}
