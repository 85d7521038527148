package org.jccl.core.nccl;

import static org.jccl.core.nccl.StubLibraries.field;
import static org.jccl.core.nccl.StubLibraries.single;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.jccl.core.CommConfig;
import org.jccl.core.error.InternalErrorException;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.UnsupportedFeatureException;
import org.jccl.core.spi.CommProperties;
import org.jccl.core.spi.CompiledCode;
import org.jccl.core.spi.DevCommHandle;
import org.jccl.core.spi.DevCommRequirements;
import org.jccl.core.spi.DriverComm;
import org.jccl.core.spi.DriverStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The device API's host calls and kernels against stub libraries that log every call: requirements laid out for NCCL
 * 2.28 and 2.29, device communicators and properties decoded, images loaded, parameters checked and marshalled,
 * source compiled with jccl's headers and options.
 */
class NcclDeviceApiContractTest {
    static final DevCommRequirements LSA_ONLY = new DevCommRequirements(false, 0, 4, 0, 0, 0, false, 4, 0, 0, 0, false, 0);

    @TempDir
    static Path dir;
    static StubLibraries v229;
    static StubLibraries v228;
    static Path cuda;
    static Path cudaWithoutParamInfo;
    static Path nvrtc;
    static Path hip;
    static Path hiprtc;

    @BeforeAll
    static void build() throws Exception {
        v229 = StubLibraries.build(Files.createDirectory(dir.resolve("v229")), 22907, false);
        v228 = StubLibraries.build(Files.createDirectory(dir.resolve("v228")), 22809, false);
        Path sources = Path.of("src", "test", "c").toAbsolutePath();
        cuda = dir.resolve("libcuda.so.1");
        cudaWithoutParamInfo = Files.createDirectory(dir.resolve("old")).resolve("libcuda.so.1");
        nvrtc = dir.resolve("libnvrtc.so.13");
        StubLibraries.compile(List.of("gcc", "-shared", "-fPIC", "-O1", "-o", cuda.toString(), sources.resolve("stub_cuda.c").toString(), "-ldl"));
        StubLibraries.compile(List.of("gcc", "-shared", "-fPIC", "-O1", "-DSTUB_NO_PARAM_INFO", "-o", cudaWithoutParamInfo.toString(),
                sources.resolve("stub_cuda.c").toString(), "-ldl"));
        StubLibraries.compile(List.of("gcc", "-shared", "-fPIC", "-O1", "-o", nvrtc.toString(), sources.resolve("stub_nvrtc.c").toString(), "-ldl"));
        hip = dir.resolve("libamdhip64.so");
        hiprtc = dir.resolve("libhiprtc.so");
        StubLibraries.compile(List.of("gcc", "-shared", "-fPIC", "-O1", "-DSTUB_HIP", "-o", hip.toString(), sources.resolve("stub_cuda.c").toString(), "-ldl"));
        StubLibraries.compile(List.of("gcc", "-shared", "-fPIC", "-O1", "-DSTUB_HIP", "-o", hiprtc.toString(), sources.resolve("stub_nvrtc.c").toString(), "-ldl"));
    }

    static DriverComm comm(StubLibraries stubs) {
        NcclDriver driver = stubs.open();
        return driver.initRank(2, driver.newUniqueId(), 1, 0, CommConfig.DEFAULT);
    }

    static ByteBuffer loggedRequirements(StubLibraries stubs) {
        String line = single(stubs.ncclCalls(), "ncclDevCommCreate");
        return ByteBuffer.wrap(HexFormat.of().parseHex(field(line, "requirements"))).order(ByteOrder.nativeOrder());
    }

    @Test
    void nccl229RequirementsCarryTheVersionedHeader() {
        DriverComm c = comm(v229);
        v229.ncclCalls();
        DevCommHandle h = dev(c).devCommCreate(new DevCommRequirements(false, 2, 4, 0, 0, 0, false, 4, 3, 5, 1, true, 7));
        ByteBuffer r = loggedRequirements(v229);
        assertEquals(88, r.capacity());
        assertEquals(88L, r.getLong(0));
        assertEquals(0xcafebeef, r.getInt(8));
        assertEquals(22907, r.getInt(12));
        assertEquals(2, r.getInt(16 + 20));
        assertEquals(4, r.getInt(16 + 24));
        assertEquals(3, r.getInt(16 + 48));
        assertEquals(5, r.getInt(16 + 52));
        assertEquals(1, r.getInt(16 + 56));
        assertEquals(1, r.get(16 + 60));
        assertEquals(7, r.getInt(16 + 64));
        assertEquals(1, h.rank());
        assertEquals(2, h.size());
        assertEquals(1, h.lsaRank());
        assertEquals(2, h.lsaSize());
        assertEquals(4, h.ginContextCount());
        assertEquals(3, h.ginSignalCount());
        assertEquals(5, h.ginCounterCount());
        assertEquals(224, h.bytes().length);
        dev(c).devCommDestroy(h);
        assertEquals("1", field(single(v229.ncclCalls(), "ncclDevCommDestroy"), "rank"), "destroy gets the created structure");
        h.free();
    }

