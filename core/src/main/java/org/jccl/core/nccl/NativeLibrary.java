package org.jccl.core.nccl;

import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;
import org.jccl.core.BackendKind;
import org.jccl.core.error.Errors;
import org.jccl.core.error.JcclException;
import org.jccl.core.error.LibraryUnavailableException;
import org.jccl.core.spi.Feature;
import org.jccl.core.spi.Features;
import org.jspecify.annotations.Nullable;

/**
 * One loaded pair of libraries (NCCL + CUDA runtime, or RCCL + HIP runtime): the native context, the feature table
 * and the checks that turn result codes into jccl's exceptions.
 */
final class NativeLibrary {
    final long ctx;
    final BackendKind kind;
    final int version;
    final String ncclPath;
    final String runtimePath;
    final Features features;
    final Set<String> runtimeFunctions;

    private NativeLibrary(long ctx, BackendKind kind) {
        this.ctx = ctx;
        this.kind = kind;
        this.ncclPath = NativeApi.jn_nccl_path(ctx);
        this.runtimePath = NativeApi.jn_runtime_path(ctx);
        Set<String> present = new HashSet<>();
        for (int i = 0; i < NativeApi.jn_nccl_function_count(); i++) {
            if (NativeApi.jn_nccl_function_present(ctx, i) != 0) present.add(NativeApi.jn_nccl_function_name(i));
        }
        Set<String> runtime = new HashSet<>();
        for (int i = 0; i < NativeApi.jn_runtime_function_count(); i++) {
            if (NativeApi.jn_runtime_function_present(ctx, i) != 0) runtime.add(NativeApi.jn_runtime_function_name(ctx, i));
        }
        this.runtimeFunctions = Set.copyOf(runtime);
        int[] v = new int[1];
        this.version = NativeApi.jn_nccl_version(ctx, v) == 0 ? v[0] : 0;
        String library = (kind == BackendKind.RCCL ? "RCCL" : "NCCL");
        this.features = new Features(ncclPath, library + " " + LibraryVersions.format(version), present);
    }

    /**
     * Loads the first loadable file of each colon-separated candidate list.
     *
     * @throws LibraryUnavailableException naming every file tried and the loader's reason for each
     */
    static NativeLibrary open(BackendKind kind, String ncclCandidates, String runtimeCandidates) {
        byte[] error = new byte[8192];
        long ctx;
        try {
            NcclEnvironment.apply(); // before dlopen: NCCL may read its variables as it loads
            NcclLogBridge.applyIfAsked(); // after: a NCCL_DEBUG_FILE the user set wins
            NcclProfiler.applyIfAsked(); // likewise for NCCL_PROFILER_PLUGIN
            ctx = NativeApi.jn_open(kind == BackendKind.RCCL ? 1 : 0, ncclCandidates, runtimeCandidates, error, error.length);
        } catch (UnsatisfiedLinkError e) {
            throw new LibraryUnavailableException("jccl's JNI library could not be loaded for this platform: " + e.getMessage());
        }
        if (ctx == 0) {
            int n = 0;
            while (n < error.length && error[n] != 0) n++;
            // The reason names every file tried, each with the loader's text (set with jccl.cuda.runtime,
            // jccl.nccl.library, jccl.hip.runtime, jccl.rccl.library).
            throw new LibraryUnavailableException(kind.id() + " backend: cannot load its libraries: "
                    + new String(error, 0, n, StandardCharsets.UTF_8));
        }
        NativeLibrary lib = new NativeLibrary(ctx, kind);
        for (String required : new String[] {"ncclGetVersion", "ncclGetErrorString", "ncclGetUniqueId", "ncclCommInitRankConfig",
                "ncclCommGetAsyncError", "ncclAllReduce", "ncclGroupStart", "ncclGroupEnd"}) {
            if (!lib.features.hasFunction(required)) {
                throw new LibraryUnavailableException(lib.ncclPath + " is not a usable " + kind.id() + " library: it lacks " + required);
            }
        }
        NcclProfiler.loaded(kind == BackendKind.RCCL, lib.version);
        return lib;
    }

    /** {@code ncclGetErrorString}. */
    @Nullable String resultString(int code) {
        return NativeApi.jn_error_string(ctx, code);
    }

    /** Throws the typed exception for a failed collective-library call; {@code comm} (or 0) adds its last error. */
    void check(int code, String what, long comm) {
        if (code == Errors.SUCCESS) return;
        throw failure(code, what, comm);
    }

    JcclException failure(int code, String what, long comm) {
        if (code == NativeApi.MISSING) return missing(what);
        return Errors.fromResult(what, code, resultString(code), NativeApi.jn_last_error(ctx, comm), null);
    }

    /** Throws the typed exception for a failed runtime call. */
    void checkRuntime(int code, String what) {
        if (code == 0) return;
        if (code == NativeApi.MISSING) throw new LibraryUnavailableException(runtimePath + " lacks the function behind " + what);
        throw Errors.fromRuntime(what, code, runtimeErrorString(code));
    }

    @Nullable String runtimeErrorString(int code) {
        return NativeApi.jn_rt_error_string(ctx, code);
    }

    private JcclException missing(String what) {
        Feature feature = Feature.ofFunction(what);
        if (feature != null && !features.has(feature)) {
            return features.unsupported(feature.function(), feature.firstVersion());
        }
        return new LibraryUnavailableException(ncclPath + " lacks the function behind " + what);
    }
}
