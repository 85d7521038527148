package org.jccl.core;

import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.nccl.DlpackNative;
import org.jccl.core.spi.DriverConstants;
import org.jccl.core.spi.MemoryBlock;
import org.jccl.core.spi.MemoryKind;
import org.jspecify.annotations.Nullable;

/**
 * DLPack, how GPU libraries hand tensors to each other (PyTorch's {@code to_dlpack}, CuPy, JAX, TensorFlow, DJL,
 * cuDF): a {@code DLManagedTensor*} of dlpack.h (v0.8 or 1.x; their {@code DLManagedTensor} is the same) comes in as a
 * {@link DlpackTensor} over its memory, and a {@link Buffer} goes out as a {@code DLManagedTensor*} another library
 * takes. Nothing is copied either way.
 *
 * <p><b>Import</b> checks, before anything is taken: a non-null pointer; the device (CUDA memory of an existing
 * device for the nccl backend, ROCm memory for rccl, CPU-accessible memory for the host backend; with a communicator,
 * its device); a dtype jccl has ({@link DataType}); a C-contiguous layout (strides absent, or those of a compact
 * row-major tensor); at least one element; a start aligned to the element size. A refused tensor stays the caller's
 * (its deleter is not called). An accepted one is jccl's: its deleter is called exactly once, when the
 * {@link DlpackTensor} was closed and every operation that used it completed, on the thread that ended the last use
 * (often jccl's event thread). Importing one pointer twice while the first import lives is refused.
 *
 * <p><b>Export</b> makes a compact row-major tensor of the buffer's memory that keeps that memory alive until its
 * consumer calls the deleter, even if the buffer is closed first; the deleter frees the structure jccl allocated.
 */
public final class Dlpack {
    /** The tensors imported and not yet released: a {@code DLManagedTensor} is consumed once. */
    private static final Set<Long> IMPORTED = ConcurrentHashMap.newKeySet();
    /** More dimensions than any library makes: a larger {@code ndim} is a corrupt or foreign structure. */
    private static final int MAX_DIMENSIONS = 64;

    private Dlpack() {
    }

    /**
     * Takes the tensor at {@code managedTensor} (a {@code DLManagedTensor*}) for operations of {@code backend}.
     *
     * @throws InvalidArgumentException for a null pointer, memory of a device the backend cannot use, a dtype jccl
     *                                  lacks, a layout that is not C-contiguous, an empty or misaligned tensor
     * @throws InvalidUsageException    if the tensor was imported already and that import is still alive
     */
    public static DlpackTensor importTensor(Backend backend, long managedTensor) {
        Errors.requireArgument(backend, "backend");
        return importTensor(backend, managedTensor, null);
    }

    /**
     * {@link #importTensor(Backend, long)} for operations of {@code communicator}: the tensor must also be on its
     * device.
     */
    public static DlpackTensor importTensor(Communicator communicator, long managedTensor) {
        Errors.requireArgument(communicator, "communicator");
        return importTensor(communicator.backend(), managedTensor, communicator);
    }

    private static DlpackTensor importTensor(Backend backend, long managedTensor, @Nullable Communicator communicator) {
        long[] h = DlpackNative.read(managedTensor);
        String what = "DLPack tensor at 0x" + Long.toHexString(managedTensor);
        int deviceType = (int) h[DlpackNative.DEVICE_TYPE];
        int deviceId = (int) h[DlpackNative.DEVICE_ID];
        BackendKind kind = backend.kind();
        if (!DlpackTypes.usableBy(kind, deviceType)) {
            throw new InvalidArgumentException(what + " is in " + DlpackTypes.deviceName(deviceType) + " memory, which the "
                    + kind.id() + " backend's operations cannot use (it takes "
                    + DlpackTypes.deviceName(DlpackTypes.deviceType(kind, false)) + " memory)");
        }
        int device = kind == BackendKind.HOST ? DriverConstants.HOST_DEVICE : deviceId;
        if (communicator != null && device != communicator.device()) {
            throw new InvalidArgumentException(what + " is on device " + deviceId + ", " + communicator.describe()
                    + " on device " + communicator.device());
        }
        DataType type = DlpackTypes.dataType((int) h[DlpackNative.CODE], (int) h[DlpackNative.BITS], (int) h[DlpackNative.LANES]);
        long ndim = h[DlpackNative.NDIM];
        if (ndim < 0 || ndim > MAX_DIMENSIONS) throw new InvalidArgumentException(what + " has " + ndim + " dimensions");
        long[] shape = new long[(int) ndim];
        long[] strides = new long[(int) ndim];
        DlpackNative.dims(managedTensor, (int) ndim, shape, strides);
        long count = elements(shape, what);
        if (h[DlpackNative.HAS_STRIDES] != 0) checkContiguous(shape, strides, what);
        if (count == 0) throw new InvalidArgumentException(what + " has no elements: there is no memory to use");
        long bytes = bytes(count, type, what);
        long address = h[DlpackNative.DATA] + h[DlpackNative.BYTE_OFFSET];
        if (h[DlpackNative.DATA] == 0) throw new InvalidArgumentException(what + " has a null data pointer");
        if (address % type.size() != 0) {
            throw new InvalidArgumentException(what + " starts at 0x" + Long.toHexString(address) + ", not aligned to its "
                    + type + " elements of " + type.size() + " bytes");
        }
        if (!IMPORTED.add(managedTensor)) {
            throw new InvalidUsageException(what + " was imported already: a DLManagedTensor is consumed once (ask its"
                    + " library for a new one, or keep using the first DlpackTensor)");
        }
        boolean hasDeleter = h[DlpackNative.HAS_DELETER] != 0;
        Buffer buffer;
        try {
            buffer = backend.wrapWithRelease(device, address, bytes, () -> {
                IMPORTED.remove(managedTensor);
                if (hasDeleter) DlpackNative.delete(managedTensor);
            });
        } catch (RuntimeException e) {
            IMPORTED.remove(managedTensor); // refused: the tensor stays the caller's
            throw e;
        }
        return new DlpackTensor(buffer, type, shape, count);
    }

