package org.jccl.core.spi;

import java.util.Map;
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
    private final Set<String> present;
    private final Map<String, String> firstVersions;

    /**
     * @param library       the loaded library file, for messages
     * @param version       its version, for messages
     * @param present       the functions it has
     * @param firstVersions for known optional functions, the first library version that has them
     */
    public Features(String library, String version, Set<String> present, Map<String, String> firstVersions) {
        this.library = library;
        this.version = version;
        this.present = Set.copyOf(present);
        this.firstVersions = Map.copyOf(firstVersions);
    }

    public boolean has(String function) {
        return present.contains(function);
    }

    /** Throws {@link UnsupportedFeatureException} if {@code function} is absent. */
    public void require(String function) {
        if (!present.contains(function)) {
            throw new UnsupportedFeatureException(function, library, version, firstVersions.get(function));
        }
    }

    /** The functions present, sorted. */
    public Set<String> present() {
        return new TreeSet<>(present);
    }

    public String library() {
        return library;
    }

    public String version() {
        return version;
    }
}
