package org.jccl.rma.kv;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.jccl.core.Modules;
import org.jccl.core.Work;
import org.jccl.core.module.ModuleContext;
import org.jccl.core.module.StreamOperation;
import org.jccl.core.spi.Driver;
import org.jccl.core.spi.MemoryRef;

/**
 * {@link KvPathKind#COPY}: the sender copies each segment straight into the peer's pool on its own stream, the peer
 * being a rank of this process (host ranks of one JVM; GPUs of one process by peer copies, which the runtime routes
 * over NVLink). One driver copy per segment: the per-block loop.
 */
final class CopyPath implements KvDirectPath {
    private final KvPool pool;
    private final ModuleContext context;

    CopyPath(KvPool pool) {
        this.pool = pool;
        this.context = Modules.context(pool.communicator());
    }

    @Override
    public KvPathKind kind() {
        return KvPathKind.COPY;
    }

    @Override
    public String describe() {
        return "copies into the peer's pool in this process, one per segment";
    }

    @Override
    public boolean reaches(int peer) {
        return pool.inProcessPeer(peer) != null;
    }

    @Override
    public CompletableFuture<Void> closeAsync() {
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public Prepared prepare(KvPlan plan) {
        KvPool peer = pool.inProcessPeer(plan.peer());
        if (peer == null) throw new IllegalStateException("rank " + plan.peer() + " left this process");
        MemoryRef from = context.memory(pool.memory());
        MemoryRef to = Modules.context(peer.communicator()).memory(peer.memory());
        Driver driver = context.driver();
        long[] segments = plan.segments();
        return new Prepared() {
            @Override
            public Work copyLayer(int layer) {
                return context.issue(new StreamOperation("kvCopy(" + plan.request() + ", layer=" + layer + ", to="
                        + plan.peer() + ")", List.of(pool.memory()), stream -> {
                            for (int t = 0; t < plan.source().tensors(); t++) {
                                long src = from.offset() + plan.source().offset(layer, t, 0);
                                long dst = to.offset() + plan.destination().offset(layer, t, 0);
                                for (int i = 0; i < segments.length; i += 3) {
                                    driver.copyAsync(to.block(), dst + segments[i + 1], from.block(), src + segments[i],
                                            segments[i + 2], stream);
                                }
                            }
                        }));
            }

            @Override
            public void close() {
            }
        };
    }
}
