package org.jccl.device.kernels;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.Stream;
import org.jccl.core.Work;
import org.jccl.device.DeviceApi;
import org.jccl.device.DeviceComm;
import org.jccl.device.Kernel;
import org.jccl.device.KernelArgs;
import org.jccl.device.LaunchConfig;
import org.jccl.rma.Window;
import org.jccl.rma.kv.KvDirectPath;
import org.jccl.rma.kv.KvLayout;
import org.jccl.rma.kv.KvPathKind;
import org.jccl.rma.kv.KvPlan;
import org.jccl.rma.kv.KvPool;

/**
 * {@link KvPathKind#LSA_KERNEL}: one {@code jccl_kv_put} launch per layer writes every segment of the request straight
 * into the peer's pool over NVLink, on the KV communicator's stream. A request's segments are cut into items of at most
 * {@link #ITEM_BYTES}, uploaded once (through pinned memory, ordered on the stream before its first layer) into a
 * table that later requests reuse.
 */
final class LsaKvPath implements KvDirectPath {
    /** The most one item moves: small enough that every CTA finds work, large enough for whole vectors per thread. */
    static final long ITEM_BYTES = 16 << 10;
    static final int THREADS = 256;
    /** CTAs of one launch: a few per SM of an H100/H200 (132 SMs); measured to saturate NVLink from about 132. */
    static final int MAX_BLOCKS = 528;

    private final KvPool pool;
    private final DeviceComm devComm;
    private final Kernel kernel;
    private final Kernel waitKernel;
    /** CTAs of a launch that finished their share (zero between launches): the last one raises the layer's signal. */
    private final Buffer arrivals;
    private final DeviceApi api;
    private final Window window;
    /** Segment tables for reuse: device and pinned memory allocated per request would cost much of a small one. */
    private final ArrayDeque<Table> tables = new ArrayDeque<>();

    /** A request's segment table on the device, and the pinned memory it is uploaded from. */
    private record Table(Buffer device, Buffer pinned) {
        long capacity() {
            return device.byteSize();
        }
    }

    LsaKvPath(KvPool pool, DeviceComm devComm, Kernel kernel, Kernel waitKernel) {
        this.pool = pool;
        this.devComm = devComm;
        this.kernel = kernel;
        this.waitKernel = waitKernel;
        Communicator c = pool.communicator();
        this.arrivals = c.backend().allocate(c.device(), 16);
        c.stream().fill(arrivals, 0, 16); // on the stream, before any launch
        this.api = DeviceApi.of(pool.communicator());
        this.window = pool.window();
    }

    @Override
    public KvPathKind kind() {
        return KvPathKind.LSA_KERNEL;
    }

    @Override
    public String describe() {
        return "LSA kernel, up to " + MAX_BLOCKS + " blocks of " + THREADS + " threads, items of " + ITEM_BYTES + " bytes";
    }

    /** Every rank of the communicator in this rank's LSA team, whose index is then the rank itself. */
    @Override
    public boolean reaches(int peer) {
        return devComm.lsaSize() == pool.communicator().size() && peer >= 0 && peer < devComm.lsaSize();
    }

    @Override
    public boolean signalsLayers() {
        return true;
    }

    @Override
    public Work awaitSignal(Stream stream, long signalOffset, Buffer cancel, long value) {
        return api.launch(stream, waitKernel, LaunchConfig.of(1, 32), KernelArgs.create().window(window).int64(signalOffset)
                .pointer(cancel).int64(value));
    }

    @Override
    public CompletableFuture<Void> closeAsync() {
        synchronized (tables) {
            for (Table t : tables) {
                t.device().close();
                t.pinned().close();
            }
            tables.clear();
        }
        arrivals.close(); // freed once the launches issued before completed
        return devComm.closeAsync();
    }

    /** A table of at least {@code bytes}: one given back before, or a new one of the next power of two. */
    private Table table(long bytes) {
        synchronized (tables) {
            for (Table t : tables) {
                if (t.capacity() >= bytes) {
                    tables.remove(t);
                    return t;
                }
            }
        }
        long size = Math.max(64 << 10, Long.highestOneBit(bytes - 1) << 1);
        Communicator c = pool.communicator();
        return new Table(c.backend().allocate(c.device(), size), c.backend().allocatePinned(size));
    }

    @Override
    public Prepared prepare(KvPlan plan) {
        long[] items = items(plan.segments());
        int count = items.length / 3;
        Table t = table(8L * items.length);
        Buffer table = t.device();
        // The pinned copy is reused only after close(), when every launch of the request, and so the upload before
        // them on the stream, has completed.
        t.pinned().write(0, items);
        Work upload = pool.communicator().stream().copy(table, t.pinned(), 8L * items.length);
        KvLayout src = plan.source();
        KvLayout dst = plan.destination();
        int tensors = src.tensors();
        int blocks = Math.max(1, Math.min(MAX_BLOCKS, count * tensors));
        boolean signals = plan.signalOffset() >= 0; // else value 0: the kernel raises nothing
        long signalValue = signals ? plan.signalValue() : 0;
        long base = pool.windowBase(); // the same on every rank: both pools start there in their windows
        return new Prepared() {
            @Override
            public Work copyLayer(int layer) {
                return api.launch(kernel, LaunchConfig.of(blocks, THREADS), KernelArgs.create().window(window)
                        .int32(plan.peer()).pointer(table).int32(count).int32(tensors)
                        .int64(base + src.offset(layer, 0, 0)).int64(src.tensorBytes())
                        .int64(base + dst.offset(layer, 0, 0)).int64(dst.tensorBytes())
                        .pointer(arrivals).int64(signals ? plan.signalOffset() + 8L * layer : 0).int64(signalValue));
            }

            @Override
            public void close() { // after every launch of the request completed; the upload too, unless none was made
                upload.whenComplete((v, e) -> {
                    synchronized (tables) {
                        tables.add(t);
                    }
                });
            }
        };
    }

    /** The segments cut into items of at most {@link #ITEM_BYTES}, as (source, destination, bytes) triples. */
    static long[] items(long[] segments) {
        List<long[]> out = new ArrayList<>();
        for (int i = 0; i < segments.length; i += 3) {
            for (long at = 0; at < segments[i + 2]; at += ITEM_BYTES) {
                out.add(new long[] {segments[i] + at, segments[i + 1] + at, Math.min(ITEM_BYTES, segments[i + 2] - at)});
            }
        }
        long[] flat = new long[3 * out.size()];
        for (int i = 0; i < out.size(); i++) System.arraycopy(out.get(i), 0, flat, 3 * i, 3);
        return flat;
    }

    @Override
    public String toString() {
        return "LsaKvPath[" + devComm + "]";
    }
}
