package org.jccl.core.nccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.jccl.core.config.JcclSettings;
import org.jccl.core.error.InvalidArgumentException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code jccl.nccl.env.*}: set in the C environment before the (stub) NCCL is loaded, and checked. */
class NcclEnvironmentTest {
    private static final String PROBE = JcclSettings.NCCL_ENV_PREFIX + "NCCL_JCCL_STUB_PROBE";
    private static final String BAD = JcclSettings.NCCL_ENV_PREFIX + "PATH";

    @AfterEach
    void clearProperties() {
        System.clearProperty(PROBE);
        System.clearProperty(BAD);
    }

    @Test
    void aPropertySetsTheVariableBeforeTheLibraryLoads(@TempDir Path dir) {
        String value = "set-from-java-" + System.nanoTime();
        System.setProperty(PROBE, value);
        StubLibraries stubs = StubLibraries.build(dir, 22809, false);
        stubs.open();
        // The stub's load-time constructor read it: the variable was there before dlopen.
        List<String> calls = stubs.ncclCalls();
        assertTrue(calls.contains("loaded with NCCL_JCCL_STUB_PROBE=" + value), calls.toString());
        assertEquals(value, NativeApi.jn_getenv("NCCL_JCCL_STUB_PROBE"));
        assertEquals(Map.of("NCCL_JCCL_STUB_PROBE", value), JcclSettings.ncclEnvironment());
    }

    @Test
    void aNameThatIsNoNcclVariableIsRefusedNamingTheProperty() {
        System.setProperty(BAD, "/nowhere");
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, NcclEnvironment::apply);
        assertTrue(e.getMessage().contains(BAD) && e.getMessage().contains("not an NCCL_* or RCCL_* variable"),
                e.getMessage());
        assertTrue(!"/nowhere".equals(NativeApi.jn_getenv("PATH")), "PATH unchanged");
    }
}
