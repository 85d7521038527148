package org.jccl.core.error;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;

import org.junit.jupiter.api.Test;

/** Every ncclResult_t maps to its typed exception, carrying the codes and texts, and keeps its type per work. */
class ErrorsTest {
    @Test
    void everyResultCodeHasItsType() {
        assertInstanceOf(GpuRuntimeException.class, Errors.fromResult("x", Errors.UNHANDLED_CUDA_ERROR, null, null, null));
        assertInstanceOf(SystemErrorException.class, Errors.fromResult("x", Errors.SYSTEM_ERROR, null, null, null));
        assertInstanceOf(InternalErrorException.class, Errors.fromResult("x", Errors.INTERNAL_ERROR, null, null, null));
        assertInstanceOf(InvalidArgumentException.class, Errors.fromResult("x", Errors.INVALID_ARGUMENT, null, null, null));
        assertInstanceOf(InvalidUsageException.class, Errors.fromResult("x", Errors.INVALID_USAGE, null, null, null));
        assertInstanceOf(RemoteErrorException.class, Errors.fromResult("x", Errors.REMOTE_ERROR, null, null, null));
        assertEquals(JcclException.class, Errors.fromResult("x", 42, null, null, null).getClass());
    }

    @Test
    void theMessageCarriesWorkCodeLibraryTextAndLastError() {
        JcclException e = Errors.fromResult("ncclAllReduce", Errors.REMOTE_ERROR, "remote process exited",
                "NET/Socket : peer 10 closed", "[comm=3f2a rank=1/2] allReduce(seq=17, count=8, float32, sum)");
        assertEquals("[comm=3f2a rank=1/2] allReduce(seq=17, count=8, float32, sum): ncclAllReduce failed: ncclRemoteError"
                + " (code 6, remote process exited) — last error: NET/Socket : peer 10 closed", e.getMessage());
        assertEquals(6, e.resultCode());
        assertEquals("remote process exited", e.libraryMessage());
        assertEquals("NET/Socket : peer 10 closed", e.lastError());
    }

    @Test
    void forWorkKeepsTypeCodesAndCauseAndNamesTheWork() {
        JcclException base = Errors.fromResult("async error", Errors.REMOTE_ERROR, "peer gone", "socket closed", null);
        JcclException forWork = Errors.forWork(base, "[comm=1 rank=0/2] send(seq=3, count=4, float32, peer=1)");
        assertInstanceOf(RemoteErrorException.class, forWork);
        assertSame(base, forWork.getCause());
        assertEquals(6, forWork.resultCode());
        assertEquals("[comm=1 rank=0/2] send(seq=3, count=4, float32, peer=1): async error failed: ncclRemoteError"
                + " (code 6, peer gone) — last error: socket closed", forWork.getMessage());
        UnsupportedFeatureException missing = new UnsupportedFeatureException("ncclCommShrink", "libnccl.so.2", "2.26.2", "2.27.0");
        assertSame(missing, Errors.forWork(missing, "w"));
        assertEquals("ncclCommShrink is not available in libnccl.so.2 (version 2.26.2); it first appears in 2.27.0", missing.getMessage());
    }
}
