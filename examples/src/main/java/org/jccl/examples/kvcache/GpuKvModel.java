package org.jccl.examples.kvcache;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.jccl.core.Backend;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.Stream;
import org.jccl.device.DeviceApi;
import org.jccl.device.Kernel;
import org.jccl.device.KernelArgs;
import org.jccl.device.KernelCompiler;
import org.jccl.device.KernelLibrary;
import org.jccl.device.KernelSource;
import org.jccl.device.LaunchConfig;
import org.jccl.rma.kv.KvIncoming;
import org.jccl.rma.kv.KvLayout;
import org.jccl.rma.kv.KvPool;

/**
 * {@link KvModel} on a GPU: {@code kv_fill} writes one layer of a request into its scattered blocks, {@code kv_check}
 * compares every layer with the pattern and adds the bytes that differ to a counter on the device, read back once the
 * check completed. Both are compiled at run time (NVRTC, cached) and launched on the pool communicator's stream, in call
 * order with the KV transfer's own work: a layer's copy, issued after its fill, reads what the fill wrote, and a check
 * issued after a request is usable reads what arrived.
 *
 * <p>Each request gets its own slot of a block-table area and of the counters, never reused: a table is uploaded
 * through pinned memory by a copy on the same stream (a plain synchronous write could still be in flight when a kernel
 * on a non-blocking stream reads it).
 */
final class GpuKvModel implements KvModel {
    private static final int THREADS = 256;
    /** Enough CTAs to fill an H100/H200 (132 SMs) several times over; each thread then loops over a few words. */
    private static final int MAX_CTAS = 1056;
    private static final KernelSource SOURCE = KernelSource.of("kv_model.cu", KvBlocks.CUDA + """

            // Writes layer `layer` of request `request` (tokens in `blocks`, in token order) into the pool: the rank's
            // kvHeads heads, the model's heads headOffset.. of the pattern.
            extern "C" __global__ void kv_fill(char* pool, long long tensorBytes, int tensors, const int* blocks,
                                               int tokens, int tokensPerBlock, int kvHeads, int headOffset, int headWords,
                                               long long request, int layer) {
              const long long words = (long long) tensors * tokens * kvHeads * headWords;
              for (long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x; i < words;
                   i += (long long) gridDim.x * blockDim.x) {
                int tensor, token, head, word;
                const long long at = kv_place(tensorBytes, tensors, blocks, tokens, tokensPerBlock, kvHeads, headWords,
                                              layer, i, &tensor, &token, &head, &word);
                *(unsigned int*) (pool + at) = kv_word(request, layer, tensor, token, headOffset + head, word);
              }
            }

            // Counts the bytes of layers firstLayer + blockIdx.y of the request that differ from the pattern into
            // *wrong. A correct request costs no atomic at all.
            extern "C" __global__ void kv_check(const char* pool, long long tensorBytes, int tensors, const int* blocks,
                                                int tokens, int tokensPerBlock, int kvHeads, int headOffset, int headWords,
                                                long long request, unsigned long long* wrong, int firstLayer) {
              const int layer = firstLayer + blockIdx.y;
              const long long words = (long long) tensors * tokens * kvHeads * headWords;
              unsigned long long mine = 0;
              for (long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x; i < words;
                   i += (long long) gridDim.x * blockDim.x) {
                int tensor, token, head, word;
                const long long at = kv_place(tensorBytes, tensors, blocks, tokens, tokensPerBlock, kvHeads, headWords,
                                              layer, i, &tensor, &token, &head, &word);
                const unsigned int d = *(const unsigned int*) (pool + at)
                    ^ kv_word(request, layer, tensor, token, headOffset + head, word);
                mine += ((d & 0xffu) != 0) + ((d & 0xff00u) != 0) + ((d & 0xff0000u) != 0) + ((d >> 24) != 0);
              }
              if (mine != 0) atomicAdd(wrong, mine);
            }
            """);

    private final Communicator comm;
    private final KvLayout layout;
    private final Buffer pool;
    private final DeviceApi api;
    private final KernelLibrary library;
    private final Kernel fill;
    private final Kernel check;
    private final int maxBlocks;
    private final int prompts;
    private final Buffer tables;
    private final Buffer tablesPinned;
    private final Buffer counters;
    private final Buffer countersPinned;
    private final AtomicInteger nextSlot = new AtomicInteger();
    /** Decode's own stream, where it checks layers as they land. */
    private final Stream decodeStream;

