package org.jccl.rma.kv;

import java.time.Duration;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.rendezvous.RendezvousClient;
import org.jspecify.annotations.Nullable;

/**
 * How a KV sender or receiver behaves. Immutable; {@code KvOptions.builder()…build()}, or {@link #DEFAULT}.
 *
 * @param path              how data moves ({@link KvPathKind#AUTO}: the fastest both ranks share); the sender chooses
 * @param slots             staged paths: the receiver's staging area is cut into this many slots, shared fairly among
 *                          its senders (default 4)
 * @param maxGrantedBlocks  receiver: at most this many destination blocks granted to requests not yet complete
 *                          (default: no limit beyond the allocator's)
 * @param connectTimeout    how long a sender waits for its receiver to be reachable (default 30 s)
 * @param rendezvous        where ranks in other processes publish and find each other's links; null for ranks of one
 *                          process only
 */
public record KvOptions(KvPathKind path, int slots, int maxGrantedBlocks, Duration connectTimeout,
                        @Nullable RendezvousClient rendezvous) {
    public static final KvOptions DEFAULT = builder().build();

    public KvOptions {
        Errors.requireArgument(path, "path");
        Errors.requireArgument(connectTimeout, "connectTimeout");
        if (slots <= 0) throw new InvalidArgumentException("slots must be positive, not " + slots);
        if (maxGrantedBlocks <= 0) throw new InvalidArgumentException("maxGrantedBlocks must be positive, not " + maxGrantedBlocks);
        if (connectTimeout.isNegative() || connectTimeout.isZero()) {
            throw new InvalidArgumentException("connectTimeout must be positive, not " + connectTimeout);
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    public static final class Builder {
        private KvPathKind path = KvPathKind.AUTO;
        private int slots = 4;
        private int maxGrantedBlocks = Integer.MAX_VALUE;
        private Duration connectTimeout = Duration.ofSeconds(30);
        private @Nullable RendezvousClient rendezvous;

        private Builder() {
        }

        public Builder path(KvPathKind path) {
            this.path = path;
            return this;
        }

        public Builder slots(int slots) {
            this.slots = slots;
            return this;
        }

        public Builder maxGrantedBlocks(int maxGrantedBlocks) {
            this.maxGrantedBlocks = maxGrantedBlocks;
            return this;
        }

        public Builder connectTimeout(Duration connectTimeout) {
            this.connectTimeout = connectTimeout;
            return this;
        }

        public Builder rendezvous(@Nullable RendezvousClient rendezvous) {
            this.rendezvous = rendezvous;
            return this;
        }

        public KvOptions build() {
            return new KvOptions(path, slots, maxGrantedBlocks, connectTimeout, rendezvous);
        }
    }
}
