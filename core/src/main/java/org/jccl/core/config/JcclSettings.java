package org.jccl.core.config;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jccl.core.TimeoutPolicy;
import org.jccl.core.error.InvalidArgumentException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every configuration key of jccl, in one place: a system property and the environment variable that stands in
 * for it (the property wins). NCCL's own {@code NCCL_*} variables are not read here; they pass through to the
 * library untouched, and {@link #NCCL_ENV_PREFIX} properties can set them. At the first backend's start one INFO line
 * of at most 120 characters names jccl's version, the backend, its libraries and devices, and the settings that differ
 * from their defaults where room allows; the whole table is logged at DEBUG.
 */
public final class JcclSettings {
    private static final Logger LOG = LoggerFactory.getLogger(JcclSettings.class);
    private static final AtomicBoolean LOGGED = new AtomicBoolean();

    /** {@code auto} (GPU if loadable and a device is present, else host), {@code nccl}, {@code rccl}, {@code host}. */
    public static final Setting BACKEND = new Setting("jccl.backend", "JCCL_BACKEND", "auto");
    /** The NCCL library to load: a file path or a name for {@code dlopen}. */
    public static final Setting NCCL_LIBRARY = new Setting("jccl.nccl.library", "JCCL_NCCL_LIBRARY", "libnccl.so.2");
    /** The CUDA runtime to load; by default {@code libcudart.so.13}, then {@code .12}. */
    public static final Setting CUDA_RUNTIME = new Setting("jccl.cuda.runtime", "JCCL_CUDA_RUNTIME", "libcudart.so.13:libcudart.so.12");
    /** The RCCL library to load. */
    public static final Setting RCCL_LIBRARY = new Setting("jccl.rccl.library", "JCCL_RCCL_LIBRARY", "librccl.so:librccl.so.1");
    /** The HIP runtime to load. */
    public static final Setting HIP_RUNTIME = new Setting("jccl.hip.runtime", "JCCL_HIP_RUNTIME", "libamdhip64.so:libamdhip64.so.6");
    /** The CUDA driver API, for kernels launched from Java ({@code cuLibraryLoadData}, {@code cuLaunchKernel}). */
    public static final Setting CUDA_DRIVER = new Setting("jccl.cuda.driver", "JCCL_CUDA_DRIVER", "libcuda.so.1");
    /** NVRTC, for kernels compiled at run time; without it images still load. */
    public static final Setting NVRTC_LIBRARY = new Setting("jccl.nvrtc.library", "JCCL_NVRTC_LIBRARY",
            "libnvrtc.so.13:libnvrtc.so.12:/usr/local/cuda/lib64/libnvrtc.so.13:/usr/local/cuda/lib64/libnvrtc.so.12");
    /** hipRTC, for kernels compiled at run time on the RCCL backend. */
    public static final Setting HIPRTC_LIBRARY = new Setting("jccl.hiprtc.library", "JCCL_HIPRTC_LIBRARY", "libhiprtc.so:libhiprtc.so.6");
    /** NCCL's headers for run-time compiled kernels; empty: the {@code include} folder beside the loaded library. */
    public static final Setting NCCL_INCLUDE = new Setting("jccl.nccl.include", "JCCL_NCCL_INCLUDE", "");
    /** The CUDA toolkit's headers for run-time compiled kernels; empty: {@code $CUDA_HOME/include}, else /usr/local/cuda. */
    public static final Setting CUDA_INCLUDE = new Setting("jccl.cuda.include", "JCCL_CUDA_INCLUDE", "");
    /** Where compiled kernels are cached per device architecture; {@code none} keeps them in memory only. */
    public static final Setting KERNEL_CACHE = new Setting("jccl.kernel.cache", "JCCL_KERNEL_CACHE", "~/.cache/jccl/kernels");
    /**
     * Where NCCL's (or RCCL's) own log goes: {@code stdout} (the library's default, or {@code NCCL_DEBUG_FILE}) or
     * {@code slf4j}, the SLF4J logger {@code nccl} at NCCL's levels, through a pipe ({@code NCCL_DEBUG=WARN} unless set).
     */
    public static final Setting NCCL_LOG = new Setting("jccl.nccl.log", "JCCL_NCCL_LOG", "stdout");
    /**
     * {@code on}: NCCL (2.28 and later) reports its profiler events to jccl's plugin, and they become JFR events
     * ({@code jccl.NcclActivity}) attributed to jccl's operations; {@code off} (default) loads no plugin.
     */
    public static final Setting NCCL_PROFILER = new Setting("jccl.nccl.profiler", "JCCL_NCCL_PROFILER", "off");
    /** Default work timeout ({@code 10m}, {@code 30s}, {@code 500ms} or ISO-8601); {@code 0} disables. */
    public static final Setting TIMEOUT = new Setting("jccl.timeout", "JCCL_TIMEOUT", "10m");
    /**
     * How long an operation may stay pending before jccl logs, once, what it waits for (on the host backend: the ranks
     * that have not joined it), long before its timeout ends it; {@code 0} disables.
     */
    public static final Setting STALL_REPORT = new Setting("jccl.stallReport", "JCCL_STALL_REPORT", "30s");
    /** {@code abort_communicator} or {@code report}. */
    public static final Setting TIMEOUT_POLICY = new Setting("jccl.timeoutPolicy", "JCCL_TIMEOUT_POLICY", "abort_communicator");
    /** How long {@code close()} drains pending work before aborting. */
    public static final Setting CLOSE_TIMEOUT = new Setting("jccl.closeTimeout", "JCCL_CLOSE_TIMEOUT", "30s");
    /** How long {@code abort()} waits for {@code ncclCommAbort} before giving up on it (it runs on its own thread). */
    public static final Setting ABORT_TIMEOUT = new Setting("jccl.abortTimeout", "JCCL_ABORT_TIMEOUT", "30s");
    /**
     * How long creating a communicator may take (a rank that never joins) before its future fails and the half-made
     * communicator is aborted; {@code 0} disables. Creation takes seconds where the work timeout may be milliseconds,
     * so it has its own limit.
     */
    public static final Setting INIT_TIMEOUT = new Setting("jccl.initTimeout", "JCCL_INIT_TIMEOUT", "10m");
    /** How long the event and launch threads busy-poll after activity before they back off. */
    public static final Setting SPIN = new Setting("jccl.spin", "JCCL_SPIN", "50us");
    /** The longest the event thread parks between polls while work is pending. */
    public static final Setting MAX_POLL_INTERVAL = new Setting("jccl.maxPollInterval", "JCCL_MAX_POLL_INTERVAL", "200us");

    /**
     * How long a completion callback may hold jccl's event thread before it is logged with its stack (every
     * communicator's completions wait meanwhile); {@code 0} disables the check.
     */
    public static final Setting EVENT_THREAD_STALL_WARNING =
            new Setting("jccl.eventThread.stallWarning", "JCCL_EVENT_THREAD_STALL_WARNING", "1s");

    /** How long a host-backend rank waits in {@code initRank}, split or shrink for the other ranks to arrive. */
    public static final Setting HOST_INIT_TIMEOUT = new Setting("jccl.host.initTimeout", "JCCL_HOST_INIT_TIMEOUT", "5m");
    /**
     * Silence after which a host-backend rank in another process is declared dead and the communicator fails
     * ({@code ncclRemoteError}); a killed process on a reachable host is noticed at once, when its connections close.
     */
    public static final Setting HOST_PEER_TIMEOUT = new Setting("jccl.host.peerTimeout", "JCCL_HOST_PEER_TIMEOUT", "30s");


    // Rendezvous (org.jccl.core.rendezvous). Each JCCL_* key wins over the unprefixed variable that torchrun
    // and MPI launchers set, so a jccl job can run under those launchers unchanged.
    /** The rendezvous server's host or address; falls back to {@link #MASTER_ADDR}, then {@code 127.0.0.1}. */
    public static final Setting JCCL_MASTER_ADDR = new Setting("jccl.masterAddr", "JCCL_MASTER_ADDR", "");
    /** The conventional (torchrun) variable for the rendezvous server's host. */
    public static final Setting MASTER_ADDR = new Setting("MASTER_ADDR", "MASTER_ADDR", "127.0.0.1");
    /** The rendezvous server's TCP port; falls back to {@link #MASTER_PORT}, then {@code 29500}. */
    public static final Setting JCCL_MASTER_PORT = new Setting("jccl.masterPort", "JCCL_MASTER_PORT", "");
    /** The conventional variable for the rendezvous server's port. */
    public static final Setting MASTER_PORT = new Setting("MASTER_PORT", "MASTER_PORT", "29500");
    /** This process's global rank; falls back to {@link #RANK}. */
    public static final Setting JCCL_RANK = new Setting("jccl.rank", "JCCL_RANK", "");
    /** The conventional variable for this process's global rank. */
    public static final Setting RANK = new Setting("RANK", "RANK", "");
    /** The number of ranks in the job; falls back to {@link #WORLD_SIZE}. */
    public static final Setting JCCL_WORLD_SIZE = new Setting("jccl.worldSize", "JCCL_WORLD_SIZE", "");
    /** The conventional variable for the number of ranks. */
    public static final Setting WORLD_SIZE = new Setting("WORLD_SIZE", "WORLD_SIZE", "");
    /** This process's rank on its host (which GPU it uses); falls back to {@link #LOCAL_RANK}. */
    public static final Setting JCCL_LOCAL_RANK = new Setting("jccl.localRank", "JCCL_LOCAL_RANK", "");
    /** The conventional variable for the rank on this host. */
    public static final Setting LOCAL_RANK = new Setting("LOCAL_RANK", "LOCAL_RANK", "");

    // What schedulers set, read only when neither jccl's nor torchrun's variable gives the value (the precedence is
    // org.jccl.core.rendezvous.JobEnvironment's).
    /** Slurm: the task's global rank. */
    public static final Setting SLURM_PROCID = new Setting("SLURM_PROCID", "SLURM_PROCID", "");
    /** Slurm: the number of tasks of the step. */
    public static final Setting SLURM_NTASKS = new Setting("SLURM_NTASKS", "SLURM_NTASKS", "");
    /** Slurm: the task's rank on its node. */
    public static final Setting SLURM_LOCALID = new Setting("SLURM_LOCALID", "SLURM_LOCALID", "");
    /** Slurm: the step's nodes in Slurm's compressed host-list form; its first host is the master. */
    public static final Setting SLURM_STEP_NODELIST = new Setting("SLURM_STEP_NODELIST", "SLURM_STEP_NODELIST", "");
    /** Slurm: the job's nodes, used for the master when the step's list is not set. */
    public static final Setting SLURM_JOB_NODELIST = new Setting("SLURM_JOB_NODELIST", "SLURM_JOB_NODELIST", "");
    /** Open MPI (and PMIx launchers that set it): the process's rank in MPI_COMM_WORLD. */
    public static final Setting OMPI_COMM_WORLD_RANK = new Setting("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_RANK", "");
    /** Open MPI: the size of MPI_COMM_WORLD. */
    public static final Setting OMPI_COMM_WORLD_SIZE = new Setting("OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "");
    /** Open MPI: the process's rank on its node. */
    public static final Setting OMPI_COMM_WORLD_LOCAL_RANK =
            new Setting("OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "");
    /** Kubernetes indexed Job: the pod's completion index, taken as its rank. */
    public static final Setting JOB_COMPLETION_INDEX = new Setting("JOB_COMPLETION_INDEX", "JOB_COMPLETION_INDEX", "");
    /** The pod's host name; an indexed Job's pods are named {@code <job>-<index>} (not in {@link #ALL}: always set). */
    public static final Setting HOSTNAME = new Setting("HOSTNAME", "HOSTNAME", "");
    /**
     * Kubernetes: the headless Service that is the Job's subdomain; with it the master is index 0's pod,
     * {@code <job>-0.<service>}, unless a master address is set.
     */
    public static final Setting K8S_SERVICE = new Setting("jccl.k8s.service", "JCCL_K8S_SERVICE", "");
    /**
     * The shared secret that admits a process to the rendezvous (at least 16 characters). Prefer the environment
     * variable or {@link #RENDEZVOUS_SECRET_FILE}: a system property shows on the command line. Never logged.
     */
    public static final Setting RENDEZVOUS_SECRET = new Setting("jccl.rendezvous.secret", "JCCL_RENDEZVOUS_SECRET", "");
    /** A file whose content (trimmed) is the shared secret; used when {@link #RENDEZVOUS_SECRET} is not set. */
    public static final Setting RENDEZVOUS_SECRET_FILE =
            new Setting("jccl.rendezvous.secretFile", "JCCL_RENDEZVOUS_SECRET_FILE", "");
    /**
     * The address a rendezvous server listens on, and where host-backend ranks of several processes listen (the
     * unique id's root and each rank's data port); loopback unless set (e.g. {@code 0.0.0.0} or an interface's address).
     */
    public static final Setting RENDEZVOUS_BIND = new Setting("jccl.rendezvous.bind", "JCCL_RENDEZVOUS_BIND", "127.0.0.1");
    /** Who hosts the store: {@code rank0} (rank 0 starts the server) or {@code external} (a launcher or service does). */
    public static final Setting RENDEZVOUS_SERVER = new Setting("jccl.rendezvous.server", "JCCL_RENDEZVOUS_SERVER", "rank0");
    /** The default timeout of rendezvous operations and of connecting. */
    public static final Setting RENDEZVOUS_TIMEOUT = new Setting("jccl.rendezvous.timeout", "JCCL_RENDEZVOUS_TIMEOUT", "5m");
    /** How often clients send a heartbeat. */
    public static final Setting RENDEZVOUS_HEARTBEAT =
            new Setting("jccl.rendezvous.heartbeat", "JCCL_RENDEZVOUS_HEARTBEAT", "5s");
    /** Silence after which a rank is declared dead by the server, and the server by a client. */
    public static final Setting RENDEZVOUS_DEAD_AFTER =
            new Setting("jccl.rendezvous.deadAfter", "JCCL_RENDEZVOUS_DEAD_AFTER", "30s");
    /** How long a new connection may take to authenticate before the server closes it. */
    public static final Setting RENDEZVOUS_HANDSHAKE_TIMEOUT =
            new Setting("jccl.rendezvous.handshakeTimeout", "JCCL_RENDEZVOUS_HANDSHAKE_TIMEOUT", "10s");
    /** The largest frame (bytes) either side accepts; a larger one closes the connection. */
    public static final Setting RENDEZVOUS_MAX_FRAME =
            new Setting("jccl.rendezvous.maxFrameBytes", "JCCL_RENDEZVOUS_MAX_FRAME_BYTES", "1048576");

    // Bounds on what unauthenticated or misbehaving peers can make a rendezvous server or a host-backend root hold.
    /** The most bytes of keys (UTF-8) and values a rendezvous server stores; a write past it is refused. */
    public static final Setting RENDEZVOUS_MAX_STORE_BYTES =
            new Setting("jccl.rendezvous.maxStoreBytes", "JCCL_RENDEZVOUS_MAX_STORE_BYTES", "268435456");
    /** The most keys one rendezvous client connection may have created (and not deleted); one more is refused. */
    public static final Setting RENDEZVOUS_MAX_KEYS_PER_CLIENT =
            new Setting("jccl.rendezvous.maxKeysPerClient", "JCCL_RENDEZVOUS_MAX_KEYS_PER_CLIENT", "100000");
    /**
     * How long a connection to a host-backend unique id's root or to a rank's data port may take to present its
     * JOIN or HELLO before it is dropped (until then it may send frames of at most 256 bytes).
     */
    public static final Setting HOST_HANDSHAKE_TIMEOUT =
            new Setting("jccl.host.handshakeTimeout", "JCCL_HOST_HANDSHAKE_TIMEOUT", "10s");

    /**
     * Prefix of the system properties that set NCCL's (or RCCL's) own variables: {@code -Djccl.nccl.env.NCCL_P2P_DISABLE=1}
     * sets {@code NCCL_P2P_DISABLE=1} in this process's environment before the library is loaded, and in the
     * environment of the ranks the launcher starts. A property wins over the variable already in the environment.
     */
    public static final String NCCL_ENV_PREFIX = "jccl.nccl.env.";

    /** All settings, for the start-up log line and the configuration table of {@code docs/guides/launching.md}. */
    public static final List<Setting> ALL = List.of(BACKEND, NCCL_LIBRARY, CUDA_RUNTIME, RCCL_LIBRARY, HIP_RUNTIME,
            CUDA_DRIVER, NVRTC_LIBRARY, HIPRTC_LIBRARY, NCCL_INCLUDE, CUDA_INCLUDE, KERNEL_CACHE, NCCL_LOG, NCCL_PROFILER,
            TIMEOUT, STALL_REPORT, TIMEOUT_POLICY, CLOSE_TIMEOUT, ABORT_TIMEOUT, INIT_TIMEOUT, SPIN, MAX_POLL_INTERVAL, EVENT_THREAD_STALL_WARNING,
            HOST_INIT_TIMEOUT, HOST_PEER_TIMEOUT,
            JCCL_MASTER_ADDR, MASTER_ADDR, JCCL_MASTER_PORT, MASTER_PORT, JCCL_RANK, RANK, JCCL_WORLD_SIZE, WORLD_SIZE,
            JCCL_LOCAL_RANK, LOCAL_RANK, SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_STEP_NODELIST,
            SLURM_JOB_NODELIST, OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_RANK,
            JOB_COMPLETION_INDEX, K8S_SERVICE, RENDEZVOUS_SECRET, RENDEZVOUS_SECRET_FILE, RENDEZVOUS_BIND, RENDEZVOUS_SERVER,
            RENDEZVOUS_TIMEOUT, RENDEZVOUS_HEARTBEAT, RENDEZVOUS_DEAD_AFTER, RENDEZVOUS_HANDSHAKE_TIMEOUT,
            RENDEZVOUS_MAX_FRAME, RENDEZVOUS_MAX_STORE_BYTES, RENDEZVOUS_MAX_KEYS_PER_CLIENT, HOST_HANDSHAKE_TIMEOUT);

    private JcclSettings() {
    }

    /**
     * The variables the {@link #NCCL_ENV_PREFIX} properties set, by name, in name order.
     *
     * @throws InvalidArgumentException if a name is not an {@code NCCL_*} or {@code RCCL_*} variable name, or a value
     *                                  holds a NUL character
     */
    public static Map<String, String> ncclEnvironment() {
        Map<String, String> variables = new TreeMap<>();
        for (String key : System.getProperties().stringPropertyNames()) {
            if (!key.startsWith(NCCL_ENV_PREFIX)) continue;
            String name = key.substring(NCCL_ENV_PREFIX.length());
            String value = System.getProperty(key, "");
            if (!name.matches("(NCCL|RCCL)_[A-Z0-9_]+")) {
                throw new InvalidArgumentException(key + ": '" + name + "' is not an NCCL_* or RCCL_* variable name");
            }
            if (value.indexOf('\0') >= 0) throw new InvalidArgumentException(key + ": a value cannot hold a NUL character");
            variables.put(name, value);
        }
        return variables;
    }

    public static Duration workTimeout() {
        return TIMEOUT.duration();
    }

    /** {@link #STALL_REPORT} in nanoseconds (0: disabled); a value that cannot be read is reported and the default used. */
    public static long stallReportNanos() {
        try {
            return Math.max(0, STALL_REPORT.duration().toNanos());
        } catch (InvalidArgumentException e) {
            LOG.warn("{}; using {}", e.getMessage(), STALL_REPORT.defaultValue());
            return parseDuration(STALL_REPORT.defaultValue(), STALL_REPORT).toNanos();
        }
    }

    public static TimeoutPolicy timeoutPolicy() {
        String v = TIMEOUT_POLICY.value().trim().toUpperCase(Locale.ROOT);
        try {
            return TimeoutPolicy.valueOf(v);
        } catch (IllegalArgumentException e) {
            throw new InvalidArgumentException(TIMEOUT_POLICY + " must be abort_communicator or report, not " + v);
        }
    }

    public static Duration closeTimeout() {
        return CLOSE_TIMEOUT.duration();
    }

    public static Duration abortTimeout() {
        return ABORT_TIMEOUT.duration();
    }

    public static Duration initTimeout() {
        return INIT_TIMEOUT.duration();
    }

    /** The longest start-up line: a person reads it at a glance. */
    private static final int START_UP_LINE_MAX = 120;

    /**
     * Logs the start-up line once per process at INFO, followed by the settings changed from their defaults where that
     * keeps it within 120 characters (else their count); every setting, at DEBUG.
     */
    public static void logOnce(String startUpLine) {
        if (!LOGGED.compareAndSet(false, true)) return;
        StringBuilder all = new StringBuilder("jccl settings:");
        List<String> changed = new ArrayList<>();
        for (Setting s : ALL) {
            // The secret admits processes to the job: say only whether it is set.
            String shown = s == RENDEZVOUS_SECRET ? (s.isSet() ? "<set>" : "<not set>") : s.value();
            all.append("\n  ").append(s.property()).append(" = ").append(shown);
            if (s.isSet() && !s.value().equals(s.defaultValue())) changed.add(s.property() + "=" + shown);
        }
        LOG.info("{}", startUpLine + changedSuffix(startUpLine, changed));
        LOG.debug("{}", all);
    }

    /** What the start-up line says of changed settings: them, or their count, or nothing, as room allows. */
    private static String changedSuffix(String line, List<String> changed) {
        if (changed.isEmpty()) return "";
        String listed = " (settings changed: " + String.join(", ", changed) + ")";
        if (line.length() + listed.length() <= START_UP_LINE_MAX) return listed;
        String counted = " (" + changed.size() + (changed.size() == 1 ? " setting" : " settings") + " changed; DEBUG lists them)";
        return line.length() + counted.length() <= START_UP_LINE_MAX ? counted : "";
    }

    /**
     * One key: a system property, its environment variable, and the default.
     *
     * @param property     the system property, e.g. {@code jccl.backend}
     * @param env          the environment variable, e.g. {@code JCCL_BACKEND}
     * @param defaultValue the documented default
     */
    public record Setting(String property, String env, String defaultValue) {
        /** The effective value: the property, else the variable, else the default. */
        public String value() {
            return value(System.getenv());
        }

        /**
         * The effective value with the variables read from {@code environment} instead of this process's (how a
         * test or a launcher describes another process): the property, else the variable, else the default.
         */
        public String value(Map<String, String> environment) {
            String v = System.getProperty(property);
            if (v == null || v.isBlank()) v = environment.get(env);
            return v == null || v.isBlank() ? defaultValue : v.trim();
        }

        /** Whether the user set it (property or variable). */
        public boolean isSet() {
            return isSet(System.getenv());
        }

        /** Whether it is set as a property or in {@code environment}. */
        public boolean isSet(Map<String, String> environment) {
            String p = System.getProperty(property);
            String e = environment.get(env);
            return (p != null && !p.isBlank()) || (e != null && !e.isBlank());
        }

        public Duration duration() {
            return parseDuration(value(), this);
        }

        /**
         * The effective value, which must be one of {@code choices}.
         *
         * @throws InvalidArgumentException naming the property and the choices otherwise
         */
        public String oneOf(String... choices) {
            String v = value();
            for (String c : choices) if (c.equals(v)) return v;
            throw new InvalidArgumentException(property + " must be " + String.join(" or ", choices) + ", not '" + v + "'");
        }

        @Override
        public String toString() {
            return property + " (" + env + ")";
        }
    }

    /** {@code 250us}, {@code 500ms}, {@code 30s}, {@code 10m}, {@code 1h}, a plain number of milliseconds, or ISO-8601. */
    public static Duration parseDuration(String text, @Nullable Setting setting) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        try {
            if (t.startsWith("p")) return Duration.parse(t.toUpperCase(Locale.ROOT));
            if (t.endsWith("us")) return Duration.ofNanos(Long.parseLong(t.substring(0, t.length() - 2).trim()) * 1000);
            if (t.endsWith("ms")) return Duration.ofMillis(Long.parseLong(t.substring(0, t.length() - 2).trim()));
            if (t.endsWith("s")) return Duration.ofSeconds(Long.parseLong(t.substring(0, t.length() - 1).trim()));
            if (t.endsWith("m")) return Duration.ofMinutes(Long.parseLong(t.substring(0, t.length() - 1).trim()));
            if (t.endsWith("h")) return Duration.ofHours(Long.parseLong(t.substring(0, t.length() - 1).trim()));
            return Duration.ofMillis(Long.parseLong(t));
        } catch (RuntimeException e) {
            throw new InvalidArgumentException((setting == null ? "duration" : setting.toString())
                    + ": cannot read '" + text + "' as a duration (e.g. 250us, 500ms, 30s, 10m)");
        }
    }
}
