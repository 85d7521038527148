package org.jccl.core;

/** The backends jccl drives. */
public enum BackendKind {
    /** NVIDIA: CUDA runtime and NCCL. */
    NCCL,
    /** AMD: HIP runtime and RCCL. */
    RCCL,
    /** Pure Java on the CPU: ranks as threads of one JVM (or processes joined over the rendezvous). */
    HOST;

    /** The lower-case name used in configuration ({@code jccl.backend=nccl}). */
    public String id() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
