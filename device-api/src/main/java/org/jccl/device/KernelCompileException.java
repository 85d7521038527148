package org.jccl.device;

import org.jccl.core.error.JcclException;

/** Run-time compilation failed; the compiler's log says why. Nothing was loaded. */
public final class KernelCompileException extends JcclException {
    private static final long serialVersionUID = 1L;
    private final String log;

    public KernelCompileException(String source, String log) {
        super(source + " did not compile:\n" + log);
        this.log = log;
    }

    /** The compiler's messages. */
    public String log() {
        return log;
    }
}
