package org.jccl.core.nccl;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.SystemErrorException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * DLPack's structures in native memory ({@code jccl_dlpack.h}), for {@link org.jccl.core.Dlpack}: reading a
 * {@code DLManagedTensor} another library made, calling its deleter, and making one whose deleter comes back to Java.
 * Only longs cross: no JavaCPP type leaves this package. Needs jccl's JNI library, not a GPU library.
 */
public final class DlpackNative {
    private static final Logger LOG = LoggerFactory.getLogger(DlpackNative.class);

    /** Indices into {@link #read}'s result. */
    public static final int DATA = 0;
    public static final int DEVICE_TYPE = 1;
    public static final int DEVICE_ID = 2;
    public static final int NDIM = 3;
    public static final int CODE = 4;
    public static final int BITS = 5;
    public static final int LANES = 6;
    public static final int BYTE_OFFSET = 7;
    public static final int HAS_STRIDES = 8;
    public static final int HAS_DELETER = 9;
    private static final int FIELDS = 10;

    /** What each export's tensor keeps, by the id in its {@code manager_ctx}, until its deleter is called. */
    private static final Map<Long, Runnable> EXPORTS = new ConcurrentHashMap<>();
    private static final AtomicLong NEXT_EXPORT = new AtomicLong(1);
    private static volatile NativeApi.DlpackDeleter deleter;

    private DlpackNative() {
    }

    /** How a deleter call reaches Java: the tensor's address. */
    interface Ending {
        void ended(long managedTensor);
    }

    /** The scalar fields of the {@code DLManagedTensor} at {@code managedTensor}, by the indices above. */
    public static long[] read(long managedTensor) {
        long[] header = new long[FIELDS];
        if (NativeApi.jn_dlpack_read(managedTensor, header) != 0) {
            throw new InvalidArgumentException("a DLManagedTensor pointer must not be 0 (null)");
        }
        return header;
    }

    /** The first {@code ndim} entries of the tensor's shape and strides (strides all 0 where it has none). */
    public static void dims(long managedTensor, int ndim, long[] shape, long[] strides) {
        if (NativeApi.jn_dlpack_dims(managedTensor, ndim, shape, strides) != 0) {
            throw new InvalidArgumentException("the DLManagedTensor at 0x" + Long.toHexString(managedTensor)
                    + " has " + ndim + " dimension(s) but no shape array");
        }
    }

    /** Calls the tensor's deleter: the consumer is done with it. */
    public static void delete(long managedTensor) {
        NativeApi.jn_dlpack_delete(managedTensor);
    }

    /**
     * A new compact, row-major {@code DLManagedTensor} over {@code data}; when its consumer calls the deleter, the
     * tensor is freed and {@code onDeleted} runs (on the consumer's thread).
     */
    public static long export(long data, int deviceType, int deviceId, int code, int bits, long[] shape, Runnable onDeleted) {
        long id = NEXT_EXPORT.getAndIncrement();
        EXPORTS.put(id, onDeleted);
        long tensor = NativeApi.jn_dlpack_new(data, deviceType, deviceId, code, bits, shape.length, shape, id, deleter());
        if (tensor == 0) {
            EXPORTS.remove(id);
            throw new SystemErrorException("out of native memory for a DLManagedTensor");
        }
        return tensor;
    }

    /** The tensors exported and not yet deleted by their consumers. */
    public static int liveExports() {
        return EXPORTS.size();
    }

    /** The platform's {@code sizeof(DLTensor)}, {@code sizeof(DLManagedTensor)} and four field offsets, for tests. */
    public static long[] layout() {
        long[] out = new long[6];
        NativeApi.jn_dlpack_layout(out, out.length);
        return out;
    }

    private static NativeApi.DlpackDeleter deleter() {
        NativeApi.DlpackDeleter d = deleter;
        if (d != null) return d;
        synchronized (DlpackNative.class) {
            if (deleter == null) deleter = new NativeApi.DlpackDeleter(DlpackNative::ended);
            return deleter;
        }
    }

    /** A consumer called the deleter of one of jccl's tensors: free it and end what it kept. */
    private static void ended(long managedTensor) {
        long id = NativeApi.jn_dlpack_context(managedTensor);
        NativeApi.jn_dlpack_free(managedTensor);
        Runnable end = EXPORTS.remove(id);
        if (end == null) {
            LOG.warn("jccl: a DLPack deleter was called for a tensor jccl does not know (or twice)");
            return;
        }
        try {
            end.run();
        } catch (RuntimeException e) {
            LOG.warn("jccl: ending a DLPack export failed", e); // a Java exception must not unwind into the caller's C
        }
    }
}
