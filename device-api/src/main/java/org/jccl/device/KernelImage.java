package org.jccl.device;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;

/**
 * Compiled device code to load: PTX text (JIT-compiled by the driver for the device it runs on), a cubin for one
 * architecture, a fatbin holding several, or (RCCL backend) an AMD GPU code object.
 *
 * @param format what the bytes are
 * @param bytes  the image (PTX ends with its NUL)
 */
public record KernelImage(Format format, byte[] bytes) {
    /** The image formats the driver loads. */
    public enum Format {
        PTX, CUBIN, FATBIN, CODE_OBJECT
    }

    public KernelImage {
        Errors.requireArgument(format, "format");
        Errors.requireArgument(bytes, "bytes");
        if (bytes.length == 0) throw new InvalidArgumentException("an empty " + format + " image");
        bytes = bytes.clone();
    }

    /** PTX text. */
    public static KernelImage ptx(String ptx) {
        Errors.requireArgument(ptx, "ptx");
        return ptx(ptx.getBytes(StandardCharsets.UTF_8));
    }

    /** PTX bytes, NUL-terminated here if they are not. */
    public static KernelImage ptx(byte[] ptx) {
        Errors.requireArgument(ptx, "ptx");
        boolean terminated = ptx.length > 0 && ptx[ptx.length - 1] == 0;
        return new KernelImage(Format.PTX, terminated ? ptx : Arrays.copyOf(ptx, ptx.length + 1));
    }

    public static KernelImage cubin(byte[] cubin) {
        return new KernelImage(Format.CUBIN, cubin);
    }

    public static KernelImage fatbin(byte[] fatbin) {
        return new KernelImage(Format.FATBIN, fatbin);
    }

    /** An AMD GPU code object (hipcc {@code --genco}, hipRTC), for the RCCL backend. */
    public static KernelImage codeObject(byte[] codeObject) {
        return new KernelImage(Format.CODE_OBJECT, codeObject);
    }

    /** A copy of the bytes. */
    @Override
    public byte[] bytes() {
        return bytes.clone();
    }

    @Override
    public String toString() {
        return format + " image (" + bytes.length + " bytes)";
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof KernelImage k && k.format == format && Arrays.equals(k.bytes, bytes);
    }

    @Override
    public int hashCode() {
        return 31 * format.hashCode() + Arrays.hashCode(bytes);
    }
}
