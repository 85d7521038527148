package org.jccl.core.nccl;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.jccl.core.error.GpuRuntimeException;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.LibraryUnavailableException;
import org.jccl.core.error.UnsupportedFeatureException;
import org.jccl.core.spi.CompiledCode;
import org.jccl.core.spi.DriverStream;
import org.jccl.core.spi.KernelRuntime;
import org.jspecify.annotations.Nullable;

/**
 * Kernels on CUDA: the driver API's context-independent library calls ({@code cuLibraryLoadData},
 * {@code cuLibraryGetKernel}, {@code cuKernelGetParamInfo}, {@code cuLaunchKernel}) and NVRTC, both loaded at run time
 * by {@code jccl_kernels.h}. {@link HipKernels} adapts it to HIP's per-device modules.
 */
class NcclKernels implements KernelRuntime {
    private static final int CUDA_ERROR_INVALID_VALUE = 1;
    private static final int CUDA_ERROR_INVALID_IMAGE = 200;
    private static final int CUDA_ERROR_NOT_FOUND = 500;
    private static final int ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0;
    private static final int ATTRIBUTE_MAX_DYNAMIC_SHARED_BYTES = 8;
    /** jccl_kernels.h packs at most this many parameters. */
    static final int MAX_PARAMETERS = 256;

    final long k;
    private final String driverPath;
    private final int driverVersion;
    private final boolean rtcLoaded;
    private final String rtcPathOrProblem;
    private final int rtcVersion;

    NcclKernels(long k) {
        this.k = k;
        this.driverPath = NativeApi.jk_driver_path(k);
        int[] v = new int[2];
        this.driverVersion = NativeApi.jk_driver_version(k, v) == 0 ? v[0] : 0;
        this.rtcLoaded = NativeApi.jk_rtc_loaded(k) != 0;
        this.rtcPathOrProblem = NativeApi.jk_rtc_path(k);
        this.rtcVersion = rtcLoaded && NativeApi.jk_rtc_version(k, v) == 0 ? v[0] * 1000 + v[1] * 10 : 0;
        for (int i = 0; i < NativeApi.jk_driver_function_count(); i++) {
            String name = NativeApi.jk_driver_function_name(k, i);
            if (NativeApi.jk_driver_function_present(k, i) == 0 && !name.isEmpty() && !name.equals("cuKernelGetParamInfo")) {
                throw new LibraryUnavailableException(driverPath + " is not a usable driver for kernels: it lacks " + name
                        + (name.startsWith("cu") ? " (CUDA 12.0 or newer is needed)" : ""));
            }
        }
    }

    /**
     * Opens the driver API and NVRTC from colon-separated candidate lists.
     *
     * @throws UnsupportedFeatureException naming every file tried when the driver API cannot be loaded
     */
    static NcclKernels open(String driverCandidates, String rtcCandidates) {
        return new NcclKernels(openNative(false, driverCandidates, rtcCandidates));
    }

    static long openNative(boolean hip, String driverCandidates, String rtcCandidates) {
        byte[] error = new byte[8192];
        long k = NativeApi.jk_open(hip ? 1 : 0, driverCandidates, rtcCandidates, error, error.length);
        if (k == 0) {
            int n = 0;
            while (n < error.length && error[n] != 0) n++;
            throw new UnsupportedFeatureException("kernels launched from Java", (hip ? "HIP's module API" : "the CUDA driver API")
                    + " (" + new String(error, 0, n, StandardCharsets.UTF_8) + ")", "none loaded", null);
        }
        return k;
    }

    @Override
    public String describe() {
        return driverPath + " (driver " + driverVersion / 1000 + "." + driverVersion % 1000 / 10 + "), "
                + (rtcLoaded ? "NVRTC " + rtcVersion / 1000 + "." + rtcVersion % 1000 / 10 + " (" + rtcPathOrProblem + ")" : "no NVRTC");
    }

    /** Throws the typed exception for a failed driver call (HIP's codes mirror CUDA's). */
    void check(int code, String what) {
        if (code == 0) return;
        if (code == NativeApi.MISSING) throw new LibraryUnavailableException(driverPath + " lacks the function behind " + what);
        String name = NativeApi.jk_error_name(k, code);
        String text = NativeApi.jk_error_string(k, code);
        String message = what + " failed: " + (name == null ? "CUDA error " + code : name);
        if (code == CUDA_ERROR_INVALID_VALUE || code == CUDA_ERROR_NOT_FOUND || (code >= CUDA_ERROR_INVALID_IMAGE && code < 300)) {
            // a bad image, kernel name or launch configuration
            throw new InvalidArgumentException(message, code, text, null, null, null);
        }
        throw new GpuRuntimeException(message, code, text, null, null, null);
    }

    @Override
    public long loadImage(byte[] image) {
        long[] out = new long[1];
        check(NativeApi.jk_library_load(k, image, out), "cuLibraryLoadData");
        return out[0];
    }

    @Override
    public void unloadImage(long image) {
        check(NativeApi.jk_library_unload(k, image), "cuLibraryUnload");
    }

    @Override
    public long kernel(long image, String name) {
        long[] out = new long[1];
        check(NativeApi.jk_library_kernel(k, image, name, out), "cuLibraryGetKernel(" + name + ")");
        return out[0];
    }

