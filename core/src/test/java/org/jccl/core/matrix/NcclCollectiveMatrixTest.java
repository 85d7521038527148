package org.jccl.core.matrix;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jccl.core.spi.Feature;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Jccl;
import org.jccl.core.OpKind;
import org.junit.jupiter.api.Tag;

/**
 * The collective matrix on NCCL over all GPUs of the machine. NCCL reduces in another order than the reference,
 * so floating results get a tolerance of a few units in the last place of each type; integers stay exact.
 * RCCL-only operations are skipped when the library lacks them.
 */
@Tag("gpu")
class NcclCollectiveMatrixTest extends CollectiveMatrixSuite {
    private static Backend backend() {
        return Jccl.backend(BackendKind.NCCL);
    }

    @Override
    protected int[] rankCounts() {
        return new int[] {backend().deviceCount()};
    }

    @Override
    protected List<Communicator> openCommunicators(int n) throws Exception {
        int[] devices = new int[n];
        for (int i = 0; i < n; i++) devices[i] = i;
        return backend().initAll(devices, org.jccl.core.CommOptions.defaults()).get(120, TimeUnit.SECONDS);
    }

    @Override
    protected boolean supports(OpKind kind) {
        return switch (kind) {
            case ALL_TO_ALL_V -> backend().features().has(Feature.ALL_TO_ALL_V);
            case ALL_REDUCE_WITH_BIAS -> backend().features().has(Feature.ALL_REDUCE_WITH_BIAS);
            default -> true;
        };
    }

    @Override
    protected double tolerance(DataType type) {
        return switch (type) {
            case FLOAT32 -> 1e-5;
            case FLOAT64 -> 1e-12;
            case FLOAT16 -> 4e-3;
            case BFLOAT16 -> 3e-2;
            case FLOAT8_E4M3 -> 0.25;
            case FLOAT8_E5M2 -> 0.5;
            default -> 0;
        };
    }
}
