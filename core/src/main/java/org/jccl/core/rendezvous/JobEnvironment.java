package org.jccl.core.rendezvous;

import java.util.Map;
import java.util.Objects;
import org.jccl.core.config.JcclSettings;
import org.jccl.core.config.JcclSettings.Setting;
import org.jccl.core.error.InvalidArgumentException;
import org.jspecify.annotations.Nullable;

/**
 * Where this process stands in its job — rank, world size, local rank and the rendezvous master — read from what
 * its launcher set, so one program runs unchanged under jccl's launcher, torchrun, Slurm ({@code srun}), Open MPI
 * ({@code mpirun}) or a Kubernetes indexed Job.
 *
 * <p>Each value is the first of: jccl's own key (system property, then {@code JCCL_*} variable), torchrun's variable
 * ({@code MASTER_ADDR}, {@code MASTER_PORT}, {@code RANK}, {@code WORLD_SIZE}, {@code LOCAL_RANK}), the scheduler's,
 * the default. The scheduler is the first of Slurm ({@code SLURM_PROCID}), Open MPI ({@code OMPI_COMM_WORLD_RANK})
 * and Kubernetes ({@code JOB_COMPLETION_INDEX}) whose rank variable is set, so a torchrun or jccl launch inside a
 * Slurm allocation keeps its own numbering. What each scheduler gives:
 * <ul>
 *   <li>Slurm: {@code SLURM_PROCID}, {@code SLURM_NTASKS}, {@code SLURM_LOCALID}; the master is the first host of
 *       {@code SLURM_STEP_NODELIST} (else {@code SLURM_JOB_NODELIST}), see {@link SlurmHostList}.</li>
 *   <li>Open MPI: {@code OMPI_COMM_WORLD_RANK}, {@code ..._SIZE}, {@code ..._LOCAL_RANK}; no master (set
 *       {@code MASTER_ADDR}, e.g. {@code mpirun -x MASTER_ADDR=node1}; loopback otherwise).</li>
 *   <li>Kubernetes: {@code JOB_COMPLETION_INDEX} as the rank, local rank 0 (one pod per rank); the world size must be
 *       set ({@code WORLD_SIZE}: a Job's completions are not in its pods' environment); the master is
 *       {@code MASTER_ADDR}, else, with the headless Service named by {@code JCCL_K8S_SERVICE}, index 0's pod:
 *       {@code HOSTNAME} {@code <job>-<index>} becomes {@code <job>-0.<service>}.</li>
 * </ul>
 *
 * @param scheduler  who set the rank
 * @param rank       this process's global rank, or {@link RendezvousOptions#NO_RANK}
 * @param worldSize  the number of ranks, 0 if unknown
 * @param localRank  the rank on this host
 * @param masterAddr the rendezvous server's host
 * @param masterPort the rendezvous server's port
 */
