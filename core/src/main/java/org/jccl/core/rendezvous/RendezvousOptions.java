package org.jccl.core.rendezvous;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import org.jccl.core.config.JcclSettings;
import org.jccl.core.config.JcclSettings.Setting;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.net.NetLoops;

/**
 * Immutable settings of a rendezvous client or server, made by {@link #builder()} or read by
 * {@link #fromEnvironment()}. Setters of the builder check their argument; {@link Builder#build()} checks the
 * combination.
 */
public final class RendezvousOptions {
    /** Default server host: loopback. */
    public static final String DEFAULT_HOST = "127.0.0.1";
    /** Default port, as torchrun's. */
    public static final int DEFAULT_PORT = 29500;
    /** Default address a server listens on: loopback, so nothing off this host can connect unless configured. */
    public static final String DEFAULT_BIND_ADDRESS = "127.0.0.1";
    /** Default timeout of operations and of connecting: 5 minutes. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofMinutes(5);
    /** Default heartbeat interval: 5 seconds. */
    public static final Duration DEFAULT_HEARTBEAT_INTERVAL = Duration.ofSeconds(5);
    /** Default silence after which a peer is declared dead: 30 seconds. */
    public static final Duration DEFAULT_DEAD_AFTER = Duration.ofSeconds(30);
    /** Default time a new connection has to authenticate: 10 seconds. */
    public static final Duration DEFAULT_HANDSHAKE_TIMEOUT = Duration.ofSeconds(10);
    /** Default largest frame: 1 MiB. */
    public static final int DEFAULT_MAX_FRAME_BYTES = 1 << 20;
    /** Default bound on the store: 256 MiB of keys (UTF-8) and values in all. */
    public static final long DEFAULT_MAX_STORE_BYTES = 256L << 20;
    /** Default number of keys one client connection may have created and not deleted: 100 000. */
    public static final int DEFAULT_MAX_KEYS_PER_CLIENT = 100_000;
    /** Smallest allowed frame limit: a join and a few hundred bytes of addresses must fit. */
    public static final int MIN_MAX_FRAME_BYTES = 4096;
    /** Shortest accepted secret, in bytes. */
    public static final int MIN_SECRET_BYTES = 16;
    /** The rank of a client that takes part in no rank (a launcher or a monitoring tool). */
    public static final int NO_RANK = -1;
    /**
     * Default event loops: one daemon thread ({@code jccl-rendezvous-net-*}) shared by every server and client of
     * this JVM that uses the default, started with the first and stopped when the last closes.
     */
    public static final NetLoops DEFAULT_LOOPS = NetLoops.owned("jccl-rendezvous-net", 1);

    private final String host;
    private final int port;
    private final String bindAddress;
    private final int rank;
    private final int worldSize;
    private final int localRank;
    private final byte[] secret;
    private final StoreHost storeHost;
    private final Duration timeout;
    private final Duration heartbeatInterval;
    private final Duration deadAfter;
    private final Duration handshakeTimeout;
    private final int maxFrameBytes;
    private final long maxStoreBytes;
    private final int maxKeysPerClient;
    private final NetLoops loops;

    private RendezvousOptions(Builder b) {
        this.host = b.host;
        this.port = b.port;
        this.bindAddress = b.bindAddress;
        this.rank = b.rank;
        this.worldSize = b.worldSize;
        this.localRank = b.localRank;
        this.secret = b.secret.clone();
        this.storeHost = b.storeHost;
        this.timeout = b.timeout;
        this.heartbeatInterval = b.heartbeatInterval;
        this.deadAfter = b.deadAfter;
        this.handshakeTimeout = b.handshakeTimeout;
        this.maxFrameBytes = b.maxFrameBytes;
        this.maxStoreBytes = b.maxStoreBytes;
        this.maxKeysPerClient = b.maxKeysPerClient;
        this.loops = b.loops;
    }

