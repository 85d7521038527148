package org.jccl.core.host;

import java.nio.ByteBuffer;
import org.jccl.core.DataType;
import org.jspecify.annotations.Nullable;

/**
 * The reduction kernels: reduce a range of elements across the ranks' source buffers, in the order
 * {@link Reduction} documents, and write the result (optionally combined with a per-destination bias) to any
 * number of destinations. Works block by block through {@link Scratch}, reading every source block before
 * writing any destination, so a destination may coincide with a source (in-place forms).
 */
final class Reducer {
    private Reducer() {
    }

    /**
     * @param type      the element type
     * @param r         each source rank's reduction (PreMulSum scalars are per rank)
     * @param nranks    the communicator size ({@code avg} divides by it)
     * @param srcs      one source per rank, in rank order
     * @param srcOff    each source's byte offset
     * @param ndst      how many destinations
     * @param dsts      the destinations
     * @param dstOff    each destination's byte offset
     * @param biases    per destination, a bias combined with the result, or null
     * @param biasOff   each bias's byte offset
     * @param count     elements to reduce
     */
    static void reduce(DataType type, Reduction[] r, int nranks, HostMemoryBlock[] srcs, int[] srcOff, int ndst,
                       HostMemoryBlock[] dsts, int[] dstOff, HostMemoryBlock @Nullable [] biases, int[] biasOff,
                       long count) {
        Scratch s = Scratch.get();
        for (long done = 0; done < count; done += Scratch.BLOCK) {
            int len = (int) Math.min(Scratch.BLOCK, count - done);
            int shift = (int) (done * type.size());
            switch (type) {
                case FLOAT32 -> floatBlock(r, nranks, srcs, srcOff, ndst, dsts, dstOff, biases, biasOff, shift, len, s);
                case FLOAT64, FLOAT16, BFLOAT16, FLOAT8_E4M3, FLOAT8_E5M2 ->
                        doubleBlock(type, r, nranks, srcs, srcOff, ndst, dsts, dstOff, biases, biasOff, shift, len, s);
                default -> longBlock(type, r, nranks, srcs, srcOff, ndst, dsts, dstOff, biases, biasOff, shift, len, s);
            }
        }
    }

    // ---- float32: float arithmetic, the hot path

    private static void floatBlock(Reduction[] r, int nranks, HostMemoryBlock[] srcs, int[] srcOff, int ndst,
                                   HostMemoryBlock[] dsts, int[] dstOff, HostMemoryBlock @Nullable [] biases,
                                   int[] biasOff, int shift, int len, Scratch s) {
        float[] acc = s.floatAcc;
        float[] in = s.floatIn;
        Reduction.Kind k = r[0].kind();
        boolean pre = k == Reduction.Kind.PREMUL_SUM || k == Reduction.Kind.AVG;
        float scalar = pre ? (float) scalar(r[0], DataType.FLOAT32, nranks) : 0f;
        loadFloats(srcs[0], srcOff[0] + shift, acc, len);
        if (pre) for (int i = 0; i < len; i++) acc[i] = acc[i] * scalar;
        for (int j = 1; j < srcs.length; j++) {
            loadFloats(srcs[j], srcOff[j] + shift, in, len);
            if (pre) scalar = (float) scalar(r[j], DataType.FLOAT32, nranks);
            if (k == Reduction.Kind.SUM && j + 1 < srcs.length) {
                // Two ranks per pass, same order: (acc + x[j]) + x[j+1], one pass over acc fewer.
                float[] next = s.floatOut;
                j++;
                loadFloats(srcs[j], srcOff[j] + shift, next, len);
                for (int i = 0; i < len; i++) acc[i] = acc[i] + in[i] + next[i];
                continue;
            }
            switch (k) {
                case SUM -> { for (int i = 0; i < len; i++) acc[i] += in[i]; }
                case PROD -> { for (int i = 0; i < len; i++) acc[i] *= in[i]; }
                case MAX -> { for (int i = 0; i < len; i++) acc[i] = Math.max(acc[i], in[i]); }
                case MIN -> { for (int i = 0; i < len; i++) acc[i] = Math.min(acc[i], in[i]); }
                default -> { for (int i = 0; i < len; i++) acc[i] += in[i] * scalar; }
            }
        }
        for (int d = 0; d < ndst; d++) {
            float[] result = acc;
            if (biases != null) {
                result = s.floatOut;
                loadFloats(biases[d], biasOff[d] + shift, in, len);
                switch (k) {
                    case PROD -> { for (int i = 0; i < len; i++) result[i] = acc[i] * in[i]; }
                    case MAX -> { for (int i = 0; i < len; i++) result[i] = Math.max(acc[i], in[i]); }
                    case MIN -> { for (int i = 0; i < len; i++) result[i] = Math.min(acc[i], in[i]); }
                    default -> { for (int i = 0; i < len; i++) result[i] = acc[i] + in[i]; }
                }
            }
            storeFloats(dsts[d], dstOff[d] + shift, result, len);
        }
    }