public record JobEnvironment(Scheduler scheduler, int rank, int worldSize, int localRank, String masterAddr,
                             int masterPort) {
    /** Who set the rank: the source whose rank variable was read. */
    public enum Scheduler {
        /** No rank is set (a single process, or options built by hand). */
        NONE,
        /** jccl's own keys ({@code JCCL_RANK}), as jccl's launcher sets them. */
        JCCL,
        /** torchrun's {@code RANK}. */
        TORCHRUN,
        /** Slurm's {@code SLURM_PROCID}. */
        SLURM,
        /** Open MPI's {@code OMPI_COMM_WORLD_RANK}. */
        OPEN_MPI,
        /** A Kubernetes indexed Job's {@code JOB_COMPLETION_INDEX}. */
        KUBERNETES
    }

    /** Checks the values. */
    public JobEnvironment {
        Objects.requireNonNull(scheduler, "scheduler");
        Objects.requireNonNull(masterAddr, "masterAddr");
    }

    /** Reads this process's system properties and environment. */
    public static JobEnvironment detect() {
        return detect(System.getenv());
    }

    /**
     * Reads the system properties and the given variables (a test's, or another process's).
     *
     * @throws InvalidArgumentException if a value is not a number, a Slurm host list is malformed, or a Kubernetes
     *                                  job of several ranks names no master
     */
    public static JobEnvironment detect(Map<String, String> env) {
        Objects.requireNonNull(env, "env");
        Scheduler scheduler = scheduler(env);
        @Nullable Setting schedulerRank = null;
        @Nullable Setting schedulerSize = null;
        @Nullable Setting schedulerLocal = null;
        switch (scheduler) {
            case SLURM -> {
                schedulerRank = JcclSettings.SLURM_PROCID;
                schedulerSize = JcclSettings.SLURM_NTASKS;
                schedulerLocal = JcclSettings.SLURM_LOCALID;
            }
            case OPEN_MPI -> {
                schedulerRank = JcclSettings.OMPI_COMM_WORLD_RANK;
                schedulerSize = JcclSettings.OMPI_COMM_WORLD_SIZE;
                schedulerLocal = JcclSettings.OMPI_COMM_WORLD_LOCAL_RANK;
            }
            case KUBERNETES -> schedulerRank = JcclSettings.JOB_COMPLETION_INDEX;
            default -> {
            }
        }
        int rank = integer(env, RendezvousOptions.NO_RANK, JcclSettings.JCCL_RANK, JcclSettings.RANK, schedulerRank);
        int worldSize = integer(env, 0, JcclSettings.JCCL_WORLD_SIZE, JcclSettings.WORLD_SIZE, schedulerSize);
        int localRank = integer(env, 0, JcclSettings.JCCL_LOCAL_RANK, JcclSettings.LOCAL_RANK, schedulerLocal);
        int port = integer(env, RendezvousOptions.DEFAULT_PORT, JcclSettings.JCCL_MASTER_PORT, JcclSettings.MASTER_PORT,
                null);
        String master = JcclSettings.JCCL_MASTER_ADDR.isSet(env) ? JcclSettings.JCCL_MASTER_ADDR.value(env)
                : JcclSettings.MASTER_ADDR.isSet(env) ? JcclSettings.MASTER_ADDR.value(env)
                : schedulerMaster(scheduler, env, worldSize);
        return new JobEnvironment(scheduler, rank, worldSize, localRank, master, port);
    }

    private static Scheduler scheduler(Map<String, String> env) {
        if (JcclSettings.JCCL_RANK.isSet(env)) return Scheduler.JCCL;
        if (JcclSettings.RANK.isSet(env)) return Scheduler.TORCHRUN;
        if (JcclSettings.SLURM_PROCID.isSet(env)) return Scheduler.SLURM;
        if (JcclSettings.OMPI_COMM_WORLD_RANK.isSet(env)) return Scheduler.OPEN_MPI;
        if (JcclSettings.JOB_COMPLETION_INDEX.isSet(env)) return Scheduler.KUBERNETES;
        return Scheduler.NONE;
    }

    private static String schedulerMaster(Scheduler scheduler, Map<String, String> env, int worldSize) {
        if (scheduler == Scheduler.SLURM) {
            Setting list = JcclSettings.SLURM_STEP_NODELIST.isSet(env) ? JcclSettings.SLURM_STEP_NODELIST
                    : JcclSettings.SLURM_JOB_NODELIST;
            if (list.isSet(env)) return SlurmHostList.first(list.value(env));
        } else if (scheduler == Scheduler.KUBERNETES && JcclSettings.K8S_SERVICE.isSet(env)) {
            return firstPod(JcclSettings.HOSTNAME.value(env), JcclSettings.JOB_COMPLETION_INDEX.value(env))
                    + "." + JcclSettings.K8S_SERVICE.value(env);
        } else if (scheduler == Scheduler.KUBERNETES && worldSize > 1) {
            throw new InvalidArgumentException("a Kubernetes indexed Job of " + worldSize + " ranks needs its master: set "
                    + JcclSettings.MASTER_ADDR.env() + " or " + JcclSettings.K8S_SERVICE + " (its headless Service)");
        }
        return JcclSettings.MASTER_ADDR.defaultValue();
    }

    /** {@code <job>-<index>} becomes {@code <job>-0}: the pod of index 0. */
    private static String firstPod(String hostName, String index) {
        String suffix = "-" + index;
        if (!hostName.endsWith(suffix) || hostName.length() == suffix.length()) {
            throw new InvalidArgumentException("cannot name index 0's pod: HOSTNAME '" + hostName
                    + "' does not end with -" + index + " (set " + JcclSettings.MASTER_ADDR.env() + ")");
        }
        return hostName.substring(0, hostName.length() - suffix.length()) + "-0";
    }

    private static int integer(Map<String, String> env, int defaultValue, @Nullable Setting... chain) {
        for (Setting s : chain) {
            if (s == null || !s.isSet(env)) continue;
            String v = s.value(env);
            try {
                return Integer.parseInt(v);
            } catch (NumberFormatException e) {
                throw new InvalidArgumentException(s + " must be an integer, not '" + v + "'");
            }
        }
        return defaultValue;
    }
}
