package org.jccl.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The NVRTC-ready copy of NCCL's headers: only loadConst's width branches change, the installed files never. */
class NcclHeadersTest {
    static final String LOAD_CONST = """
            template<typename T> T loadConst(T const *p) {
              if (alignof(T) == 1) { union { uint8_t part[sizeof(T)]; T ret; }; return ret; }
              else if (alignof(T) == 16) { return *p; }
              if (sizeof(T) == 8) return *p;
            }
            """;

    @TempDir
    Path dir;

    @Test
    void theWidthBranchesBecomeConstexprAndNothingElse() {
        String adapted = NcclHeaders.adapt(LOAD_CONST);
        assertTrue(adapted.contains("if constexpr (alignof(T) == 1)"));
        assertTrue(adapted.contains("else if constexpr (alignof(T) == 16)"));
        assertTrue(adapted.contains("if (sizeof(T) == 8)"), "other conditions stay as they are");
    }

    @Test
    void aCopyIsMadeOnceAndTheOriginalIsUntouched() throws Exception {
        Path include = Files.createDirectories(dir.resolve("include/nccl_device"));
        Files.writeString(include.resolve("utility.h"), LOAD_CONST);
        Files.writeString(dir.resolve("include/nccl_device.h"), "#include \"nccl_device/utility.h\"\n");
        Files.writeString(dir.resolve("include/other.h"), "not NCCL's\n");
        Path cache = Files.createDirectories(dir.resolve("cache"));
        Path copy = NcclHeaders.compilable(dir.resolve("include"), cache);
        assertTrue(Files.readString(copy.resolve("nccl_device/utility.h")).contains("if constexpr"));
        assertTrue(Files.exists(copy.resolve("nccl_device.h")));
        assertFalse(Files.exists(copy.resolve("other.h")), "only NCCL's headers are copied");
        assertEquals(LOAD_CONST, Files.readString(include.resolve("utility.h")));
        assertEquals(copy, NcclHeaders.compilable(dir.resolve("include"), cache), "made once");
    }

    @Test
    void headersAreFoundBesideTheLibraryUnlessConfigured() throws Exception {
        Path lib = Files.createDirectories(dir.resolve("nccl/lib"));
        Files.createDirectories(dir.resolve("nccl/include"));
        Files.writeString(dir.resolve("nccl/include/nccl_device.h"), "");
        String library = lib.resolve("libnccl.so.2").toString();
        assertEquals(dir.resolve("nccl/include"), NcclHeaders.find("", library));
        assertEquals(Path.of("/elsewhere"), NcclHeaders.find("/elsewhere", library));
        Files.delete(dir.resolve("nccl/include/nccl_device.h"));
        if (!Files.exists(Path.of("/usr/include/nccl_device.h")) && !Files.exists(Path.of("/usr/local/include/nccl_device.h"))) {
            assertNull(NcclHeaders.find("", library), "no headers: none claimed");
        }
    }
}
