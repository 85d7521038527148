package org.jccl.reactive;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Jccl;
import org.jccl.core.Operation;
import org.jccl.core.ReduceOp;
import org.jccl.core.rendezvous.Rendezvous;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * One rank per process of the reactive API, joined through the rendezvous (jccl's launcher, torchrun, Slurm): every
 * collective as a {@link Mono} (each rank as root where there is one), a send/recv ring as a {@link ReactiveGroup}, a
 * bounded pipeline and a barrier, every value checked; {@code gpu} on the rank's local GPU, else the host backend over
 * TCP. Prints the rank's summary and exits 1 when a value was wrong.
 */
public final class ReactiveRankMain {
    static final int COUNT = 1000;
    static final int PIPELINED = 64;
    private static final Duration WAIT = Duration.ofSeconds(60);

    private final Backend backend;
    private final ReactiveCommunicator comm;
    private final int rank;
    private final int size;
    private final List<Buffer> buffers = new ArrayList<>();
    private final List<String> wrong = new ArrayList<>();
    private long checked;

    private ReactiveRankMain(Backend backend, Communicator communicator) {
        this.backend = backend;
        this.comm = ReactiveCommunicator.of(communicator);
        this.rank = communicator.rank();
        this.size = communicator.size();
    }

    /** Runs one rank; {@code args[0]} is {@code gpu} or {@code host}. */
    public static void main(String[] args) throws Exception {
        boolean gpu = args.length > 0 && args[0].equals("gpu");
        Backend backend = Jccl.backend(gpu ? BackendKind.NCCL : BackendKind.HOST);
        ReactiveRankMain checks;
        try (Rendezvous rdzv = Rendezvous.fromEnvironment();
             Communicator c = backend.initRank(rdzv.shareUniqueIdNow("id", backend::newUniqueId), rdzv.worldSize(), rdzv.rank(),
                     gpu ? rdzv.localRank() : -1).get(120, TimeUnit.SECONDS)) {
            checks = new ReactiveRankMain(backend, c);
            try {
                checks.run();
            } finally {
                checks.buffers.forEach(Buffer::close);
            }
        }
        for (String w : checks.wrong) System.out.println("rank " + checks.rank + " wrong: " + w);
        System.out.println("rank " + checks.rank + ": " + checks.checked + " values checked, "
                + (checks.wrong.isEmpty() ? "all right" : checks.wrong.size() + " wrong"));
        System.exit(checks.wrong.isEmpty() ? 0 : 1);
    }

    private void run() {
        Buffer send = filled(COUNT, i -> rank + i);
        Buffer recv = filled(COUNT, i -> -1);
        await(comm.allReduce(send, recv, COUNT, DataType.FLOAT32, ReduceOp.SUM));
        check("allReduce", recv, COUNT, i -> size * i + size * (size - 1) / 2f);
        for (int root = 0; root < size; root++) {
            Buffer b = filled(COUNT, i -> rank * 1000 + i);
            await(comm.broadcast(b, b, COUNT, DataType.FLOAT32, root));
            int r = root;
            check("broadcast from " + root, b, COUNT, i -> r * 1000 + i);
            Buffer max = filled(COUNT, i -> -1);
            await(comm.reduce(send, max, COUNT, DataType.FLOAT32, ReduceOp.MAX, root));
            if (rank == root) check("reduce to " + root, max, COUNT, i -> size - 1 + i);
        }
        Buffer gathered = filled(COUNT * size, i -> -1);
        await(comm.allGather(filled(COUNT, i -> rank * 1000 + i), gathered, COUNT, DataType.FLOAT32));
        check("allGather", gathered, COUNT * size, k -> k / COUNT * 1000 + k % COUNT);
        Buffer scattered = filled(COUNT, i -> -1);
        await(comm.reduceScatter(filled(COUNT * size, k -> rank + k), scattered, COUNT, DataType.FLOAT32, ReduceOp.SUM));
        check("reduceScatter", scattered, COUNT, i -> size * (rank * COUNT + i) + size * (size - 1) / 2f);
        Buffer exchanged = filled(COUNT * size, i -> -1);
        await(comm.allToAll(filled(COUNT * size, k -> rank * 1000 + k / COUNT * 10), exchanged, COUNT, DataType.FLOAT32));
        check("allToAll", exchanged, COUNT * size, k -> k / COUNT * 1000 + rank * 10);
        Buffer fromLeft = filled(COUNT, i -> -1);
        int left = (rank - 1 + size) % size;
        await(ReactiveGroup.create()
                .add(comm, Operation.recv(fromLeft, COUNT, DataType.FLOAT32, left))
                .add(comm, Operation.send(filled(COUNT, i -> rank * 7 + i), COUNT, DataType.FLOAT32, (rank + 1) % size))
                .submit());
        check("send/recv ring", fromLeft, COUNT, i -> left * 7 + i);
        List<Buffer> items = new ArrayList<>();
        for (int k = 0; k < PIPELINED; k++) {
            int item = k;
            items.add(filled(1, i -> rank + item));
        }
        List<Buffer> done = comm.pipeline(Flux.fromIterable(items),
                b -> Operation.allReduce(b, b, 1, DataType.FLOAT32, ReduceOp.SUM), 8).collectList().block(WAIT);
        if (done == null || !done.equals(items)) wrong.add("pipeline: items out of order or missing");
        for (int k = 0; k < PIPELINED; k++) {
            int item = k;
            check("pipeline item " + k, items.get(k), 1, i -> size * item + size * (size - 1) / 2f);
        }
        await(comm.barrier());
    }

    private interface Values {
        float at(int i);
    }

    private Buffer filled(int count, Values values) {
        float[] v = new float[count];
        for (int i = 0; i < count; i++) v[i] = values.at(i);
        Buffer b = backend.allocate(comm.communicator().device(), 4L * count);
        buffers.add(b);
        b.write(0, v);
        return b;
    }

    private void check(String what, Buffer b, int count, Values expected) {
        float[] got = b.readFloats(0, count);
        for (int i = 0; i < count; i++) {
            checked++;
            if (got[i] != expected.at(i)) {
                wrong.add(what + ": element " + i + " is " + got[i] + ", expected " + expected.at(i));
                return;
            }
        }
    }

    private static void await(Mono<Void> operation) {
        operation.block(WAIT);
    }
}
