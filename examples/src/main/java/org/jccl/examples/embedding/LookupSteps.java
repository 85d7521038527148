package org.jccl.examples.embedding;

import io.micrometer.observation.Observation;
import java.time.Duration;
import java.util.Arrays;
import org.jccl.core.Backend;
import org.jccl.core.Buffer;
import org.jccl.core.DataType;
import org.jccl.examples.serving.OrderedSteps;
import org.jccl.reactive.ReactiveCommunicator;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * A lookup as one ordered step ({@link OrderedSteps}) per request, after the descriptor's broadcast (parameters: ids
 * per shard, simulated compute time):
 *
 * <ol>
 *   <li>all-to-all of the ids: rank 0 sends each shard its ids (the others send padding);</li>
 *   <li>each rank looks its ids up in its own shard;</li>
 *   <li>all-to-all of the rows back: rank 0 receives each shard's rows and answers the request.</li>
 * </ol>
 */
final class LookupSteps extends OrderedSteps<LookupRequest> {
    /** Most ids in one request. */
    static final int MAX_IDS = 256;

    private final int rank;
    private final int size;
    private final EmbeddingTable table;
    private final Buffer idsOut;
    private final Buffer idsIn;
    private final Buffer rowsOut;
    private final Buffer rowsIn;
    private @Nullable Route route;

    LookupSteps(Backend backend, ReactiveCommunicator comm, Scheduler steps) {
        super(backend, comm, steps);
        this.rank = comm.rank();
        this.size = comm.size();
        this.table = new EmbeddingTable(rank, size);
        int device = comm.communicator().device();
        this.idsOut = backend.allocate(device, 4L * size * MAX_IDS);
        this.idsIn = backend.allocate(device, 4L * size * MAX_IDS);
        this.rowsOut = backend.allocate(device, 4L * size * MAX_IDS * EmbeddingTable.DIM);
        this.rowsIn = backend.allocate(device, 4L * size * MAX_IDS * EmbeddingTable.DIM);
    }

    @Override
    protected int[] parameters(LookupRequest request) {
        route = Route.of(request.ids, size);
        return new int[] {route.perShard, request.computeMillis};
    }

    @Override
    protected boolean skip(LookupRequest request) {
        return request.isAbandoned();
    }

    @Override
    protected void fail(LookupRequest request, Throwable error) {
        request.fail(error);
    }

    @Override
    protected @Nullable Observation observation(LookupRequest request) {
        return request.observation();
    }

    @Override
    protected Mono<Void> run(int[] parameters, @Nullable LookupRequest request) {
        int perShard = parameters[0];
        Route routed = request == null ? null : route;
        int[] ids = routed != null ? routed.packed : new int[size * perShard];
        if (routed == null) Arrays.fill(ids, -1);
        idsOut.write(0, ids);
        Mono<Long> compute = parameters[1] > 0 ? Mono.delay(Duration.ofMillis(parameters[1]), scheduler()) : Mono.just(0L);
        return comm.allToAll(idsOut, idsIn, perShard, DataType.INT32)
                .then(compute)
                .then(Mono.fromRunnable(() -> lookUp(perShard)))
                .then(comm.allToAll(rowsOut, rowsIn, (long) perShard * EmbeddingTable.DIM, DataType.FLOAT32))
                .then(Mono.fromRunnable(() -> {
                    if (request != null && routed != null) request.succeed(routed.gather(rowsIn));
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
        super.close();
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
