package org.jccl.core.rendezvous;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.rendezvous.JobEnvironment.Scheduler;
import org.junit.jupiter.api.Test;

/** Detection from injected variables: each scheduler alone, and the precedence when several are set. */
class JobEnvironmentTest {
    @Test
    void nothingSetMeansNoRankOnLoopbackAtTheDefaultPort() {
        assertEquals(new JobEnvironment(Scheduler.NONE, RendezvousOptions.NO_RANK, 0, 0, "127.0.0.1", 29500),
                JobEnvironment.detect(Map.of()));
    }

    @Test
    void torchrunsVariables() {
        assertEquals(new JobEnvironment(Scheduler.TORCHRUN, 3, 8, 1, "node0", 1234), JobEnvironment.detect(Map.of(
                "RANK", "3", "WORLD_SIZE", "8", "LOCAL_RANK", "1", "MASTER_ADDR", "node0", "MASTER_PORT", "1234")));
    }

    @Test
    void slurmsVariablesWithTheStepsFirstNodeAsMaster() {
        Map<String, String> env = Map.of("SLURM_PROCID", "5", "SLURM_NTASKS", "8", "SLURM_LOCALID", "1",
                "SLURM_STEP_NODELIST", "gpu[07-09],login1", "SLURM_JOB_NODELIST", "gpu[01-09],login1");
        assertEquals(new JobEnvironment(Scheduler.SLURM, 5, 8, 1, "gpu07", 29500), JobEnvironment.detect(env));
        Map<String, String> jobOnly = Map.of("SLURM_PROCID", "0", "SLURM_NTASKS", "2", "SLURM_JOB_NODELIST", "n[3-4]");
        assertEquals("n3", JobEnvironment.detect(jobOnly).masterAddr());
    }

    @Test
    void openMpisVariablesWithLoopbackUnlessAMasterIsSet() {
        Map<String, String> env = Map.of("OMPI_COMM_WORLD_RANK", "2", "OMPI_COMM_WORLD_SIZE", "4",
                "OMPI_COMM_WORLD_LOCAL_RANK", "0");
        assertEquals(new JobEnvironment(Scheduler.OPEN_MPI, 2, 4, 0, "127.0.0.1", 29500), JobEnvironment.detect(env));
        Map<String, String> withMaster = new java.util.HashMap<>(env);
        withMaster.put("MASTER_ADDR", "head");
        assertEquals("head", JobEnvironment.detect(withMaster).masterAddr());
    }

    @Test
    void aKubernetesIndexedJobFindsIndexZerosPodThroughItsHeadlessService() {
        Map<String, String> env = Map.of("JOB_COMPLETION_INDEX", "3", "WORLD_SIZE", "4", "HOSTNAME", "train-3",
                "JCCL_K8S_SERVICE", "train-svc");
        assertEquals(new JobEnvironment(Scheduler.KUBERNETES, 3, 4, 0, "train-0.train-svc", 29500),
                JobEnvironment.detect(env));
        assertEquals("m", JobEnvironment.detect(Map.of("JOB_COMPLETION_INDEX", "1", "WORLD_SIZE", "2",
                "MASTER_ADDR", "m")).masterAddr());
    }

    @Test
    void aKubernetesJobOfSeveralRanksWithoutAMasterIsRefusedSayingWhatToSet() {
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                () -> JobEnvironment.detect(Map.of("JOB_COMPLETION_INDEX", "1", "WORLD_SIZE", "2")));
        assertTrue(e.getMessage().contains("MASTER_ADDR") && e.getMessage().contains("JCCL_K8S_SERVICE"), e.getMessage());
        InvalidArgumentException pod = assertThrows(InvalidArgumentException.class, () -> JobEnvironment.detect(Map.of(
                "JOB_COMPLETION_INDEX", "1", "WORLD_SIZE", "2", "HOSTNAME", "worker", "JCCL_K8S_SERVICE", "s")));
        assertTrue(pod.getMessage().contains("HOSTNAME 'worker'"), pod.getMessage());
    }

    @Test
    void jcclsKeysWinOverTorchrunsWhichWinOverTheSchedulers() {
        // torchrun inside a Slurm allocation: torchrun numbers the ranks, Slurm's node list still names no master.
        Map<String, String> torchrunInSlurm = Map.of("RANK", "1", "WORLD_SIZE", "2", "LOCAL_RANK", "1",
                "MASTER_ADDR", "gpu02", "SLURM_PROCID", "0", "SLURM_NTASKS", "1", "SLURM_LOCALID", "0",
                "SLURM_JOB_NODELIST", "gpu[01-02]");
        assertEquals(new JobEnvironment(Scheduler.TORCHRUN, 1, 2, 1, "gpu02", 29500),
                JobEnvironment.detect(torchrunInSlurm));
        Map<String, String> jcclOverAll = Map.of("JCCL_RANK", "4", "JCCL_WORLD_SIZE", "6", "JCCL_LOCAL_RANK", "2",
                "JCCL_MASTER_ADDR", "a", "JCCL_MASTER_PORT", "7", "RANK", "1", "WORLD_SIZE", "2", "MASTER_ADDR", "b",
                "MASTER_PORT", "8", "OMPI_COMM_WORLD_RANK", "0");
        assertEquals(new JobEnvironment(Scheduler.JCCL, 4, 6, 2, "a", 7), JobEnvironment.detect(jcclOverAll));
        // A scheduler's variables count only when it set the rank: a jccl rank takes no world size from Slurm.
        assertEquals(0, JobEnvironment.detect(Map.of("JCCL_RANK", "0", "SLURM_PROCID", "0", "SLURM_NTASKS", "8"))
                .worldSize());
    }

    @Test
    void numbersThatAreNotNumbersAreRefusedNamingTheVariable() {
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
                () -> JobEnvironment.detect(Map.of("SLURM_PROCID", "x")));
        assertTrue(e.getMessage().contains("SLURM_PROCID"), e.getMessage());
    }

    @Test
    void rendezvousOptionsTakeTheDetectedValues() {
        RendezvousOptions o = RendezvousOptions.fromEnvironment(Map.of("OMPI_COMM_WORLD_RANK", "1",
                "OMPI_COMM_WORLD_SIZE", "2", "OMPI_COMM_WORLD_LOCAL_RANK", "1", "MASTER_ADDR", "head",
                "JCCL_MASTER_PORT", "4000", "JCCL_RENDEZVOUS_SECRET", "a-secret-of-enough-length-0123"));
        assertEquals(java.util.List.of("head", 4000, 1, 2, 1),
                java.util.List.of(o.host(), o.port(), o.rank(), o.worldSize(), o.localRank()));
    }
}
