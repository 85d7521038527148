package org.jccl.core.nccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.jccl.core.BackendKind;
import org.jccl.core.config.JcclSettings;
import org.jccl.core.error.LibraryUnavailableException;
import org.jccl.core.spi.Driver;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Loading the libraries: every candidate tried, the loader's reason reported, the settings honoured. */
class LibraryLoadingTest {
    @TempDir
    Path dir;

    @Test
    void aMissingRuntimeNamesEveryFileTriedAndWhy() {
        String a = dir.resolve("libcudart-a.so").toString();
        String b = dir.resolve("libcudart-b.so").toString();
        LibraryUnavailableException e = assertThrows(LibraryUnavailableException.class,
                () -> NcclDriver.open(BackendKind.NCCL, "libnccl.so.2", a + ":" + b));
        assertTrue(e.getMessage().contains(a + ": cannot open shared object file"), e.getMessage());
        assertTrue(!e.getMessage().contains(a + ": " + a), "each file is named once: " + e.getMessage());
        assertTrue(e.getMessage().contains(b + ": "), e.getMessage());
    }

    @Test
    void aMissingCollectiveLibraryIsReportedLikewise() {
        StubLibraries stubs = StubLibraries.build(dir, 22809, false);
        String missing = dir.resolve("librccl-missing.so").toString();
        LibraryUnavailableException e = assertThrows(LibraryUnavailableException.class,
                () -> NcclDriver.open(BackendKind.RCCL, missing, stubs.cudart.toString()));
        assertTrue(e.getMessage().contains(missing + ": cannot open shared object file"), e.getMessage());
        assertTrue(!e.getMessage().contains(missing + ": " + missing), "each file is named once: " + e.getMessage());
    }

    @Test
    void aLibraryWithoutTheCoreFunctionsIsNotUsable() {
        StubLibraries stubs = StubLibraries.build(dir, 22809, false);
        // The runtime stub as the collective library: it loads, but has no nccl* function.
        LibraryUnavailableException e = assertThrows(LibraryUnavailableException.class,
                () -> NcclDriver.open(BackendKind.NCCL, stubs.cudart.toString(), stubs.cudart.toString()));
        assertTrue(e.getMessage().contains("lacks ncclGetVersion"), e.getMessage());
    }

    @Test
    void theProviderFollowsTheSettingsAndTriesCandidatesInOrder() {
        StubLibraries stubs = StubLibraries.build(dir, 22809, false);
        System.setProperty(JcclSettings.NCCL_LIBRARY.property(), dir.resolve("nope.so") + ":" + stubs.nccl);
        System.setProperty(JcclSettings.CUDA_RUNTIME.property(), stubs.cudart.toString());
        try {
            Driver driver = new NcclDriverProvider().open();
            assertEquals(BackendKind.NCCL, driver.kind());
            assertEquals(stubs.nccl.toString(), driver.features().library());
            assertEquals(2, driver.deviceCount());
        } finally {
            System.clearProperty(JcclSettings.NCCL_LIBRARY.property());
            System.clearProperty(JcclSettings.CUDA_RUNTIME.property());
        }
    }

    @Test
    void theRcclProviderUsesHipNames() {
        StubLibraries stubs = StubLibraries.build(dir, 22809, false);
        System.setProperty(JcclSettings.RCCL_LIBRARY.property(), stubs.nccl.toString());
        System.setProperty(JcclSettings.HIP_RUNTIME.property(), stubs.cudart.toString());
        try {
            Driver driver = new RcclDriverProvider().open();
            assertEquals(BackendKind.RCCL, driver.kind());
            // The CUDA-named stub has no hipGetDeviceCount: the HIP table looked up HIP's names.
            assertEquals(0, driver.deviceCount());
            assertTrue(driver.describe().startsWith("RCCL 2.28.9"), driver.describe());
        } finally {
            System.clearProperty(JcclSettings.RCCL_LIBRARY.property());
            System.clearProperty(JcclSettings.HIP_RUNTIME.property());
        }
    }
}
