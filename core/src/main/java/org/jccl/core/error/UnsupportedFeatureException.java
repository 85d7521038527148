package org.jccl.core.error;

import org.jspecify.annotations.Nullable;

/**
 * The loaded library lacks a function. A missing function is a missing feature, never a crash: the message names
 * the function, the loaded library file and its version, and the first version that has it.
 */
public class UnsupportedFeatureException extends JcclException {
    private static final long serialVersionUID = 1L;

    private final String function;

    public UnsupportedFeatureException(String function, String library, String loadedVersion, @Nullable String firstVersion) {
        super(function + " is not available in " + library + " (version " + loadedVersion + ")"
                + (firstVersion == null ? "" : "; it first appears in " + firstVersion));
        this.function = function;
    }

    /** The missing function, e.g. {@code ncclCommShrink}. */
    public String function() {
        return function;
    }
}
