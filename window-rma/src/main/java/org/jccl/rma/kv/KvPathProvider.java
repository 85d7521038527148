package org.jccl.rma.kv;

import java.util.concurrent.CompletableFuture;

/**
 * Supplies a {@link KvDirectPath} for a pool, found with {@link java.util.ServiceLoader}: {@code device-api} provides
 * the LSA kernel path. {@link #open} is collective: every rank of the pool's communicator calls it in the same order,
 * during {@link KvPool#allocate}, and every rank must come to the same answer.
 */
public interface KvPathProvider {
    /** The path it makes. */
    KvPathKind kind();

    /**
     * Opens the path on {@code pool} (e.g. creates a device communicator), or completes exceptionally, on every rank
     * alike, where it cannot (no device API, no load/store reach); the pool then runs without it.
     */
    CompletableFuture<KvDirectPath> open(KvPool pool);
}
