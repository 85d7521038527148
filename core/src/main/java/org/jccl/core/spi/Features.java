package org.jccl.core.spi;

import java.util.Collection;
import java.util.EnumSet;
import java.util.Set;
import java.util.TreeSet;
import org.jccl.core.error.UnsupportedFeatureException;

/**
 * Which optional functions the loaded library has. A missing function is a missing feature: {@link #require}
 * throws an {@link UnsupportedFeatureException} naming the function, the library and the first version with it.
 */
public final class Features {
    private final String library;
    private final String version;
    private final Set<String> functions;
    private final Set<Feature> present;

    /**
     * @param library   the loaded library file, for messages
     * @param version   its version, for messages
     * @param functions the library functions it has (optional and required ones)
     */
    public Features(String library, String version, Collection<String> functions) {
        this.library = library;
        this.version = version;
        this.functions = Set.copyOf(functions);
        EnumSet<Feature> have = EnumSet.noneOf(Feature.class);
        for (Feature f : Feature.values()) {
            for (String name : f.functions()) if (this.functions.contains(name)) have.add(f);
        }
        this.present = have;
    }

    public boolean has(Feature feature) {
        return present.contains(feature);
    }

    /** Throws {@link UnsupportedFeatureException} if {@code feature} is absent. */
    public void require(Feature feature) {
        if (!present.contains(feature)) {
            throw new UnsupportedFeatureException(feature.function(), library, version, feature.firstVersion());
        }
    }

    /** Whether the library exports {@code function} (for functions that are not {@link Feature}s). */
    public boolean hasFunction(String function) {
        return functions.contains(function);
    }

    /** The library functions present, sorted. */
    public Set<String> present() {
        return new TreeSet<>(functions);
    }

    public String library() {
        return library;
    }

    public String version() {
        return version;
    }
}