    GpuKvModel(KvPool kvPool, int prompts, int maxBlocks) {
        this.comm = kvPool.communicator();
        this.layout = kvPool.layout();
        this.pool = kvPool.buffer();
        this.api = DeviceApi.of(comm);
        Backend backend = comm.backend();
        this.library = KernelLibrary.load(backend, KernelCompiler.of(backend).compile(SOURCE, comm.device()));
        this.fill = library.kernel("kv_fill");
        this.check = library.kernel("kv_check");
        this.prompts = prompts;
        this.maxBlocks = maxBlocks;
        this.tables = backend.allocate(comm.device(), 4L * prompts * maxBlocks);
        this.tablesPinned = backend.allocatePinned(4L * prompts * maxBlocks);
        this.counters = backend.allocate(comm.device(), 8L * prompts);
        this.countersPinned = backend.allocatePinned(8L * prompts);
        comm.stream().fill(counters, 0, counters.byteSize()); // before any check, on the stream they run on
        this.decodeStream = backend.createStream(comm.device());
    }

    /** One request's block table (on the device and pinned for its upload) and wrong-byte counter. */
    private record Slot(Buffer table, Buffer pinned, Buffer counter, Buffer counterPinned) {
    }

    private Slot slot(int[] blocks) {
        int slot = nextSlot.getAndIncrement();
        if (slot >= prompts) throw new IllegalStateException("the model was made for " + prompts + " requests");
        if (blocks.length > maxBlocks) throw new IllegalStateException(blocks.length + " blocks, more than " + maxBlocks);
        long tableBytes = 4L * blocks.length;
        Buffer pinned = tablesPinned.slice(4L * slot * maxBlocks, tableBytes);
        pinned.write(0, blocks);
        return new Slot(tables.slice(4L * slot * maxBlocks, tableBytes), pinned, counters.slice(8L * slot, 8),
                countersPinned.slice(8L * slot, 8));
    }

    private int ctas(int tokens) {
        long words = (long) layout.tensors() * tokens * layout.kvHeads() * KvBlocks.headWords(layout);
        return (int) Math.max(1, Math.min(MAX_CTAS, (words + 4L * THREADS - 1) / (4L * THREADS)));
    }

    @Override
    public Placed place(long request, int tokens, int[] blocks) {
        Slot s = slot(blocks);
        Buffer table = s.table();
        Buffer counter = s.counter();
        Buffer counterPinned = s.counterPinned();
        comm.stream().copy(table, s.pinned(), table.byteSize()); // ordered before every kernel of the request below
        int ctas = ctas(tokens);
        return new Placed() {
            @Override
            public CompletableFuture<Void> computeLayer(int layer) {
                return api.launch(fill, LaunchConfig.of(ctas, THREADS), arguments(table, tokens, request).int32(layer));
            }

            @Override
            public CompletableFuture<Long> wrongBytes() {
                // Every layer at once (grid y), each with fewer CTAs: the check is one launch per request.
                int perLayer = Math.max(1, Math.min(ctas, MAX_CTAS * 4 / layout.layers()));
                api.launch(check, new LaunchConfig(perLayer, layout.layers(), 1, THREADS, 1, 1, 0),
                        arguments(table, tokens, request).pointer(counter).int32(0));
                return comm.stream().copy(counterPinned, counter, 8)
                        .thenApplyAsync(v -> counterPinned.readLongs(0, 1)[0]); // a host read, off the event thread
            }
        };
    }

    /**
     * Decode's side as a model would run it: each layer of an arriving request is checked on decode's own stream as
     * soon as it landed ({@link KvIncoming#layerOn}: the stream waits on the device, no host between), so checking
     * overlaps the transfer as attention over the first layers would. Completes with the wrong bytes once the stream
     * passed the last check. Only for a request with device signals; called on the receiver's thread.
     */
    CompletableFuture<Long> checkAsLayersLand(long request, KvIncoming incoming) {
        Slot s = slot(incoming.blocks());
        decodeStream.copy(s.table(), s.pinned(), s.table().byteSize());
        decodeStream.fill(s.counter(), 0, 8);
        int ctas = ctas(incoming.tokens());
        for (int l = 0; l < layout.layers(); l++) {
            incoming.layerOn(l, decodeStream);
            api.launch(decodeStream, check, LaunchConfig.of(ctas, THREADS),
                    arguments(s.table(), incoming.tokens(), request).pointer(s.counter()).int32(l));
        }
        return decodeStream.copy(s.counterPinned(), s.counter(), 8)
                .thenApplyAsync(v -> s.counterPinned().readLongs(0, 1)[0]); // a host read, off the event thread
    }

    /** The arguments {@code kv_fill} and {@code kv_check} share, up to {@code request}. */
    private KernelArgs arguments(Buffer table, int tokens, long request) {
        return KernelArgs.create().pointer(pool).int64(layout.tensorBytes()).int32(layout.tensors()).pointer(table)
                .int32(tokens).int32(layout.tokensPerBlock()).int32(layout.kvHeads()).int32(layout.headOffset())
                .int32(KvBlocks.headWords(layout)).int64(request);
    }

    /** Frees the tables and counters once the work issued before has completed (buffers wait for their work). */
    @Override
    public void close() {
        decodeStream.close();
        tables.close();
        tablesPinned.close();
        counters.close();
        countersPinned.close();
        library.close();
    }
}
