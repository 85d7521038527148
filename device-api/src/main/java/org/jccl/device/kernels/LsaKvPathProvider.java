package org.jccl.device.kernels;

import java.util.concurrent.CompletableFuture;
import org.jccl.core.Communicator;
import org.jccl.device.DeviceApi;
import org.jccl.device.DeviceComm;
import org.jccl.device.DeviceCommRequirements;
import org.jccl.device.Kernel;
import org.jccl.rma.kv.KvDirectPath;
import org.jccl.rma.kv.KvPathKind;
import org.jccl.rma.kv.KvPathProvider;
import org.jccl.rma.kv.KvPool;

/**
 * Provides the KV transfer's {@link KvPathKind#LSA_KERNEL} path, found by {@link java.util.ServiceLoader} when
 * {@code jccl-device-api} is on the class path: a device communicator on the pool's communicator (collective, made by
 * every rank during {@link KvPool#allocate}) and the shipped {@code jccl_kv_put} and {@code jccl_kv_wait} kernels.
 */
public final class LsaKvPathProvider implements KvPathProvider {
    @Override
    public KvPathKind kind() {
        return KvPathKind.LSA_KERNEL;
    }

    @Override
    public CompletableFuture<KvDirectPath> open(KvPool pool) {
        Communicator c = pool.communicator();
        if (pool.window() == null) {
            return CompletableFuture.failedFuture(c.backend().features().unsupported("ncclCommWindowRegister", null));
        }
        CompletableFuture<DeviceComm> devComm;
        try {
            devComm = DeviceApi.of(c).create(DeviceCommRequirements.builder().build());
        } catch (RuntimeException e) { // no device API here: every rank says so at once
            return CompletableFuture.failedFuture(e);
        }
        // Compiling takes a second or more: never on the event thread, where the device communicator completes.
        CompletableFuture<Kernel[]> kernels = CompletableFuture.supplyAsync(() -> new Kernel[] {
            ShippedKernels.kernel(c, "jccl_kv_put"), ShippedKernels.kernel(c, "jccl_kv_wait")});
        return devComm.thenCombine(kernels, (d, k) -> (KvDirectPath) new LsaKvPath(pool, d, k[0], k[1]))
                .whenComplete((path, error) -> {
                    if (error != null) devComm.thenAccept(DeviceComm::close); // made, but the kernel is not
                });
    }
}