    /**
     * {@code buffer}'s memory as a one-dimensional {@code DLManagedTensor*} of all the whole {@code type} elements it
     * holds. See {@link #exportTensor(Buffer, DataType, long[])}.
     */
    public static long exportTensor(Buffer buffer, DataType type) {
        Errors.requireArgument(buffer, "buffer");
        Errors.requireArgument(type, "type");
        return exportTensor(buffer, type, new long[] {buffer.capacity(type)});
    }

    /**
     * {@code buffer}'s memory as a {@code DLManagedTensor*} of {@code type} elements in {@code shape} (compact, row
     * major, from the buffer's first byte), for another library to take. The memory stays alive until that library
     * calls the tensor's deleter, even if the buffer is closed before; a tensor nobody takes keeps it alive for good.
     *
     * @throws InvalidArgumentException if the shape has a negative dimension or more elements than the buffer holds
     * @throws InvalidUsageException    if the buffer is closed
     */
    public static long exportTensor(Buffer buffer, DataType type, long[] shape) {
        Errors.requireArgument(buffer, "buffer");
        Errors.requireArgument(type, "type");
        Errors.requireArgument(shape, "shape");
        long[] dims = shape.clone();
        String what = "exporting " + buffer + " as " + type + Arrays.toString(dims);
        if (dims.length > MAX_DIMENSIONS) throw new InvalidArgumentException(what + ": more than " + MAX_DIMENSIONS + " dimensions");
        long count = elements(dims, what);
        if (bytes(count, type, what) > buffer.byteSize()) {
            throw new InvalidArgumentException(what + ": " + count + " elements need " + count * type.size()
                    + " bytes, the buffer holds " + buffer.byteSize());
        }
        buffer.checkOpen();
        MemoryBlock block = buffer.block();
        block.retain(); // the consumer's use, ended by its deleter call
        int deviceType = DlpackTypes.deviceType(buffer.backendKind(), block.kind() == MemoryKind.PINNED_HOST);
        int deviceId = buffer.device() < 0 ? 0 : buffer.device();
        try {
            return DlpackNative.export(buffer.nativeAddress(), deviceType, deviceId, DlpackTypes.code(type), 8 * type.size(),
                    dims, block::release);
        } catch (RuntimeException e) {
            block.release();
            throw e;
        }
    }

    private static long bytes(long count, DataType type, String what) {
        try {
            return Math.multiplyExact(count, (long) type.size());
        } catch (ArithmeticException e) {
            throw new InvalidArgumentException(what + ": " + count + " elements of " + type + " overflow a byte count");
        }
    }

    /** The product of a shape, each dimension checked non-negative and the product checked against overflow. */
    private static long elements(long[] shape, String what) {
        long count = 1;
        for (long d : shape) {
            if (d < 0) throw new InvalidArgumentException(what + " has a negative dimension: " + d);
            try {
                count = Math.multiplyExact(count, d);
            } catch (ArithmeticException e) {
                throw new InvalidArgumentException(what + " has more elements than a long counts");
            }
        }
        return count;
    }

    /**
     * Strides (in elements) must be those of a compact row-major tensor, except along dimensions of size 1, where any
     * stride reaches the same elements (PyTorch leaves such strides arbitrary).
     */
    private static void checkContiguous(long[] shape, long[] strides, String what) {
        long expected = 1;
        for (int i = shape.length - 1; i >= 0; i--) {
            if (shape[i] != 1 && strides[i] != expected) {
                throw new InvalidArgumentException(what + " is not C-contiguous (shape " + Arrays.toString(shape)
                        + ", strides " + Arrays.toString(strides) + "): jccl communicates compact row-major"
                        + " memory only; make it contiguous first");
            }
            expected *= shape[i];
        }
    }
}
