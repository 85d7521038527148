package org.jccl.examples.kvcache;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Jccl;
import org.jccl.core.UniqueId;
import org.jccl.core.rendezvous.Rendezvous;
import org.jccl.core.spi.Feature;
import org.jccl.reactive.ReactiveCommunicator;
import org.jccl.rma.channel.BlockChannel;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

/**
 * A prefill → decode KV-cache pipeline: rank 0 (prefill) produces the KV-cache blocks of several requests, layer by
 * layer and interleaved across requests; rank 1 (decode) receives them through a {@link BlockChannel}, checks every
 * byte, and "generates" a request's first token as soon as all its blocks arrived. A slow decoder slows the prefiller
 * (the channel's ring bounds what is in flight); killing either process ends the other with a clear error. Where the
 * loaded library has no one-sided API, blocks go by send/recv instead (logged).
 *
 * <pre>
 *   launcher --nproc 2 -- org.jccl.examples.kvcache.KvCachePipeline [requests] [layers] [blocks per layer] [block KiB] [decode delay ms]
 * </pre>
 * Each process uses its local GPU when there is one, else the host backend.
 */
public final class KvCachePipeline {
    private static final int SLOTS = 8;

    private KvCachePipeline() {
    }

    public static void main(String[] args) throws Exception {
        int requests = arg(args, 0, 4);
        int layers = arg(args, 1, 8);
        int blocksPerLayer = arg(args, 2, 4);
        int blockBytes = arg(args, 3, 64) * 1024;
        int delayMs = arg(args, 4, 0);
        long total = (long) requests * layers * blocksPerLayer;
        Backend backend = Jccl.backend();
        try (Rendezvous rdzv = Rendezvous.fromEnvironment()) {
            UniqueId id = rdzv.shareUniqueIdNow("kvcache-id", backend::newUniqueId);
            int device = backend.kind() == BackendKind.HOST ? -1 : rdzv.localRank();
            Communicator comm = backend.initRank(id, 2, rdzv.rank(), device).get(60, TimeUnit.SECONDS);
            boolean oneSided = backend.features().has(Feature.PUT_SIGNAL);
            System.out.println((rdzv.rank() == 0 ? "prefill" : "decode") + " on " + comm.describe() + ": " + total
                    + " blocks of " + blockBytes + " bytes, " + requests + " requests x " + layers + " layers, through "
                    + (oneSided ? "a block channel (putSignal, " + SLOTS + " slots)" : "send/recv (" + backend.describe()
                    + " has no one-sided API)"));
            long start = System.nanoTime();
            try {
                if (rdzv.rank() == 0) {
                    long sent = oneSided ? prefillChannel(backend, comm, requests, layers, blocksPerLayer, blockBytes)
                            : prefillSendRecv(backend, comm, requests, layers, blocksPerLayer, blockBytes);
                    report("prefill sent", sent, blockBytes, start);
                } else {
                    Decoder decoder = new Decoder(requests, layers, blocksPerLayer, blockBytes, delayMs, start);
                    if (oneSided) decodeChannel(comm, decoder);
                    else decodeSendRecv(backend, comm, decoder, total);
                    decoder.finish();
                }
            } catch (RuntimeException e) {
                System.out.println((rdzv.rank() == 0 ? "prefill" : "decode") + " failed: " + e.getClass().getSimpleName()
                        + ": " + e.getMessage());
                System.exit(3);
            }
            comm.close();
        }
    }

    private static int arg(String[] args, int i, int fallback) {
        return args.length > i ? Integer.parseInt(args[i]) : fallback;
    }

    static void report(String what, long blocks, int blockBytes, long startNanos) {
        double s = (System.nanoTime() - startNanos) / 1e9;
        System.out.printf("%s %d blocks in %.3f s: %.0f blocks/s, %.3f GB/s%n", what, blocks, s, blocks / s, blocks * blockBytes / s / 1e9);
    }

    /** The blocks in schedule order, each written into a staging ring of 2 × slots buffers (off the event thread). */
    private static Flux<Buffer> blocks(Backend backend, Communicator comm, int requests, int layers, int perLayer, int bytes) {
        long total = (long) requests * layers * perLayer;
        Buffer ring = backend.allocate(comm.device(), (long) bytes * SLOTS * 2);
        return Flux.<Buffer, Long>generate(() -> 0L, (i, sink) -> {
            long[] c = KvBlocks.coordinates(i, requests, layers, perLayer);
            Buffer b = ring.slice((i % (SLOTS * 2)) * bytes, bytes);
            b.write(0, KvBlocks.content(c[0], c[1], c[2], bytes));
            sink.next(b);
            if (i + 1 == total) sink.complete();
            return i + 1;
        }).subscribeOn(Schedulers.boundedElastic()).doFinally(s -> ring.close());
    }

