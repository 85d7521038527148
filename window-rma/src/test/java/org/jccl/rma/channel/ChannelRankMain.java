package org.jccl.rma.channel;

import java.time.Duration;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Jccl;
import org.jccl.core.UniqueId;
import org.jccl.core.rendezvous.Rendezvous;
import org.jccl.reactive.ReactiveCommunicator;
import org.jccl.rma.OneSided;
import org.jccl.rma.SignalWait;
import org.jccl.rma.Window;
import org.jccl.rma.WindowFlag;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

/**
 * A rank of a two-process job (rank 0 produces, rank 1 consumes), joined through the rendezvous: {@code check} puts
 * random data across the processes and streams blocks of known content through a channel, each checked;
 * {@code endless} streams until the other process dies, then reports how the failure looked. The host backend, or
 * with a second argument {@code gpu} the GPU backend on the rank's local GPU (one process per GPU).
 */
public final class ChannelRankMain {
    static final int SLOTS = 8;
    static final int BLOCK = 4096;

    private ChannelRankMain() {
    }

    public static void main(String[] args) throws Exception {
        String mode = args.length == 0 ? "check" : args[0];
        boolean gpu = args.length > 1 && args[1].equals("gpu");
        Backend backend = gpu ? Jccl.backend() : Jccl.backend(BackendKind.HOST);
        try (Rendezvous rdzv = Rendezvous.fromEnvironment()) {
            int rank = rdzv.rank();
            UniqueId id = rdzv.shareUniqueIdNow("id", backend::newUniqueId);
            int device = gpu ? rdzv.localRank() : -1;
            Communicator comm = backend.initRank(id, rdzv.worldSize(), rank, device).get(60, TimeUnit.SECONDS);
            System.out.println("rank " + rank + " on " + comm.describe() + " device " + device);
            if (mode.equals("check")) {
                putAcrossProcesses(comm);
                channel(backend, comm, 500);
            } else {
                channel(backend, comm, Long.MAX_VALUE);
            }
            comm.close();
        }
    }

    /** Rank 0 puts random ints into rank 1's window; rank 1 checks them after its wait. */
    private static void putAcrossProcesses(Communicator comm) throws Exception {
        OneSided rma = OneSided.of(comm);
        Window w = rma.register(rma.allocate(1 << 20), WindowFlag.COLL_SYMMETRIC).get(60, TimeUnit.SECONDS);
        int[] data = new Random(5).ints(70_000).toArray(); // larger than one network frame
        if (comm.rank() == 0) {
            Buffer source = w.buffer().slice(1 << 19, 4L * data.length);
            source.write(0, data);
            rma.putSignal(w, source, data.length, DataType.INT32, 1, 4096).get(60, TimeUnit.SECONDS);
        } else {
            rma.waitSignal(SignalWait.of(0, 1)).get(60, TimeUnit.SECONDS);
            boolean same = Arrays.equals(data, w.buffer().readInts(4096, data.length));
            System.out.println("put across processes: " + (same ? "identical" : "DIFFERENT"));
        }
        w.closeAsync().get(60, TimeUnit.SECONDS);
        w.buffer().close();
    }

    private static void channel(Backend backend, Communicator comm, long blocks) {
        ReactiveCommunicator shape = ReactiveCommunicator.of(comm);
        BlockChannel ch = BlockChannel.open(shape, 0, 1, SLOTS, BLOCK).block(Duration.ofSeconds(60));
        if (comm.rank() == 0) {
            Buffer staging = backend.allocate(comm.device(), (long) BLOCK * SLOTS * 2);
            Flux<Buffer> source = Flux.generate(() -> 0L, (i, sink) -> {
                Buffer b = staging.slice((i % (SLOTS * 2)) * BLOCK, BLOCK);
                b.write(0, new long[] {i, i * 7919});
                sink.next(b);
                if (i + 1 == blocks) sink.complete();
                return i + 1;
            });
            source = source.subscribeOn(Schedulers.boundedElastic()); // the writes copy to the device: off the event thread
            try {
                System.out.println("producer sent " + ch.send(source).block(Duration.ofSeconds(120)));
            } catch (RuntimeException e) {
                System.out.println("producer failed with " + e);
            }
        } else {
            AtomicLong received = new AtomicLong();
            AtomicLong wrong = new AtomicLong();
            try {
                // reads copy from the device synchronously: off the event thread
                ch.receive().publishOn(Schedulers.boundedElastic()).doOnNext(b -> {
                    long[] v = b.data().readLongs(0, 2);
                    if (v[0] != b.sequence() || v[1] != b.sequence() * 7919) wrong.incrementAndGet();
                    if (received.incrementAndGet() == 10) System.out.println("consumer receiving");
                    b.release();
                }).blockLast(Duration.ofSeconds(120));
                System.out.println("consumer received " + received.get() + ", wrong " + wrong.get());
            } catch (RuntimeException e) {
                System.out.println("consumer failed with " + e.getClass().getSimpleName() + ": " + e.getMessage());
            }
        }
        if (blocks != Long.MAX_VALUE) ch.close().block(Duration.ofSeconds(60));
    }
}
