package org.jccl.core.host;

import static org.jccl.core.host.HostTesting.host;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.Communicator;
import org.jccl.core.UniqueId;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The network transport with its ranks as threads of this JVM (ids that force TCP): results, failures, limits. */
class NetworkCliqueTest {
    private final List<AutoCloseable> opened = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = opened.size() - 1; i >= 0; i--) opened.get(i).close();
    }

    private List<Communicator> networkRanks(int n) throws Exception {
        UniqueId id = UniqueId.fromBytes(new HostDriver().newNetworkUniqueId());
        List<CompletableFuture<Communicator>> joining = new ArrayList<>();
        for (int r = 0; r < n; r++) joining.add(host().initRank(id, n, r, -1));
        List<Communicator> comms = new ArrayList<>();
        for (CompletableFuture<Communicator> f : joining) comms.add(f.get(30, TimeUnit.SECONDS));
        opened.addAll(comms);
        return comms;
    }

    @Test
    void everyOperationMatchesTheInJvmBackendBitForBit() throws Exception {
        int n = 3;
        List<Communicator> comms = networkRanks(n);
        Backend h = host();
        List<CompletableFuture<Integer>> checks = new ArrayList<>();
        for (Communicator c : comms) {
            checks.add(CompletableFuture.supplyAsync(() -> {
                try {
                    List<Communicator> reference = h.initAll(n).get(30, TimeUnit.SECONDS);
                    try {
                        return OpSuite.check(h, c, reference);
                    } finally {
                        for (Communicator rc : reference) rc.close();
                    }
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            }));
        }
        for (CompletableFuture<Integer> f : checks) assertEquals(OpSuite.cases().size(), f.get(120, TimeUnit.SECONDS));
    }
}
