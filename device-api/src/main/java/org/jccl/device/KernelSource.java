package org.jccl.device;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;

/**
 * CUDA C++ source for {@link KernelCompiler}: a name for messages (e.g. {@code fill.cu}), the code, and compiler
 * options beyond the ones jccl sets. Kernels meant to be found by their plain name are declared {@code extern "C"}.
 * {@code #include <nccl_device.h>} works as with nvcc.
 *
 * @param name    the file name messages use
 * @param code    the source
 * @param options extra NVRTC options, e.g. {@code -DBLOCK=256}
 */
public record KernelSource(String name, String code, List<String> options) {
    public KernelSource {
        Errors.requireArgument(name, "name");
        Errors.requireArgument(code, "code");
        Errors.requireArgument(options, "options");
        if (code.isBlank()) throw new InvalidArgumentException("kernel source " + name + " is empty");
        options = List.copyOf(options);
    }

    public static KernelSource of(String name, String code) {
        return new KernelSource(name, code, List.of());
    }

    /** Source from a class-path resource, named by its file name. */
    public static KernelSource fromResource(Class<?> anchor, String resource) {
        try (InputStream in = anchor.getResourceAsStream(resource)) {
            if (in == null) throw new InvalidArgumentException("no resource " + resource + " beside " + anchor.getName());
            String file = resource.substring(resource.lastIndexOf('/') + 1);
            return of(file, new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The same source with more options. */
    public KernelSource withOptions(String... more) {
        List<String> all = new ArrayList<>(options);
        all.addAll(List.of(more));
        return new KernelSource(name, code, all);
    }
}
