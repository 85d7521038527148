package org.jccl.device;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import org.jccl.core.Buffer;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.module.ModuleContext;
import org.jccl.core.module.Retention;
import org.jccl.rma.Window;

/**
 * A kernel's arguments, in parameter order, each typed: scalars, raw bytes of a structure passed by value, a
 * {@link Buffer}'s device address, a {@link Window} ({@code ncclWindow_t}) and a {@link DeviceComm} by value. At
 * launch each is checked against the kernel's parameter (count and sizes, where the driver tells them) and against
 * the communicator (buffers on its device, windows and device communicators of it, none closed); the launch then
 * keeps every buffer, window and device communicator alive until it completes.
 *
 * <pre>{@code
 * KernelArgs.create().window(win).deviceComm(devComm).float32(42f).int64(n)
 * }</pre>
 */
public final class KernelArgs {
    private final List<Argument> arguments = new ArrayList<>();

    private KernelArgs() {
    }

    public static KernelArgs create() {
        return new KernelArgs();
    }

    /** A 32-bit {@code int} / {@code unsigned}. */
    public KernelArgs int32(int value) {
        return scalar("int32", ByteBuffer.allocate(4).order(ByteOrder.nativeOrder()).putInt(value).array());
    }

    /** A 64-bit {@code long long} / {@code size_t}. */
    public KernelArgs int64(long value) {
        return scalar("int64", ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(value).array());
    }

    public KernelArgs float32(float value) {
        return scalar("float32", ByteBuffer.allocate(4).order(ByteOrder.nativeOrder()).putFloat(value).array());
    }

    public KernelArgs float64(double value) {
        return scalar("float64", ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putDouble(value).array());
    }

    /** A structure by value: its bytes as the kernel lays it out. */
    public KernelArgs bytes(byte[] value) {
        Errors.requireArgument(value, "value");
        if (value.length == 0) throw new InvalidArgumentException("an argument needs at least one byte");
        return scalar("bytes[" + value.length + "]", value.clone());
    }

    /** {@code buffer}'s device address ({@code T*}). */
    public KernelArgs pointer(Buffer buffer) {
        arguments.add(new Argument.Pointer(Errors.requireArgument(buffer, "buffer")));
        return this;
    }

    /** {@code window}'s handle ({@code ncclWindow_t}), for {@code ncclGetLocalPointer}, {@code ncclGetLsaPointer}. */
    public KernelArgs window(Window window) {
        arguments.add(new Argument.WindowHandle(Errors.requireArgument(window, "window")));
        return this;
    }

    /** {@code deviceComm} by value ({@code ncclDevComm}). */
    public KernelArgs deviceComm(DeviceComm deviceComm) {
        arguments.add(new Argument.DevComm(Errors.requireArgument(deviceComm, "deviceComm")));
        return this;
    }

    private KernelArgs scalar(String kind, byte[] bytes) {
        arguments.add(new Argument.Scalar(kind, bytes));
        return this;
    }

    /** How many arguments. */
    public int count() {
        return arguments.size();
    }

    /** The arguments as the driver takes them, and what the launch keeps alive. */
    record Marshalled(byte[] bytes, int[] offsets, List<Buffer> buffers, List<DeviceComm> deviceComms, List<Retention> retentions) {
    }

    /**
     * Checks and lays out the arguments for {@code kernel} on {@code spi}'s communicator.
     *
     * @throws InvalidArgumentException for a wrong count or size, or a buffer on another device
     * @throws InvalidUsageException    for a closed window or device communicator, or one of another communicator
     */
    Marshalled marshal(Kernel kernel, ModuleContext spi) {
        long[] expected = kernel.parameterSizes();
        if (expected != null && expected.length != arguments.size()) {
            throw new InvalidArgumentException(kernel.name() + " takes " + expected.length + " parameters, not "
                    + arguments.size() + ": " + this);
        }
        List<byte[]> values = new ArrayList<>(arguments.size());
        List<Buffer> buffers = new ArrayList<>();
        List<DeviceComm> deviceComms = new ArrayList<>();
        List<Retention> retentions = new ArrayList<>();
        for (int i = 0; i < arguments.size(); i++) {
            Argument a = arguments.get(i);
            byte[] value = a.value(spi, buffers, deviceComms, retentions);
            if (expected != null && expected[i] != value.length) {
                throw new InvalidArgumentException(kernel.name() + "'s parameter " + i + " is " + expected[i] + " bytes, but the"
                        + " argument is " + a.describe() + " (" + value.length + " bytes)" + (a instanceof Argument.DevComm
                        ? ": the kernel was compiled against other NCCL headers than the loaded library's" : ""));
            }
            values.add(value);
        }
        int[] offsets = new int[values.size()];
        int end = 0;
        for (int i = 0; i < values.size(); i++) {
            end = (end + 7) & ~7; // each value 8-aligned in the packed block
            offsets[i] = end;
            end += values.get(i).length;
        }
        byte[] packed = new byte[end];
        for (int i = 0; i < values.size(); i++) System.arraycopy(values.get(i), 0, packed, offsets[i], values.get(i).length);
        return new Marshalled(packed, offsets, buffers, deviceComms, retentions);
    }

    @Override
    public String toString() {
        List<String> kinds = new ArrayList<>();
        for (Argument a : arguments) kinds.add(a.describe());
        return "(" + String.join(", ", kinds) + ")";
    }

    /** One argument. */
    private sealed interface Argument {
        String describe();

        /** The bytes passed, recording what the launch must keep alive. */
        byte[] value(ModuleContext spi, List<Buffer> buffers, List<DeviceComm> deviceComms, List<Retention> retentions);

        record Scalar(String kind, byte[] bytes) implements Argument {
            public String describe() {
                return kind;
            }

            public byte[] value(ModuleContext spi, List<Buffer> buffers, List<DeviceComm> deviceComms,
                                List<Retention> retentions) {
                return bytes;
            }
        }

        record Pointer(Buffer buffer) implements Argument {
            public String describe() {
                return "pointer";
            }

            public byte[] value(ModuleContext spi, List<Buffer> buffers, List<DeviceComm> deviceComms,
                                List<Retention> retentions) {
                long address = spi.memory(buffer).address(); // open, and on the communicator's device
                buffers.add(buffer);
                return address(address);
            }
        }

        record WindowHandle(Window window) implements Argument {
            public String describe() {
                return "window";
            }

            public byte[] value(ModuleContext spi, List<Buffer> buffers, List<DeviceComm> deviceComms,
                                List<Retention> retentions) {
                if (window.isClosed()) throw new InvalidUsageException(window + " is closed");
                if (window.communicator() != spi.communicator()) {
                    throw new InvalidUsageException(window + " belongs to another communicator than " + spi.communicator().describe());
                }
                buffers.add(window.buffer());
                retentions.add(window.retention());
                return address(window.handle());
            }
        }

        record DevComm(DeviceComm deviceComm) implements Argument {
            public String describe() {
                return "deviceComm";
            }

            public byte[] value(ModuleContext spi, List<Buffer> buffers, List<DeviceComm> deviceComms,
                                List<Retention> retentions) {
                DeviceComm.requireOpen(deviceComm);
                if (deviceComm.communicator() != spi.communicator()) {
                    throw new InvalidUsageException(deviceComm + " belongs to another communicator than " + spi.communicator().describe());
                }
                deviceComms.add(deviceComm);
                retentions.add(deviceComm.retention());
                return deviceComm.bytes();
            }
        }

        private static byte[] address(long address) {
            return ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(address).array();
        }
    }
}
