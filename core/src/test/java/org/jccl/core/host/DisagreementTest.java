package org.jccl.core.host;

import static org.jccl.core.host.HostTesting.failure;
import static org.jccl.core.host.HostTesting.host;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.ReduceOp;
import org.jccl.core.Work;
import org.jccl.core.error.InvalidUsageException;
import org.junit.jupiter.api.Test;

/**
 * Ranks that issue different operations: every rank learns what happened — the ranks disagree, a usage error —
 * not only the one that noticed (the others used to read "remote process exited or there was a network error").
 */
class DisagreementTest {
    @Test
    void everyRankOfAMismatchedCollectiveReportsTheDisagreement() throws Exception {
        List<Communicator> c = host().initAll(3).get(30, TimeUnit.SECONDS);
        Buffer b = host().allocate(0, 256);
        try {
            Work[] w = {
                c.get(0).allReduce(b, b, 4, DataType.FLOAT32, ReduceOp.SUM),
                c.get(1).allReduce(b, b, 8, DataType.FLOAT32, ReduceOp.SUM),
                c.get(2).allReduce(b, b, 4, DataType.FLOAT32, ReduceOp.SUM)};
            for (Work work : w) {
                Throwable e = failure(work);
                assertInstanceOf(InvalidUsageException.class, e, String.valueOf(e));
                assertTrue(e.getMessage().contains("ranks disagree"), e.getMessage());
            }
        } finally {
            for (Communicator comm : c) comm.abort();
            b.close();
        }
    }
}