    /** A builder with the documented defaults and no secret (which {@link Builder#build()} requires). */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder holding these options, to derive changed ones. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.host = host;
        b.port = port;
        b.bindAddress = bindAddress;
        b.rank = rank;
        b.worldSize = worldSize;
        b.localRank = localRank;
        b.secret = secret.clone();
        b.storeHost = storeHost;
        b.timeout = timeout;
        b.heartbeatInterval = heartbeatInterval;
        b.deadAfter = deadAfter;
        b.handshakeTimeout = handshakeTimeout;
        b.maxFrameBytes = maxFrameBytes;
        b.maxStoreBytes = maxStoreBytes;
        b.maxKeysPerClient = maxKeysPerClient;
        b.loops = loops;
        return b;
    }

    /**
     * Options from system properties and environment variables ({@link JcclSettings}): the rank, world size, local
     * rank and master from {@link JobEnvironment#detect()} (jccl's keys, then torchrun's, then Slurm's, Open MPI's
     * or a Kubernetes indexed Job's), the secret from {@code JCCL_RENDEZVOUS_SECRET} or the file
     * {@code JCCL_RENDEZVOUS_SECRET_FILE}, and the {@code JCCL_RENDEZVOUS_*} limits.
     *
     * @throws InvalidArgumentException if a value cannot be read or the secret is missing
     */
    public static RendezvousOptions fromEnvironment() {
        return fromEnvironment(System.getenv());
    }

    /**
     * As {@link #fromEnvironment()}, with the variables read from {@code env} instead of this process's.
     *
     * @throws InvalidArgumentException if a value cannot be read or the secret is missing
     */
    public static RendezvousOptions fromEnvironment(Map<String, String> env) {
        JobEnvironment job = JobEnvironment.detect(env);
        Builder b = builder()
                .host(job.masterAddr())
                .port(job.masterPort())
                .rank(job.rank())
                .worldSize(job.worldSize())
                .localRank(job.localRank())
                .bindAddress(JcclSettings.RENDEZVOUS_BIND.value(env))
                .storeHost(storeHost(JcclSettings.RENDEZVOUS_SERVER.value(env)))
                .timeout(duration(JcclSettings.RENDEZVOUS_TIMEOUT, env))
                .heartbeatInterval(duration(JcclSettings.RENDEZVOUS_HEARTBEAT, env))
                .deadAfter(duration(JcclSettings.RENDEZVOUS_DEAD_AFTER, env))
                .handshakeTimeout(duration(JcclSettings.RENDEZVOUS_HANDSHAKE_TIMEOUT, env))
                .maxFrameBytes(integer(JcclSettings.RENDEZVOUS_MAX_FRAME, env, DEFAULT_MAX_FRAME_BYTES))
                .maxStoreBytes(longInteger(JcclSettings.RENDEZVOUS_MAX_STORE_BYTES, env, DEFAULT_MAX_STORE_BYTES))
                .maxKeysPerClient(integer(JcclSettings.RENDEZVOUS_MAX_KEYS_PER_CLIENT, env,
                        DEFAULT_MAX_KEYS_PER_CLIENT));
        if (JcclSettings.RENDEZVOUS_SECRET.isSet(env)) {
            b.secret(JcclSettings.RENDEZVOUS_SECRET.value(env));
        } else if (JcclSettings.RENDEZVOUS_SECRET_FILE.isSet(env)) {
            b.secret(readSecretFile(Path.of(JcclSettings.RENDEZVOUS_SECRET_FILE.value(env))));
        } else {
            throw new InvalidArgumentException("no rendezvous secret: set " + JcclSettings.RENDEZVOUS_SECRET + " or "
                    + JcclSettings.RENDEZVOUS_SECRET_FILE + " (the launcher sets it for its ranks)");
        }
        return b.build();
    }

    /** Reads a secret file (its content, trimmed), with a clear error if it cannot. */
    public static String readSecretFile(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8).trim();
        } catch (IOException e) {
            throw new InvalidArgumentException("cannot read the rendezvous secret file " + file + ": " + e.getMessage());
        }
    }

    private static Duration duration(Setting s, Map<String, String> env) {
        return JcclSettings.parseDuration(s.value(env), s);
    }

    private static int integer(Setting s, Map<String, String> env, int defaultValue) {
        long n = longInteger(s, env, defaultValue);
        if (n != (int) n) throw new InvalidArgumentException(s + " must be an integer below 2^31, not " + n);
        return (int) n;
    }

    private static long longInteger(Setting s, Map<String, String> env, long defaultValue) {
        String v = s.value(env);
        if (v.isEmpty()) return defaultValue;
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new InvalidArgumentException(s + " must be an integer, not '" + v + "'");
        }
    }

    private static StoreHost storeHost(String v) {
        try {
            return StoreHost.valueOf(v.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new InvalidArgumentException(JcclSettings.RENDEZVOUS_SERVER + " must be rank0 or external, not " + v);
        }
    }

    /** The server's host name or address, for clients. */
    public String host() {
        return host;
    }

    /** The server's port; 0 for a server means any free port. */
    public int port() {
        return port;
    }

    /** The address a server listens on. */
    public String bindAddress() {
        return bindAddress;
    }

    /** This process's rank, or {@link #NO_RANK}. */
    public int rank() {
        return rank;
    }

    /** The number of ranks, or 0 if not known (then ranks are not range-checked). */
    public int worldSize() {
        return worldSize;
    }

    /** This process's rank on its host. */
    public int localRank() {
        return localRank;
    }

    /** A copy of the shared secret. */
    public byte[] secret() {
        return secret.clone();
    }

    /** Who hosts the server. */
    public StoreHost storeHost() {
        return storeHost;
    }

    /** Default timeout of operations and of connecting. */
    public Duration timeout() {
        return timeout;
    }

    /** How often a client sends a heartbeat. */
    public Duration heartbeatInterval() {
        return heartbeatInterval;
    }

    /** Silence after which the server declares a rank dead, and a client the server. */
    public Duration deadAfter() {
        return deadAfter;
    }

    /** How long a new connection has to authenticate. */
    public Duration handshakeTimeout() {
        return handshakeTimeout;
    }

    /** The largest frame, in bytes including its length field. */
    public int maxFrameBytes() {
        return maxFrameBytes;
    }

    /** The most bytes of keys (UTF-8) and values a server stores in all. */
    public long maxStoreBytes() {
        return maxStoreBytes;
    }

    /** The most keys one client connection may have created (and not deleted) on a server. */
    public int maxKeysPerClient() {
        return maxKeysPerClient;
    }

    /** The event loops a server or client runs on ({@link #DEFAULT_LOOPS} unless set). */
    public NetLoops loops() {
        return loops;
    }

    /** Everything but the secret. */
    @Override
    public String toString() {
        return "RendezvousOptions[host=" + host + ", port=" + port + ", bind=" + bindAddress + ", rank=" + rank
                + ", worldSize=" + worldSize + ", localRank=" + localRank + ", storeHost=" + storeHost
                + ", timeout=" + timeout + ", heartbeat=" + heartbeatInterval + ", deadAfter=" + deadAfter
                + ", handshakeTimeout=" + handshakeTimeout + ", maxFrameBytes=" + maxFrameBytes
                + ", maxStoreBytes=" + maxStoreBytes + ", maxKeysPerClient=" + maxKeysPerClient + ", loops=" + loops + "]";
    }

    /** Builds {@link RendezvousOptions}; not thread-safe. */
    public static final class Builder {
        private String host = DEFAULT_HOST;
        private int port = DEFAULT_PORT;
        private String bindAddress = DEFAULT_BIND_ADDRESS;
        private int rank = NO_RANK;
        private int worldSize;
        private int localRank;
        private byte[] secret = new byte[0];
        private StoreHost storeHost = StoreHost.RANK0;
        private Duration timeout = DEFAULT_TIMEOUT;
        private Duration heartbeatInterval = DEFAULT_HEARTBEAT_INTERVAL;
        private Duration deadAfter = DEFAULT_DEAD_AFTER;
        private Duration handshakeTimeout = DEFAULT_HANDSHAKE_TIMEOUT;
        private int maxFrameBytes = DEFAULT_MAX_FRAME_BYTES;
        private long maxStoreBytes = DEFAULT_MAX_STORE_BYTES;
        private int maxKeysPerClient = DEFAULT_MAX_KEYS_PER_CLIENT;
        private NetLoops loops = DEFAULT_LOOPS;

        private Builder() {
        }

        /** The server's host name or address (clients). */
        public Builder host(String host) {
            Objects.requireNonNull(host, "host");
            if (host.isBlank()) throw new InvalidArgumentException("host must not be blank");
            this.host = host.trim();
            return this;
        }

        /** The server's port, 0..65535 (0: a server picks a free one). */
        public Builder port(int port) {
            if (port < 0 || port > 65535) throw new InvalidArgumentException("port must be 0..65535, not " + port);
            this.port = port;
            return this;
        }

        /** The address a server listens on ({@code 0.0.0.0} for every interface). */
        public Builder bindAddress(String bindAddress) {
            Objects.requireNonNull(bindAddress, "bindAddress");
            if (bindAddress.isBlank()) throw new InvalidArgumentException("bindAddress must not be blank");
            this.bindAddress = bindAddress.trim();
            return this;
        }

        /** This process's rank (0 or more), or {@link #NO_RANK}. */
        public Builder rank(int rank) {
            if (rank < NO_RANK) throw new InvalidArgumentException("rank must be >= 0 (or -1 for none), not " + rank);
            this.rank = rank;
            return this;
        }

        /** The number of ranks (0: unknown). */
        public Builder worldSize(int worldSize) {
            if (worldSize < 0) throw new InvalidArgumentException("worldSize must be >= 0, not " + worldSize);
            this.worldSize = worldSize;
            return this;
        }

        /** This process's rank on its host. */
        public Builder localRank(int localRank) {
            if (localRank < 0) throw new InvalidArgumentException("localRank must be >= 0, not " + localRank);
            this.localRank = localRank;
            return this;
        }

        /** The shared secret, at least {@link #MIN_SECRET_BYTES} bytes. */
        public Builder secret(byte[] secret) {
            Objects.requireNonNull(secret, "secret");
            this.secret = secret.clone();
            return this;
        }

        /** The shared secret as text (its UTF-8 bytes). */
        public Builder secret(String secret) {
            Objects.requireNonNull(secret, "secret");
            return secret(secret.getBytes(StandardCharsets.UTF_8));
        }

        /** Who hosts the server ({@link Rendezvous#fromEnvironment()} reads it). */
        public Builder storeHost(StoreHost storeHost) {
            this.storeHost = Objects.requireNonNull(storeHost, "storeHost");
            return this;
        }

        /** Default timeout of operations and of connecting (positive). */
        public Builder timeout(Duration timeout) {
            this.timeout = positive(timeout, "timeout");
            return this;
        }

        /** How often a client sends a heartbeat (positive, shorter than deadAfter). */
        public Builder heartbeatInterval(Duration heartbeatInterval) {
            this.heartbeatInterval = positive(heartbeatInterval, "heartbeatInterval");
            return this;
        }

        /** Silence after which a peer is declared dead (positive, longer than the heartbeat interval). */
        public Builder deadAfter(Duration deadAfter) {
            this.deadAfter = positive(deadAfter, "deadAfter");
            return this;
        }

        /** How long a new connection has to authenticate (positive). */
        public Builder handshakeTimeout(Duration handshakeTimeout) {
            this.handshakeTimeout = positive(handshakeTimeout, "handshakeTimeout");
            return this;
        }

        /** The largest frame in bytes, at least {@link #MIN_MAX_FRAME_BYTES}. */
        public Builder maxFrameBytes(int maxFrameBytes) {
            if (maxFrameBytes < MIN_MAX_FRAME_BYTES) {
                throw new InvalidArgumentException("maxFrameBytes must be >= " + MIN_MAX_FRAME_BYTES + ", not " + maxFrameBytes);
            }
            this.maxFrameBytes = maxFrameBytes;
            return this;
        }

        /**
         * The most bytes of keys (UTF-8) and values a server stores in all (at least 1). A write that would pass
         * it fails with {@link ErrorCode#LIMIT_EXCEEDED}; the server stores nothing and serves on.
         */
        public Builder maxStoreBytes(long maxStoreBytes) {
            if (maxStoreBytes < 1) throw new InvalidArgumentException("maxStoreBytes must be >= 1, not " + maxStoreBytes);
            this.maxStoreBytes = maxStoreBytes;
            return this;
        }

        /**
         * The most keys one client connection may have created and not deleted on a server (at least 1). Creating
         * one more fails with {@link ErrorCode#LIMIT_EXCEEDED}; replacing, counting or deleting its keys does not.
         */
        public Builder maxKeysPerClient(int maxKeysPerClient) {
            if (maxKeysPerClient < 1) {
                throw new InvalidArgumentException("maxKeysPerClient must be >= 1, not " + maxKeysPerClient);
            }
            this.maxKeysPerClient = maxKeysPerClient;
            return this;
        }

        /**
         * The event loops to run on: {@link #DEFAULT_LOOPS}, or {@code NetLoops.of(group)} to run on a group the
         * application already has (jccl never shuts that one down). A server keeps all its connections on one loop
         * of the group, so its state needs no locks.
         */
        public Builder loops(NetLoops loops) {
            this.loops = Objects.requireNonNull(loops, "loops");
            return this;
        }

        /**
         * The options.
         *
         * @throws InvalidArgumentException if the secret is shorter than {@link #MIN_SECRET_BYTES}, the heartbeat
         *                                  is not shorter than deadAfter, or the rank is not below the world size
         */
        public RendezvousOptions build() {
            if (secret.length < MIN_SECRET_BYTES) {
                throw new InvalidArgumentException("the rendezvous secret must have at least " + MIN_SECRET_BYTES
                        + " bytes (e.g. the output of `openssl rand -hex 32`), not " + secret.length);
            }
            if (heartbeatInterval.compareTo(deadAfter) >= 0) {
                throw new InvalidArgumentException("heartbeatInterval (" + heartbeatInterval
                        + ") must be shorter than deadAfter (" + deadAfter + ")");
            }
            if (worldSize > 0 && rank >= worldSize) {
                throw new InvalidArgumentException("rank " + rank + " is not below worldSize " + worldSize);
            }
            return new RendezvousOptions(this);
        }

        private static Duration positive(Duration d, String name) {
            Objects.requireNonNull(d, name);
            if (d.isNegative() || d.isZero()) throw new InvalidArgumentException(name + " must be positive, not " + d);
            return d;
        }
    }
}