    @Override
    public long @Nullable [] parameterSizes(long kernel) {
        long[] offset = new long[1];
        long[] size = new long[1];
        long[] sizes = new long[MAX_PARAMETERS];
        for (int i = 0; i < MAX_PARAMETERS; i++) {
            int code = NativeApi.jk_kernel_param(k, kernel, i, offset, size);
            if (code == NativeApi.MISSING) return null; // CUDA before 12.4
            if (code == CUDA_ERROR_INVALID_VALUE) return Arrays.copyOf(sizes, i); // past the last parameter
            check(code, "cuKernelGetParamInfo");
            sizes[i] = size[0];
        }
        return sizes;
    }

    @Override
    public int maxThreadsPerBlock(long kernel, int device) {
        return attribute(ATTRIBUTE_MAX_THREADS_PER_BLOCK, kernel, device);
    }

    @Override
    public int maxDynamicSharedBytes(long kernel, int device) {
        return attribute(ATTRIBUTE_MAX_DYNAMIC_SHARED_BYTES, kernel, device);
    }

    private int attribute(int attribute, long kernel, int device) {
        int[] value = new int[1];
        check(NativeApi.jk_kernel_attribute(k, value, attribute, kernel, device), "cuKernelGetAttribute");
        return value[0];
    }

    @Override
    public void launch(long kernel, int[] dims, int sharedBytes, DriverStream stream, byte[] arguments, int[] offsets) {
        check(NativeApi.jk_launch(k, kernel, dims, sharedBytes, stream.handle(), arguments, offsets, offsets.length), "cuLaunchKernel");
    }

    @Override
    public boolean canCompile() {
        return rtcLoaded;
    }

    @Override
    public @Nullable String compilerProblem() {
        return rtcLoaded ? null : "NVRTC could not be loaded: " + rtcPathOrProblem;
    }

    @Override
    public int compilerVersion() {
        return rtcVersion;
    }

    @Override
    public CompiledCode compile(String source, String name, Map<String, String> headers, List<String> options) {
        if (!rtcLoaded) {
            throw new UnsupportedFeatureException("nvrtcCompileProgram", "NVRTC (" + rtcPathOrProblem + ")", "none loaded", null);
        }
        ByteArrayOutputStream packedHeaders = new ByteArrayOutputStream();
        headers.forEach((include, contents) -> {
            packed(packedHeaders, include);
            packed(packedHeaders, contents);
        });
        ByteArrayOutputStream packedOptions = new ByteArrayOutputStream();
        options.forEach(o -> packed(packedOptions, o));
        ByteArrayOutputStream sourceBytes = new ByteArrayOutputStream();
        packed(sourceBytes, source);
        long[] program = new long[1];
        int code = NativeApi.jk_rtc_compile(k, sourceBytes.toByteArray(), name, headers.size(), packedHeaders.toByteArray(),
                options.size(), packedOptions.toByteArray(), program);
        try {
            if (program[0] == 0) throw rtcFailure(code, "nvrtcCreateProgram");
            String log = log(program[0]);
            if (code != 0) return new CompiledCode(false, log.isEmpty() ? rtcError(code) : log, null, null);
            return compiled(log, program[0], options);
        } finally {
            if (program[0] != 0) NativeApi.jk_rtc_destroy(k, program[0]);
        }
    }

    /** What a successful compile produced: the PTX, and the cubin when the options named a real architecture. */
    CompiledCode compiled(String log, long program, List<String> options) {
        byte[] ptx = code(program, false);
        boolean realArchitecture = options.stream().anyMatch(o -> o.matches("(-arch|--gpu-architecture)=?sm_.*"));
        return new CompiledCode(true, log, ptx, realArchitecture ? code(program, true) : null);
    }

    private String log(long program) {
        long[] size = new long[1];
        rtcCheck(NativeApi.jk_rtc_log_size(k, program, size), "nvrtcGetProgramLogSize");
        byte[] log = new byte[(int) Math.max(1, size[0])];
        rtcCheck(NativeApi.jk_rtc_log(k, program, log), "nvrtcGetProgramLog");
        int n = 0;
        while (n < log.length && log[n] != 0) n++;
        return new String(log, 0, n, StandardCharsets.UTF_8).strip();
    }

    byte[] code(long program, boolean cubin) {
        long[] size = new long[1];
        rtcCheck(NativeApi.jk_rtc_code_size(k, program, cubin ? 1 : 0, size), cubin ? "nvrtcGetCUBINSize" : "nvrtcGetPTXSize");
        byte[] code = new byte[(int) size[0]];
        rtcCheck(NativeApi.jk_rtc_code(k, program, cubin ? 1 : 0, code), cubin ? "nvrtcGetCUBIN" : "nvrtcGetPTX");
        return code;
    }

    private void rtcCheck(int code, String what) {
        if (code != 0) throw rtcFailure(code, what);
    }

    private RuntimeException rtcFailure(int code, String what) {
        if (code == NativeApi.MISSING) return new LibraryUnavailableException(rtcPathOrProblem + " lacks " + what);
        return new GpuRuntimeException(what + " failed", code, rtcError(code), null, null, null);
    }

    private String rtcError(int code) {
        String s = NativeApi.jk_rtc_error_string(k, code);
        return s == null ? "NVRTC error " + code : s;
    }

    private static void packed(ByteArrayOutputStream out, String s) {
        out.writeBytes(s.getBytes(StandardCharsets.UTF_8));
        out.write(0);
    }
}