    private static void loadFloats(HostMemoryBlock b, int byteOffset, float[] to, int len) {
        if ((byteOffset & 3) == 0) {
            b.floats().get(byteOffset >> 2, to, 0, len);
        } else {
            ByteBuffer bytes = b.bytes();
            for (int i = 0; i < len; i++) to[i] = bytes.getFloat(byteOffset + 4 * i);
        }
    }

    private static void storeFloats(HostMemoryBlock b, int byteOffset, float[] from, int len) {
        if ((byteOffset & 3) == 0) {
            b.floats().put(byteOffset >> 2, from, 0, len);
        } else {
            ByteBuffer bytes = b.bytes();
            for (int i = 0; i < len; i++) bytes.putFloat(byteOffset + 4 * i, from[i]);
        }
    }

    // ---- float64 and the small float formats: double arithmetic, rounded to the type after each operation

    private static void doubleBlock(DataType type, Reduction[] r, int nranks, HostMemoryBlock[] srcs, int[] srcOff,
                                    int ndst, HostMemoryBlock[] dsts, int[] dstOff,
                                    HostMemoryBlock @Nullable [] biases, int[] biasOff, int shift, int len, Scratch s) {
        MiniFloat f = mini(type);
        double[] acc = s.doubleAcc;
        double[] in = s.doubleIn;
        Reduction.Kind k = r[0].kind();
        boolean pre = k == Reduction.Kind.PREMUL_SUM || k == Reduction.Kind.AVG;
        double scalar = pre ? round(f, scalar(r[0], type, nranks)) : 0;
        loadDoubles(type, srcs[0], srcOff[0] + shift, acc, len, s);
        if (pre) for (int i = 0; i < len; i++) acc[i] = round(f, acc[i] * scalar);
        for (int j = 1; j < srcs.length; j++) {
            loadDoubles(type, srcs[j], srcOff[j] + shift, in, len, s);
            if (pre) scalar = round(f, scalar(r[j], type, nranks));
            if (f == null) {
                switch (k) {
                    case SUM -> { for (int i = 0; i < len; i++) acc[i] += in[i]; }
                    case PROD -> { for (int i = 0; i < len; i++) acc[i] *= in[i]; }
                    case MAX -> { for (int i = 0; i < len; i++) acc[i] = Math.max(acc[i], in[i]); }
                    case MIN -> { for (int i = 0; i < len; i++) acc[i] = Math.min(acc[i], in[i]); }
                    default -> { for (int i = 0; i < len; i++) acc[i] += in[i] * scalar; }
                }
            } else {
                for (int i = 0; i < len; i++) acc[i] = combineRounded(f, k, acc[i], in[i], scalar);
            }
        }
        for (int d = 0; d < ndst; d++) {
            double[] result = acc;
            if (biases != null) {
                result = s.doubleOut;
                loadDoubles(type, biases[d], biasOff[d] + shift, in, len, s);
                Reduction.Kind biasKind = (k == Reduction.Kind.AVG || k == Reduction.Kind.PREMUL_SUM) ? Reduction.Kind.SUM : k;
                for (int i = 0; i < len; i++) result[i] = combineRounded(f, biasKind, acc[i], in[i], 0);
            }
            storeDoubles(type, dsts[d], dstOff[d] + shift, result, len, s);
        }
    }

    /** One binary step; every intermediate is exact in double for these formats, then rounded once. */
    private static double combineRounded(@Nullable MiniFloat f, Reduction.Kind k, double a, double b, double scalar) {
        return switch (k) {
            case SUM -> round(f, a + b);
            case PROD -> round(f, a * b);
            case MAX -> Math.max(a, b);
            case MIN -> Math.min(a, b);
            default -> round(f, a + round(f, b * scalar));
        };
    }