    private static long prefillChannel(Backend backend, Communicator comm, int requests, int layers, int perLayer, int bytes) {
        ReactiveCommunicator shape = ReactiveCommunicator.of(comm);
        BlockChannel ch = BlockChannel.open(shape, 0, 1, SLOTS, bytes).block(Duration.ofSeconds(60));
        try {
            return ch.send(blocks(backend, comm, requests, layers, perLayer, bytes)).block();
        } finally {
            ch.close().block(Duration.ofSeconds(60));
        }
    }

    private static void decodeChannel(Communicator comm, Decoder decoder) {
        BlockChannel ch = BlockChannel.open(ReactiveCommunicator.of(comm), 0, 1, SLOTS, decoder.blockBytes).block(Duration.ofSeconds(60));
        try {
            ch.receive().publishOn(Schedulers.boundedElastic(), 1) // reads copy from the device: off the event thread
                    .doOnNext(b -> {
                        ByteBuffer data = ByteBuffer.allocateDirect((int) b.data().byteSize()).order(ByteOrder.nativeOrder());
                        b.data().read(0, data);
                        b.release();
                        decoder.accept(b.sequence(), data);
                    }).blockLast();
        } finally {
            ch.close().block(Duration.ofSeconds(60));
        }
    }

    /** Without one-sided calls: one send per block, a few in flight; the decode side receives them in order. */
    private static long prefillSendRecv(Backend backend, Communicator comm, int requests, int layers, int perLayer, int bytes) {
        ReactiveCommunicator shape = ReactiveCommunicator.of(comm);
        return blocks(backend, comm, requests, layers, perLayer, bytes)
                .concatMap(b -> shape.send(b, bytes, DataType.UINT8, 1).thenReturn(1L), 1)
                .count().block();
    }

    private static void decodeSendRecv(Backend backend, Communicator comm, Decoder decoder, long total) {
        Buffer into = backend.allocate(comm.device(), decoder.blockBytes);
        try {
            for (long i = 0; i < total; i++) {
                comm.recv(into, decoder.blockBytes, DataType.UINT8, 0).get(120, TimeUnit.SECONDS);
                ByteBuffer data = ByteBuffer.allocateDirect(decoder.blockBytes).order(ByteOrder.nativeOrder());
                into.read(0, data);
                decoder.accept(i, data);
            }
        } catch (Exception e) {
            throw e instanceof RuntimeException r ? r : new IllegalStateException(e);
        } finally {
            into.close();
        }
    }

    /** The decode side: checks each block, counts a request's blocks, "generates" once all arrived. */
    static final class Decoder {
        final int requests;
        final int layers;
        final int perLayer;
        final int blockBytes;
        final int delayMs;
        final long start;
        final AtomicLongArray arrived;
        final AtomicLong wrong = new AtomicLong();
        final AtomicLong received = new AtomicLong();

        Decoder(int requests, int layers, int perLayer, int blockBytes, int delayMs, long start) {
            this.requests = requests;
            this.layers = layers;
            this.perLayer = perLayer;
            this.blockBytes = blockBytes;
            this.delayMs = delayMs;
            this.start = start;
            this.arrived = new AtomicLongArray(requests);
        }

        void accept(long sequence, ByteBuffer data) {
            long[] c = KvBlocks.coordinates(sequence, requests, layers, perLayer);
            if (KvBlocks.wrong(data, c[0], c[1], c[2]) > 0) wrong.incrementAndGet();
            long n = received.incrementAndGet();
            if (arrived.incrementAndGet((int) c[0]) == (long) layers * perLayer) {
                System.out.printf("decode: request %d complete after %.1f ms, first token generated%n", c[0],
                        (System.nanoTime() - start) / 1e6);
            }
            if (n % 1000 == 0) report("decode progress:", n, blockBytes, start);
            if (delayMs > 0) {
                try {
                    Thread.sleep(delayMs); // a slow decoder, on purpose: the prefill side must slow down with it
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        void finish() {
            report("decode received", received.get(), blockBytes, start);
            System.out.println("decode: " + received.get() + " blocks, " + wrong.get() + " wrong, all " + requests
                    + " requests complete: " + (received.get() == (long) requests * layers * perLayer));
        }
    }
}
