package org.jccl.device.reactive;

import java.time.Duration;
import java.util.List;
import org.jccl.core.Stream;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.device.DeviceApi;
import org.jccl.device.DeviceComm;
import org.jccl.device.DeviceCommRequirements;
import org.jccl.device.DeviceProperties;
import org.jccl.device.Kernel;
import org.jccl.device.KernelArgs;
import org.jccl.device.LaunchConfig;
import org.jccl.reactive.ReactiveCommunicator;
import org.jccl.reactive.ReactiveModules;
import reactor.core.publisher.Mono;

/**
 * The reactive shape of {@link DeviceApi}: cold {@link Mono}s issued at subscription, in subscription order with the
 * communicator's other operations, completing on the event thread (or the shape's scheduler). A device communicator
 * made for a subscriber that cancelled is closed; a cancelled launch only detaches — the kernel still runs.
 */
public final class ReactiveDeviceApi {
    private final ReactiveCommunicator shape;
    private final DeviceApi core;

    private ReactiveDeviceApi(ReactiveCommunicator shape) {
        this.shape = shape;
        this.core = DeviceApi.of(shape.communicator());
    }

    /** The device API of {@code communicator}'s reactive shape (its scheduler and timeout). */
    public static ReactiveDeviceApi of(ReactiveCommunicator communicator) {
        return new ReactiveDeviceApi(Errors.requireArgument(communicator, "communicator"));
    }

    /** The core shape. */
    public DeviceApi core() {
        return core;
    }

    /** {@link DeviceApi#properties()}. */
    public Mono<DeviceProperties> properties() {
        return ReactiveModules.mono(shape, core::properties);
    }

    /** {@link DeviceApi#create} at subscription; collective. */
    public Mono<DeviceComm> create(DeviceCommRequirements requirements) {
        return ReactiveModules.mono(shape, () -> core.create(requirements), DeviceComm::close);
    }

    /** {@link DeviceApi#createAll}: several communicators of this process in one group, at subscription. */
    public static Mono<List<DeviceComm>> createAll(List<ReactiveCommunicator> communicators, DeviceCommRequirements requirements) {
        Errors.requireArgument(communicators, "communicators");
        if (communicators.isEmpty()) return Mono.error(new InvalidArgumentException("createAll needs at least one communicator"));
        return ReactiveModules.mono(communicators.get(0), () -> DeviceApi.createAll(
                communicators.stream().map(ReactiveCommunicator::communicator).toList(), requirements),
                list -> list.forEach(DeviceComm::close));
    }

    /** {@link DeviceComm#closeAsync()} at subscription: destroyed after the kernels issued before. */
    public Mono<Void> close(DeviceComm deviceComm) {
        return ReactiveModules.mono(shape, () -> Errors.requireArgument(deviceComm, "deviceComm").closeAsync());
    }

    /** {@link DeviceApi#launch} at subscription, with the shape's timeout. */
    public Mono<Void> launch(Kernel kernel, LaunchConfig config, KernelArgs args) {
        return ReactiveModules.mono(shape, () -> core.launch(kernel, config, args, ReactiveModules.timeout(shape)));
    }

    /** {@link DeviceApi#launch(Kernel, LaunchConfig, KernelArgs, Duration)} at subscription: its own timeout (zero: none). */
    public Mono<Void> launch(Kernel kernel, LaunchConfig config, KernelArgs args, Duration timeout) {
        return ReactiveModules.mono(shape, () -> core.launch(kernel, config, args, timeout));
    }

    /** {@link DeviceApi#launch(Stream, Kernel, LaunchConfig, KernelArgs)} at subscription: on an application's stream. */
    public Mono<Void> launch(Stream stream, Kernel kernel, LaunchConfig config, KernelArgs args) {
        return ReactiveModules.mono(shape, () -> core.launch(stream, kernel, config, args));
    }
}
