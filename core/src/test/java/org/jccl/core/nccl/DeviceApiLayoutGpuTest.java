package org.jccl.core.nccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.jccl.core.BackendKind;
import org.jccl.core.spi.CommProperties;
import org.jccl.core.spi.DevCommRequirements;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * jccl's device-API structures against the loaded NCCL's real headers, both ways: requirements jccl encodes are read
 * back by a program compiled with nvcc against {@code nccl_device.h}, and a device communicator and properties that
 * program fills are decoded by jccl. Headers from {@code NCCL_INCLUDE_DIR} or {@code $NCCL_LIB_DIR/../include}.
 */
@Tag("gpu")
class DeviceApiLayoutGpuTest {
    @TempDir
    Path dir;

    @Test
    void requirementsDeviceCommunicatorAndPropertiesMatchTheHeaders() throws Exception {
        Path include = ConfigLayoutGpuTest.includeDir();
        assumeTrue(Files.exists(include.resolve("nccl_device.h")), "no nccl_device.h in " + include + " (NCCL before 2.28)");
        Path nvcc = Paths.get(System.getenv().getOrDefault("CUDA_HOME", "/usr/local/cuda"), "bin", "nvcc");
        assumeTrue(Files.isExecutable(nvcc), "no nvcc at " + nvcc);
        NcclDriver driver = NcclDriver.open(BackendKind.NCCL);
        int version = driver.version();

        DevCommRequirements wanted = new DevCommRequirements(true, 11, 12, 13, 14, 15, true, 16, 17, 18,
                DeviceApiLayout.versioned(version) ? 2 : 0, DeviceApiLayout.versioned(version), DeviceApiLayout.versioned(version) ? 19 : 0);
        Path requirements = dir.resolve("requirements.bin");
        Files.write(requirements, DeviceApiLayout.requirements(wanted, version, "NCCL"));
        Path source = dir.resolve("layout.cu");
        try (InputStream in = DeviceApiLayoutGpuTest.class.getResourceAsStream("nccl_device_layout.cu")) {
            Files.write(source, in.readAllBytes());
        }
        Path program = dir.resolve("layout");
        StubLibraries.compile(List.of(nvcc.toString(), "-I" + include, "-o", program.toString(), source.toString()));
        Path devComm = dir.resolve("devcomm.bin");
        Path properties = dir.resolve("properties.bin");
        Process p = new ProcessBuilder(program.toString(), requirements.toString(), devComm.toString(), properties.toString())
                .redirectErrorStream(true).start();
        String output;
        try (InputStream in = p.getInputStream()) {
            output = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        Map<String, Long> real = new HashMap<>();
        for (String line : output.split("\n")) {
            String[] kv = line.trim().split(" ");
            if (kv.length == 2) real.put(kv[0], Long.parseLong(kv[1]));
        }
        assertEquals((long) version, real.get("version"), "the headers describe the loaded library: " + output);

        assertEquals(1L, real.get("lsaMultimem"), output);
        assertEquals(11L, real.get("barrierCount"), output);
        assertEquals(12L, real.get("lsaBarrierCount"), output);
        assertEquals(13L, real.get("railGinBarrierCount"), output);
        assertEquals(14L, real.get("lsaLLA2ABlockCount"), output);
        assertEquals(15L, real.get("lsaLLA2ASlotCount"), output);
        assertEquals(1L, real.get("ginForceEnable"), output);
        assertEquals(16L, real.get("ginContextCount"), output);
        assertEquals(17L, real.get("ginSignalCount"), output);
        assertEquals(18L, real.get("ginCounterCount"), output);
        assertEquals((long) DeviceApiLayout.requirements(wanted, version, "NCCL").length, real.get("requirementsSize"), output);
        if (DeviceApiLayout.versioned(version)) {
            assertEquals(88L, real.get("requirementsSizeField"), output);
            assertEquals(2L, real.get("ginConnectionType"), output);
            assertEquals(1L, real.get("ginExclusiveContexts"), output);
            assertEquals(19L, real.get("ginQueueDepth"), output);
        }

        byte[] filled = Files.readAllBytes(devComm);
        assertEquals(DeviceApiLayout.devCommBytes(version), filled.length, "sizeof(ncclDevComm)");
        var fields = DeviceApiLayout.devCommFields(ByteBuffer.wrap(filled), version);
        assertEquals(new DeviceApiLayout.DevCommFields(3, 8, 1, 4, 2, 5, 6), fields);

        if (DeviceApiLayout.versioned(version)) {
            byte[] props = Files.readAllBytes(properties);
            assertEquals(DeviceApiLayout.PROPERTIES_BYTES, props.length, "sizeof(ncclCommProperties_t)");
            assertEquals(new CommProperties(3, 8, 1, 2, true, false, 2, 5, true, 3), DeviceApiLayout.properties(props));
        }
    }
}
