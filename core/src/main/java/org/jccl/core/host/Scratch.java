package org.jccl.core.host;

/**
 * Per-thread primitive arrays the reduction kernels load blocks into (bulk copies, then loops the JIT vectorizes).
 * One per stream thread, made on first use: the data path allocates nothing afterwards.
 */
final class Scratch {
    /** Elements per block: small enough that a block of every array stays in the L2 cache. */
    static final int BLOCK = 16384;
    private static final ThreadLocal<Scratch> PER_THREAD = ThreadLocal.withInitial(Scratch::new);

    final float[] floatAcc = new float[BLOCK];
    final float[] floatIn = new float[BLOCK];
    final float[] floatOut = new float[BLOCK];
    final double[] doubleAcc = new double[BLOCK];
    final double[] doubleIn = new double[BLOCK];
    final double[] doubleOut = new double[BLOCK];
    final long[] longAcc = new long[BLOCK];
    final long[] longIn = new long[BLOCK];
    final long[] longOut = new long[BLOCK];
    final int[] ints = new int[BLOCK];
    final short[] shorts = new short[BLOCK];
    final byte[] bytes = new byte[BLOCK];

    static Scratch get() {
        return PER_THREAD.get();
    }
}
