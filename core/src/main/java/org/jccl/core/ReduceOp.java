package org.jccl.core;

/**
 * A reduction. The five built-ins are shared constants; a {@link PreMulSum} is created per communicator and data
 * type and must be closed (it is {@code ncclRedOpCreatePreMulSum}'s op).
 */
public sealed class ReduceOp permits PreMulSum {
    public static final ReduceOp SUM = new ReduceOp(0, "sum");
    public static final ReduceOp PROD = new ReduceOp(1, "prod");
    public static final ReduceOp MAX = new ReduceOp(2, "max");
    public static final ReduceOp MIN = new ReduceOp(3, "min");
    /** Sum divided by the number of ranks (floats: each input scaled by 1/n then summed; integers: sum, then divided, truncating). */
    public static final ReduceOp AVG = new ReduceOp(4, "avg");

    private static final ReduceOp[] BUILT_IN = {SUM, PROD, MAX, MIN, AVG};

    private final int code;
    private final String label;

    ReduceOp(int code, String label) {
        this.code = code;
        this.label = label;
    }

    /** The {@code ncclRedOp_t} value passed to the library. */
    public int code() {
        return code;
    }

    /** The built-in reductions, in code order. */
    public static ReduceOp[] builtIn() {
        return BUILT_IN.clone();
    }

    @Override
    public String toString() {
        return label;
    }
}
