package org.jccl.core.spi;

import java.util.Collection;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import org.jccl.core.error.UnsupportedFeatureException;
import org.jspecify.annotations.Nullable;

/**
 * Which optional functions the loaded library has. A missing function is a missing feature: {@link #require}
 * throws an {@link UnsupportedFeatureException} naming the function, the library and the first version with it, or,
 * for a backend that loads no library ({@link #withoutLibrary}), the backend alone.
 */
public final class Features {
    private final String library;
    /** Null for a backend that loads no library: its messages name no version. */
    private final @Nullable String version;
    private final Set<String> functions;
    private final Set<Feature> present;

    /**
     * @param library   the loaded library file, for messages
     * @param version   its version, for messages
     * @param functions the library functions it has (optional and required ones)
     */
    public Features(String library, String version, Collection<String> functions) {
        this(functions, library, Objects.requireNonNull(version, "version"));
    }

    private Features(Collection<String> functions, String library, @Nullable String version) {
        this.library = library;
        this.version = version;
        this.functions = Set.copyOf(functions);
        EnumSet<Feature> have = EnumSet.noneOf(Feature.class);
        for (Feature f : Feature.values()) {
            for (String name : f.functions()) if (this.functions.contains(name)) have.add(f);
        }
        this.present = have;
    }

    /**
     * The features of a backend that implements the API itself and loads no collective library (the host backend):
     * its refusals name the backend, never a library version.
     *
     * @param backend   the backend, for messages, e.g. {@code the host backend (pure Java)}
     * @param functions the library functions it implements
     */
    public static Features withoutLibrary(String backend, Collection<String> functions) {
        return new Features(functions, backend, null);
    }

    public boolean has(Feature feature) {
        return present.contains(feature);
    }

    /** Throws {@link UnsupportedFeatureException} if {@code feature} is absent. */
    public void require(Feature feature) {
        if (!present.contains(feature)) throw unsupported(feature.function(), feature.firstVersion());
    }

    /**
     * The refusal of {@code function}, something this backend lacks that is not a {@link Feature} (a capability, a
     * window flag, kernels): naming the library, its version and {@code firstVersion}, or only the backend where no
     * library is loaded.
     *
     * @param firstVersion the first library version that has it, or null where none applies
     */
    public UnsupportedFeatureException unsupported(String function, @Nullable String firstVersion) {
        return version == null ? new UnsupportedFeatureException(function, library)
                : new UnsupportedFeatureException(function, library, version, firstVersion);
    }

    /** Whether the library exports {@code function} (for functions that are not {@link Feature}s). */
    public boolean hasFunction(String function) {
        return functions.contains(function);
    }

    /** The library functions present, sorted. */
    public Set<String> present() {
        return new TreeSet<>(functions);
    }

    /** The loaded library file, or the backend where it loads none. */
    public String library() {
        return library;
    }

    /** The loaded library's version, for messages, e.g. {@code NCCL 2.28.9}; {@code none} where no library is loaded. */
    public String version() {
        return version == null ? "none" : version;
    }

    /**
     * e.g. {@code Features[NCCL 2.28.9 (/usr/lib/libnccl.so.2): 41 functions; optional present: COMM_SPLIT, ...;
     * absent: PUT_SIGNAL, ...]}.
     */
    @Override
    public String toString() {
        EnumSet<Feature> absent = EnumSet.allOf(Feature.class);
        absent.removeAll(present);
        return "Features[" + (version == null ? library : version + " (" + library + ")") + ": " + functions.size()
                + " functions; optional present: " + (present.isEmpty() ? "none" : present) + "; absent: "
                + (absent.isEmpty() ? "none" : absent) + "]";
    }
}