    /** A floating source's pre-multiplier: its PreMulSum scalar, or 1/n for avg (rounded by the caller). */
    private static double scalar(Reduction r, DataType type, int nranks) {
        return r.kind() == Reduction.Kind.AVG ? 1.0 / nranks : r.scalar(type);
    }

    private static double round(@Nullable MiniFloat f, double v) {
        return f == null ? v : f.round(v);
    }

    static @Nullable MiniFloat mini(DataType type) {
        return switch (type) {
            case FLOAT16 -> MiniFloat.FLOAT16;
            case BFLOAT16 -> MiniFloat.BFLOAT16;
            case FLOAT8_E4M3 -> MiniFloat.E4M3;
            case FLOAT8_E5M2 -> MiniFloat.E5M2;
            default -> null;
        };
    }

    private static void loadDoubles(DataType type, HostMemoryBlock b, int off, double[] to, int len, Scratch s) {
        ByteBuffer bytes = b.bytes();
        switch (type) {
            case FLOAT64 -> {
                if ((off & 7) == 0) b.doubles().get(off >> 3, to, 0, len);
                else for (int i = 0; i < len; i++) to[i] = bytes.getDouble(off + 8 * i);
            }
            case FLOAT16, BFLOAT16 -> {
                MiniFloat f = mini(type);
                short[] raw = s.shorts;
                if ((off & 1) == 0) b.shorts().get(off >> 1, raw, 0, len);
                else for (int i = 0; i < len; i++) raw[i] = bytes.getShort(off + 2 * i);
                for (int i = 0; i < len; i++) to[i] = f.decode(raw[i]);
            }
            default -> {
                MiniFloat f = mini(type);
                byte[] raw = s.bytes;
                bytes.get(off, raw, 0, len);
                for (int i = 0; i < len; i++) to[i] = f.decode(raw[i]);
            }
        }
    }

    private static void storeDoubles(DataType type, HostMemoryBlock b, int off, double[] from, int len, Scratch s) {
        ByteBuffer bytes = b.bytes();
        switch (type) {
            case FLOAT64 -> {
                if ((off & 7) == 0) b.doubles().put(off >> 3, from, 0, len);
                else for (int i = 0; i < len; i++) bytes.putDouble(off + 8 * i, from[i]);
            }
            case FLOAT16, BFLOAT16 -> {
                MiniFloat f = mini(type);
                short[] raw = s.shorts;
                for (int i = 0; i < len; i++) raw[i] = (short) f.encode(from[i]);
                if ((off & 1) == 0) b.shorts().put(off >> 1, raw, 0, len);
                else for (int i = 0; i < len; i++) bytes.putShort(off + 2 * i, raw[i]);
            }
            default -> {
                MiniFloat f = mini(type);
                byte[] raw = s.bytes;
                for (int i = 0; i < len; i++) raw[i] = (byte) f.encode(from[i]);
                bytes.put(off, raw, 0, len);
            }
        }
    }

    // ---- integers: long arithmetic wrapped to the type's width after each operation

