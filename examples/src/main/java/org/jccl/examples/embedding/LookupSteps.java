package org.jccl.examples.embedding;

import java.time.Duration;
import java.util.Arrays;
import org.jccl.core.Backend;
import org.jccl.core.Buffer;
import org.jccl.core.DataType;
import org.jccl.reactive.ReactiveCommunicator;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * The one ordered issue path of the service. Every step is the same collectives on every rank, in the same order:
 *
 * <ol>
 *   <li>broadcast from rank 0 of the step's descriptor (lookup or stop, ids per shard, compute time, sequence);</li>
 *   <li>all-to-all of the ids: rank 0 sends each shard its ids (the others send padding);</li>
 *   <li>each rank looks its ids up in its own shard;</li>
 *   <li>all-to-all of the rows back: rank 0 receives each shard's rows and answers the request.</li>
 * </ol>
 *
 * Rank 0 turns concurrent HTTP requests into one stream and runs one step per request with {@code concatMap}; the
 * others run steps until the stop descriptor. Since only rank 0 decides what comes next, and tells the others before
 * anything else of the step, no interleaving of requests can make ranks issue in different orders. Every signal and
 * buffer access happens on one single-threaded {@code steps} scheduler: never on jccl's event thread (a buffer read
 * from a GPU is a blocking copy) nor on an HTTP thread.
 */
final class LookupSteps implements AutoCloseable {
    /** Most ids in one request. */
    static final int MAX_IDS = 256;
    private static final int LOOKUP = 1;
    private static final int STOP = 2;
    private static final int DESCRIPTOR_INTS = 4;

    private final ReactiveCommunicator comm;
    private final Scheduler steps;
    private final int rank;
    private final int size;
    private final EmbeddingTable table;
    private final Buffer descriptor;
    private final Buffer idsOut;
    private final Buffer idsIn;
    private final Buffer rowsOut;
    private final Buffer rowsIn;
    private long sequence;
    private long completed;
    private long orderHash = 17;

    LookupSteps(Backend backend, ReactiveCommunicator comm, Scheduler steps) {
        this.comm = comm.publishOn(steps);
        this.steps = steps;
        this.rank = comm.rank();
        this.size = comm.size();
        this.table = new EmbeddingTable(rank, size);
        int device = comm.communicator().device();
        this.descriptor = backend.allocate(device, 4L * DESCRIPTOR_INTS);
        this.idsOut = backend.allocate(device, 4L * size * MAX_IDS);
        this.idsIn = backend.allocate(device, 4L * size * MAX_IDS);
        this.rowsOut = backend.allocate(device, 4L * size * MAX_IDS * EmbeddingTable.DIM);
        this.rowsIn = backend.allocate(device, 4L * size * MAX_IDS * EmbeddingTable.DIM);
    }

    /** Rank 0: one step per request not yet abandoned, in arrival order, then the stop step. */
    Mono<Void> lead(Flux<LookupRequest> requests) {
        return requests.publishOn(steps)
                .concatMap(r -> r.isAbandoned() ? Mono.empty() : step(r).doOnError(r::fail))
                .then(Mono.defer(() -> step(null)))
                .then();
    }

    /** Ranks other than 0: steps until rank 0 stops. */
    Mono<Void> follow() {
        return Mono.defer(() -> step(null)).subscribeOn(steps).repeat().takeWhile(more -> more).then();
    }

    /** Steps completed (this rank). */
    long completed() {
        return completed;
    }

    /** A hash of the sequence numbers of every step, in the order this rank ran them: equal on all ranks. */
    long orderHash() {
        return orderHash;
    }

    /** One step; {@code request} is rank 0's (null on the others, and for rank 0's stop step). Emits "continue". */
    private Mono<Boolean> step(@Nullable LookupRequest request) {
        Route route = null;
        if (rank == 0) {
            route = request == null ? null : Route.of(request.ids, size);
            int[] d = request == null ? new int[] {STOP, 0, 0, 0}
                    : new int[] {LOOKUP, route.perShard, request.computeMillis, (int) sequence++};
            descriptor.write(0, d);
            if (route != null) idsOut.write(0, route.packed);
        }
        Route routed = route;
        return comm.broadcast(descriptor, descriptor, DESCRIPTOR_INTS, DataType.INT32, 0).then(Mono.defer(() -> {
            int[] d = descriptor.readInts(0, DESCRIPTOR_INTS);
            if (d[0] == STOP) return Mono.just(false);
            int perShard = d[1];
            if (rank != 0) {
                int[] padding = new int[size * perShard];
                Arrays.fill(padding, -1);
                idsOut.write(0, padding);
            }
            Mono<Long> compute = d[2] > 0 ? Mono.delay(Duration.ofMillis(d[2]), steps) : Mono.just(0L);
            long rowFloats = (long) perShard * EmbeddingTable.DIM;
            return comm.allToAll(idsOut, idsIn, perShard, DataType.INT32)
                    .then(compute)
                    .then(Mono.fromRunnable(() -> lookUp(perShard)))
                    .then(comm.allToAll(rowsOut, rowsIn, rowFloats, DataType.FLOAT32))
                    .then(Mono.fromCallable(() -> {
                        completed++;
                        orderHash = orderHash * 31 + d[3];
                        if (request != null && routed != null) request.succeed(routed.gather(rowsIn));
                        return true;
                    }));
        }));
    }

    /** Looks up the ids every rank sent this shard, into the row block going back to that rank. */
    private void lookUp(int perShard) {
        int[] ids = idsIn.readInts(0, size * perShard);
        float[] rows = new float[ids.length * EmbeddingTable.DIM];
        for (int i = 0; i < ids.length; i++) {
            if (ids[i] >= 0) table.lookup(ids[i], rows, i * EmbeddingTable.DIM);
        }
        rowsOut.write(0, rows);
    }

    @Override
    public void close() {
        descriptor.close();
        idsOut.close();
        idsIn.close();
        rowsOut.close();
        rowsIn.close();
    }

    /** Where a request's ids go: shard {@code s} gets block {@code s} of {@code perShard} ids, padded with -1. */
    private record Route(int[] packed, int perShard, int[] shardOf, int[] slotOf) {
        static Route of(int[] ids, int shards) {
            int[] count = new int[shards];
            int[] shardOf = new int[ids.length];
            int[] slotOf = new int[ids.length];
            for (int i = 0; i < ids.length; i++) {
                shardOf[i] = EmbeddingTable.shardOf(ids[i], shards);
                slotOf[i] = count[shardOf[i]]++;
            }
            int perShard = Arrays.stream(count).max().orElse(0);
            int[] packed = new int[shards * perShard];
            Arrays.fill(packed, -1);
            for (int i = 0; i < ids.length; i++) packed[shardOf[i] * perShard + slotOf[i]] = ids[i];
            return new Route(packed, perShard, shardOf, slotOf);
        }

        /** The rows received from the shards, in the order of the request's ids. */
        float[][] gather(Buffer rowsIn) {
            float[] all = rowsIn.readFloats(0, packed.length * EmbeddingTable.DIM);
            float[][] out = new float[shardOf.length][];
            for (int i = 0; i < out.length; i++) {
                int at = (shardOf[i] * perShard + slotOf[i]) * EmbeddingTable.DIM;
                out[i] = Arrays.copyOfRange(all, at, at + EmbeddingTable.DIM);
            }
            return out;
        }
    }
}