    @Test
    void nccl228RequirementsHaveNoHeaderAndRefuseNewerFields() {
        DriverComm c = comm(v228);
        v228.ncclCalls();
        DevCommHandle h = dev(c).devCommCreate(LSA_ONLY);
        ByteBuffer r = loggedRequirements(v228);
        assertEquals(56, r.capacity());
        assertEquals(0L, r.getLong(0), "no resource requirement list");
        assertEquals(4, r.getInt(24));
        assertEquals(4, r.getInt(44));
        assertEquals(4, h.ginContextCount(), "a byte at 136 before 2.29");
        assertEquals(200, h.bytes().length);
        h.free();
        assertThrows(UnsupportedFeatureException.class,
                () -> dev(c).devCommCreate(new DevCommRequirements(false, 0, 4, 0, 0, 0, false, 4, 0, 0, 1, false, 0)));
        assertFalse(v228.ncclCalls().stream().anyMatch(l -> l.startsWith("ncclDevCommCreate")), "refused before the call");
    }

    @Test
    void aFailedCreationIsTyped() {
        DriverComm c = comm(v229);
        assertThrows(InternalErrorException.class,
                () -> dev(c).devCommCreate(new DevCommRequirements(false, 0, 1003, 0, 0, 0, false, 4, 0, 0, 0, false, 0)));
    }

    @Test
    void propertiesFrom229AndNotBefore() {
        DriverComm c = comm(v229);
        v229.ncclCalls();
        assertEquals(new CommProperties(1, 2, 0, 0, true, false, 0, 1, true, 0), dev(c).queryProperties());
        String line = single(v229.ncclCalls(), "ncclCommQueryProperties");
        assertEquals("56", field(line, "size"));
        assertEquals("cafebeef", field(line, "magic"));
        assertThrows(UnsupportedFeatureException.class, () -> dev(comm(v228)).queryProperties());
    }

    @Test
    void imagesKernelsParametersAndLaunches() throws Exception {
        NcclKernels k = NcclKernels.open(cuda.toString(), nvrtc.toString());
        assertTrue(k.describe().contains("NVRTC 13.0"), k.describe());
        long image = k.loadImage("kernel fill 8 224 4 8\nkernel other 4\n\0".getBytes(StandardCharsets.UTF_8));
        long fill = k.kernel(image, "fill");
        assertArrayEquals(new long[] {8, 224, 4, 8}, k.parameterSizes(fill));
        assertEquals(1024, k.maxThreadsPerBlock(fill, 0));
        assertEquals(512, k.maxThreadsPerBlock(fill, 1));
        assertEquals(49152, k.maxDynamicSharedBytes(fill, 0));
        InvalidArgumentException missing = assertThrows(InvalidArgumentException.class, () -> k.kernel(image, "nope"));
        assertTrue(missing.getMessage().contains("CUDA_ERROR_NOT_FOUND"), missing.getMessage());
        assertThrows(InvalidArgumentException.class, () -> k.loadImage("bad image\0".getBytes(StandardCharsets.UTF_8)));

        NcclDriver driver = v229.open();
        DriverStream stream = driver.createStream(0);
        byte[] args = new byte[24];
        args[0] = 0x11;
        args[8] = 0x22;
        args[16] = 0x33;
        long other = k.kernel(image, "other");
        k.launch(other, new int[] {2, 1, 1, 128, 1, 1}, 256, stream, args, new int[] {8});
        List<String> log = Files.readAllLines(Path.of(cuda + ".log"));
        String launch = log.stream().filter(l -> l.startsWith("cuLaunchKernel")).findFirst().orElseThrow();
        assertEquals("other", field(launch, "kernel"));
        assertEquals("2,1,1", field(launch, "grid"));
        assertEquals("128,1,1", field(launch, "block"));
        assertEquals("256", field(launch, "shared"));
        assertEquals("22000000", field(launch, "params"), "parameter 0 is the 4 bytes at its offset");
        k.unloadImage(image);

        NcclKernels old = NcclKernels.open(cudaWithoutParamInfo.toString(), nvrtc.toString());
        long oldImage = old.loadImage("kernel fill 8\n\0".getBytes(StandardCharsets.UTF_8));
        assertNull(old.parameterSizes(old.kernel(oldImage, "fill")), "before CUDA 12.4 the sizes are unknown, not guessed");
    }