    private static void longBlock(DataType type, Reduction[] r, int nranks, HostMemoryBlock[] srcs, int[] srcOff,
                                  int ndst, HostMemoryBlock[] dsts, int[] dstOff, HostMemoryBlock @Nullable [] biases,
                                  int[] biasOff, int shift, int len, Scratch s) {
        long[] acc = s.longAcc;
        long[] in = s.longIn;
        Reduction.Kind k = r[0].kind();
        int width = 64 - 8 * type.size();
        boolean unsigned = type.isUnsigned();
        boolean unsigned64 = unsigned && type.size() == 8;
        long scalar = k == Reduction.Kind.PREMUL_SUM ? wrap(r[0].integerScalar(type), width, unsigned) : 0;
        loadLongs(type, srcs[0], srcOff[0] + shift, acc, len, s);
        if (k == Reduction.Kind.PREMUL_SUM) for (int i = 0; i < len; i++) acc[i] = wrap(acc[i] * scalar, width, unsigned);
        for (int j = 1; j < srcs.length; j++) {
            loadLongs(type, srcs[j], srcOff[j] + shift, in, len, s);
            if (k == Reduction.Kind.PREMUL_SUM) scalar = wrap(r[j].integerScalar(type), width, unsigned);
            for (int i = 0; i < len; i++) acc[i] = combineLong(k, acc[i], in[i], scalar, width, unsigned, unsigned64);
        }
        if (k == Reduction.Kind.AVG) {
            for (int i = 0; i < len; i++) acc[i] = unsigned64 ? Long.divideUnsigned(acc[i], nranks) : acc[i] / nranks;
        }
        for (int d = 0; d < ndst; d++) {
            long[] result = acc;
            if (biases != null) {
                result = s.longOut;
                loadLongs(type, biases[d], biasOff[d] + shift, in, len, s);
                Reduction.Kind biasKind = (k == Reduction.Kind.AVG || k == Reduction.Kind.PREMUL_SUM) ? Reduction.Kind.SUM : k;
                for (int i = 0; i < len; i++) result[i] = combineLong(biasKind, acc[i], in[i], 0, width, unsigned, unsigned64);
            }
            storeLongs(type, dsts[d], dstOff[d] + shift, result, len, s);
        }
    }

    private static long combineLong(Reduction.Kind k, long a, long b, long scalar, int width, boolean unsigned,
                                    boolean unsigned64) {
        return switch (k) {
            case SUM, AVG -> wrap(a + b, width, unsigned);
            case PROD -> wrap(a * b, width, unsigned);
            // Narrow values are kept sign- or zero-extended, so a signed long compare orders them right.
            case MAX -> (unsigned64 ? Long.compareUnsigned(a, b) >= 0 : a >= b) ? a : b;
            case MIN -> (unsigned64 ? Long.compareUnsigned(a, b) <= 0 : a <= b) ? a : b;
            case PREMUL_SUM -> wrap(a + wrap(b * scalar, width, unsigned), width, unsigned);
        };
    }

    /** Keeps the low {@code 64 - width} bits, sign- or zero-extended. */
    private static long wrap(long v, int width, boolean unsigned) {
        return unsigned ? (v << width) >>> width : (v << width) >> width;
    }

    private static void loadLongs(DataType type, HostMemoryBlock b, int off, long[] to, int len, Scratch s) {
        ByteBuffer bytes = b.bytes();
        switch (type) {
            case INT8, UINT8 -> {
                byte[] raw = s.bytes;
                bytes.get(off, raw, 0, len);
                if (type == DataType.UINT8) for (int i = 0; i < len; i++) to[i] = raw[i] & 0xff;
                else for (int i = 0; i < len; i++) to[i] = raw[i];
            }
            case INT32, UINT32 -> {
                int[] raw = s.ints;
                if ((off & 3) == 0) b.ints().get(off >> 2, raw, 0, len);
                else for (int i = 0; i < len; i++) raw[i] = bytes.getInt(off + 4 * i);
                if (type == DataType.UINT32) for (int i = 0; i < len; i++) to[i] = raw[i] & 0xffffffffL;
                else for (int i = 0; i < len; i++) to[i] = raw[i];
            }
            default -> {
                if ((off & 7) == 0) b.longs().get(off >> 3, to, 0, len);
                else for (int i = 0; i < len; i++) to[i] = bytes.getLong(off + 8 * i);
            }
        }
    }

    private static void storeLongs(DataType type, HostMemoryBlock b, int off, long[] from, int len, Scratch s) {
        ByteBuffer bytes = b.bytes();
        switch (type) {
            case INT8, UINT8 -> {
                byte[] raw = s.bytes;
                for (int i = 0; i < len; i++) raw[i] = (byte) from[i];
                bytes.put(off, raw, 0, len);
            }
            case INT32, UINT32 -> {
                int[] raw = s.ints;
                for (int i = 0; i < len; i++) raw[i] = (int) from[i];
                if ((off & 3) == 0) b.ints().put(off >> 2, raw, 0, len);
                else for (int i = 0; i < len; i++) bytes.putInt(off + 4 * i, raw[i]);
            }
            default -> {
                if ((off & 7) == 0) b.longs().put(off >> 3, from, 0, len);
                else for (int i = 0; i < len; i++) bytes.putLong(off + 8 * i, from[i]);
            }
        }
    }
}
