package org.jccl.core.nccl;

/** Library version codes as text. */
final class LibraryVersions {
    /** Functions only RCCL has (the first versions of features are in {@link org.jccl.core.spi.Feature}). */
    static final String RCCL_ONLY = org.jccl.core.spi.Feature.RCCL_ONLY;

    private LibraryVersions() {
    }

    /** {@code NCCL_VERSION_CODE} to text: 22809 → {@code 2.28.9}; codes before 2.9 used {@code X*1000+Y*100+Z}. */
    static String format(int code) {
        if (code <= 0) return "unknown";
        if (code < 10000) return (code / 1000) + "." + (code % 1000 / 100) + "." + (code % 100);
        return (code / 10000) + "." + (code % 10000 / 100) + "." + (code % 100);
    }
}