    @Test
    void compilingPassesHeadersAndOptionsAndReturnsTheLog() throws Exception {
        NcclKernels k = NcclKernels.open(cuda.toString(), nvrtc.toString());
        assertTrue(k.canCompile());
        assertEquals(13000, k.compilerVersion());
        CompiledCode ok = k.compile("kernel fill 8\n", "fill.cu", Map.of("stdint.h", "// shim"), List.of("-arch=sm_90", "-DX=1"));
        assertTrue(ok.succeeded());
        assertEquals("kernel fill 8\n\0", new String(ok.ptx(), StandardCharsets.UTF_8));
        assertEquals("kernel fill 8\n\0", new String(ok.cubin(), StandardCharsets.UTF_8));
        CompiledCode ptxOnly = k.compile("kernel fill 8\n", "fill.cu", Map.of(), List.of("-arch=compute_90"));
        assertNull(ptxOnly.cubin(), "a virtual architecture gives PTX only");
        List<String> log = Files.readAllLines(Path.of(nvrtc + ".log"));
        assertTrue(log.contains("nvrtcCreateProgram name=fill.cu headers=stdint.h"), log.toString());
        assertTrue(log.contains("nvrtcCompileProgram options=-arch=sm_90 -DX=1"), log.toString());
        CompiledCode broken = k.compile("#error missing semicolon\n", "broken.cu", Map.of(), List.of());
        assertFalse(broken.succeeded());
        assertEquals("kernel.cu(1): error: missing semicolon", broken.log());
        assertNull(broken.ptx());
    }

    @Test
    void missingLibrariesAreNamed() {
        UnsupportedFeatureException noDriver = assertThrows(UnsupportedFeatureException.class,
                () -> NcclKernels.open(dir.resolve("libcuda-absent.so").toString(), nvrtc.toString()));
        assertTrue(noDriver.getMessage().contains("libcuda-absent.so"), noDriver.getMessage());
        NcclKernels noCompiler = NcclKernels.open(cuda.toString(), dir.resolve("libnvrtc-absent.so").toString());
        assertFalse(noCompiler.canCompile());
        assertTrue(noCompiler.compilerProblem().contains("libnvrtc-absent.so"), noCompiler.compilerProblem());
        assertThrows(UnsupportedFeatureException.class, () -> noCompiler.compile("x", "x.cu", Map.of(), List.of()));
    }

    @Test
    void hipLoadsAModuleOnEachDeviceAtItsFirstLaunchThere() throws Exception {
        HipKernels k = HipKernels.open(hip.toString(), hiprtc.toString());
        long image = k.loadImage("kernel fill 8 4\n\0".getBytes(StandardCharsets.UTF_8));
        long fill = k.kernel(image, "fill");
        assertNull(k.parameterSizes(fill), "HIP cannot tell parameter sizes: unchecked, not guessed");
        assertEquals(1024, k.maxThreadsPerBlock(fill, 1), "before the module is on the device: AMD's maximum");
        NcclDriver driver = v229.open();
        DriverStream stream = driver.createStream(1);
        byte[] args = new byte[16];
        args[8] = 0x44;
        k.launch(fill, new int[] {1, 1, 1, 64, 1, 1}, 0, stream, args, new int[] {0, 8});
        k.launch(fill, new int[] {1, 1, 1, 64, 1, 1}, 0, stream, args, new int[] {0, 8});
        List<String> log = Files.readAllLines(Path.of(hip + ".log"));
        assertEquals(1, log.stream().filter(l -> l.startsWith("hipModuleLoadData")).count(), "loaded once on device 1");
        String launch = log.stream().filter(l -> l.startsWith("hipModuleLaunchKernel")).findFirst().orElseThrow();
        assertEquals("0000000000000000,44000000", field(launch, "params"));
        assertEquals(256, k.maxThreadsPerBlock(fill, 1), "once loaded: the function's own limit");
        long missing = k.kernel(image, "nope");
        assertThrows(InvalidArgumentException.class, () -> k.launch(missing, new int[] {1, 1, 1, 1, 1, 1}, 0, stream, args, new int[] {0}));
        k.unloadImage(image);
        assertTrue(Files.readAllLines(Path.of(hip + ".log")).stream().anyMatch(l -> l.startsWith("hipModuleUnload")));
        assertThrows(InvalidArgumentException.class, () -> k.kernel(image, "fill"));

        CompiledCode code = k.compile("kernel fill 8\n", "fill.hip", Map.of(), List.of("-std=c++17"));
        assertTrue(code.succeeded());
        assertNull(code.ptx(), "hipRTC makes a code object, no PTX");
        assertEquals("kernel fill 8\n\0", new String(code.cubin(), StandardCharsets.UTF_8));
        assertTrue(Files.readAllLines(Path.of(hiprtc + ".log")).contains("hiprtcCompileProgram options=-std=c++17"));
    }

    static org.jccl.core.spi.DeviceCommSupport dev(DriverComm c) {
        return java.util.Objects.requireNonNull(c.capability(org.jccl.core.spi.DeviceCommSupport.class));
    }
}
