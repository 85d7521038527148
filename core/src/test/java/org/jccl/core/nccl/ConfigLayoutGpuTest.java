package org.jccl.core.nccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.jccl.core.BackendKind;
import org.jccl.core.ConfigField;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * jccl's ncclConfig_t layout against the machine's real nccl.h ({@code NCCL_INCLUDE_DIR}, or
 * {@code $NCCL_LIB_DIR/../include}), for the version of the library that is loaded.
 */
@Tag("gpu")
class ConfigLayoutGpuTest {
    @TempDir
    Path dir;

    @Test
    void everyMemberSitsWhereTheRealHeaderPutsIt() throws Exception {
        Path include = includeDir();
        assertTrue(Files.exists(include.resolve("nccl.h")), "no nccl.h in " + include);
        Path shim = Files.createDirectory(dir.resolve("shim"));
        Files.writeString(shim.resolve("cuda_runtime.h"), "typedef struct CUstream_st* cudaStream_t;\n#define CUDART_VERSION 13000\n");
        Files.writeString(shim.resolve("cuda_fp16.h"), "\n");
        Files.writeString(shim.resolve("cuda_bf16.h"), "\n");

        StringBuilder members = new StringBuilder();
        for (ConfigField f : ConfigField.values()) {
            members.append("#if NCCL_VERSION_CODE >= ").append(f.sinceVersion()).append('\n')
                    .append("    printf(\"").append(f.cName()).append(" %zu\\n\", offsetof(ncclConfig_t, ").append(f.cName()).append("));\n")
                    .append("#endif\n");
        }
        // From the test class path, so the test runs from any working directory (the GPU machine runs it from the root).
        String template;
        try (InputStream in = ConfigLayoutGpuTest.class.getResourceAsStream("nccl_config_layout.c.in")) {
            assertNotNull(in, "nccl_config_layout.c.in is not on the test class path");
            template = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        Path source = dir.resolve("layout.c");
        Files.writeString(source, template.replace("@MEMBERS@", members));
        Path program = dir.resolve("layout");
        String compiler = Files.isExecutable(Paths.get("/usr/bin/gcc")) ? "gcc" : "cc";
        StubLibraries.compile(List.of(compiler, "-I" + shim, "-I" + include, "-o", program.toString(), source.toString()));

        Map<String, Integer> real = new HashMap<>();
        Process p = new ProcessBuilder(program.toString()).redirectErrorStream(true).start();
        String output;
        try (InputStream in = p.getInputStream()) {
            output = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        for (String line : output.split("\n")) {
            String[] kv = line.trim().split(" ");
            if (kv.length == 2) real.put(kv[0], Integer.parseInt(kv[1]));
        }
        int headerVersion = real.get("version");
        NcclDriver driver = NcclDriver.open(BackendKind.NCCL);
        assertEquals(headerVersion, driver.version(), "the header beside the library describes the loaded version");

        int checked = 0;
        for (ConfigField f : ConfigField.values()) {
            if (f.sinceVersion() > headerVersion) {
                continue;
            }
            assertEquals(real.get(f.cName()), ConfigLayout.offsetOf(f), "offset of " + f.cName() + " in " + output);
            checked++;
        }
        assertFalse(checked == 0);
        int declared = ConfigLayout.declaredVersion(headerVersion);
        assertTrue(ConfigLayout.sizeFor(declared) <= real.get("size"),
                "jccl never claims more than sizeof(ncclConfig_t) = " + real.get("size") + ": " + ConfigLayout.sizeFor(declared));
    }

    /** The loaded NCCL's headers: {@code NCCL_INCLUDE_DIR}, else {@code $NCCL_LIB_DIR/../include}. */
    static Path includeDir() {
        String include = System.getenv("NCCL_INCLUDE_DIR");
        if (include != null && !include.isBlank()) return Paths.get(include);
        String lib = System.getenv("NCCL_LIB_DIR");
        assertTrue(lib != null && !lib.isBlank(), "set NCCL_INCLUDE_DIR or NCCL_LIB_DIR");
        return Paths.get(lib).resolve("..").resolve("include").normalize();
    }
}
