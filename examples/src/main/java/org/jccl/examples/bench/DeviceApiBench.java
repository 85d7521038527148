package org.jccl.examples.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Group;
import org.jccl.core.Jccl;
import org.jccl.core.UniqueId;
import org.jccl.core.Work;
import org.jccl.core.rendezvous.Rendezvous;
import org.jccl.core.spi.Feature;
import org.jccl.device.DeviceApi;
import org.jccl.device.DeviceComm;
import org.jccl.device.DeviceCommRequirements;
import org.jccl.device.kernels.LsaAllToAll;
import org.jccl.device.kernels.LsaPutSignal;
import org.jccl.rma.OneSided;
import org.jccl.rma.SignalWait;
import org.jccl.rma.Window;
import org.jccl.rma.WindowFlag;

/**
 * The kernels jccl ships against the host API doing the same, in one process driving every GPU given, one sitting:
 *
 * <pre>
 *   DeviceApiBench alltoall [GPUs]    LsaAllToAll vs ncclAlltoAll, 1 KiB to 16 MiB per peer block
 *   DeviceApiBench putsignal [GPUs]   LsaPutSignal put + wait vs ncclPutSignal + ncclWaitSignal (NCCL 2.29.2+),
 *                                     rank 0 into the last rank (on one GPU, its own window), 1 KiB to 16 MiB
 *   ... procs                         instead of GPUs: one process per GPU, started by jccl's launcher
 *                                     (Launcher --nproc 2 -- org.jccl.examples.bench.DeviceApiBench alltoall procs)
 * </pre>
 * Each size: a warm-up round, then a measured one issuing {@code iters} operations back to back and waiting for the
 * last; microseconds per operation and GB/s (bytes each rank sends, over the time).
 */
public final class DeviceApiBench {
    private static final long MIN = 1 << 10;
    private static final long MAX = 16L << 20;

    private DeviceApiBench() {
    }

    public static void main(String[] args) throws Exception {
        String mode = args.length > 0 ? args[0] : "alltoall";
        Backend backend = Jccl.backend(BackendKind.NCCL);
        boolean perProcess = args.length > 1 && args[1].equals("procs");
        Rendezvous rdzv = perProcess ? Rendezvous.fromEnvironment() : null;
        List<Communicator> comms;
        if (rdzv != null) {
            UniqueId id = rdzv.shareUniqueIdNow("id", backend::newUniqueId);
            comms = List.of(backend.initRank(id, rdzv.worldSize(), rdzv.rank(), rdzv.localRank()).get(60, TimeUnit.SECONDS));
        } else {
            int ranks = args.length > 1 ? Integer.parseInt(args[1]) : Math.min(2, backend.deviceCount());
            comms = backend.initAll(ranks).get(60, TimeUnit.SECONDS);
        }
        List<DeviceComm> devComms = DeviceApi.createAll(comms, DeviceCommRequirements.builder().lsaBarrierCount(16).build())
                .get(60, TimeUnit.SECONDS);
        int world = devComms.get(0).size();
        if (comms.get(0).rank() == 0) {
            System.out.println("# " + backend.describe() + ", " + world + " GPU(s), " + (rdzv != null ? "one process each" : "one process"));
        }
        try {
            switch (mode) {
                case "alltoall" -> allToAll(comms, devComms);
                case "putsignal" -> putSignal(backend, comms, devComms);
                default -> throw new IllegalArgumentException("mode must be alltoall or putsignal, not " + mode);
            }
        } finally {
            List<CompletableFuture<Void>> closing = new ArrayList<>();
            for (DeviceComm d : devComms) closing.add(d.closeAsync());
            for (CompletableFuture<Void> f : closing) f.get(60, TimeUnit.SECONDS);
            comms.forEach(Communicator::close);
            if (rdzv != null) rdzv.close();
        }
    }

    private static void allToAll(List<Communicator> comms, List<DeviceComm> devComms) throws Exception {
        int ranks = comms.size(); // in this process
        int world = devComms.get(0).size();
        boolean print = comms.get(0).rank() == 0;
        List<Window> send = windows(comms, MAX * world);
        List<Window> recv = windows(comms, MAX * world);
        for (Communicator c : comms) {
            int[] pattern = new int[(int) (MAX * world / 4)];
            for (int i = 0; i < pattern.length; i++) pattern[i] = c.rank() * 1_000_000 + i;
            send.get(comms.indexOf(c)).buffer().write(0, pattern);
        }
        List<LsaAllToAll> kernels = devComms.stream().map(LsaAllToAll::of).toList();
        if (print) {
            System.out.println("# LsaAllToAll: " + kernels.get(0).blocks() + " blocks x 512 threads, between two LSA barriers");
            System.out.println("#    block  iters   lsa_us  lsa_GB/s  nccl_us nccl_GB/s  lsa/nccl");
        }
        for (long block = MIN; block <= MAX; block *= 4) {
            long b = block;
            int iters = block <= (1 << 20) ? 200 : 50;
            double lsa = perOp(iters, r -> kernels.get(r).run(send.get(r), 0, recv.get(r), 0, b), ranks);
            double nccl = perOp(iters, r -> comms.get(r).allToAll(send.get(r).buffer(), recv.get(r).buffer(), b, DataType.UINT8), ranks);
            double bytes = (double) block * world;
            if (print) {
                System.out.printf("%10d %6d %8.2f %9.2f %8.2f %9.2f %9.2f%n", block, iters, lsa, bytes / lsa / 1e3, nccl,
                        bytes / nccl / 1e3, nccl / lsa);
            }
        }
        // The last LSA round moved MAX-byte blocks: rank r's block p holds rank p's words from p * MAX on.
        List<Work> runs = new ArrayList<>();
        for (int r = 0; r < ranks; r++) runs.add(kernels.get(r).run(send.get(r), 0, recv.get(r), 0, MAX));
        for (Work w : runs) w.get(120, TimeUnit.SECONDS);
        long wrong = 0;
        for (int r = 0; r < ranks; r++) {
            int me = comms.get(r).rank();
            int[] got = recv.get(r).buffer().readInts(0, (int) (MAX * world / 4));
            for (int p = 0; p < world; p++) {
                for (int i = 0; i < MAX / 4; i += 4099) {
                    if (got[(int) (p * MAX / 4) + i] != p * 1_000_000 + (int) (me * MAX / 4) + i) wrong++;
                }
            }
        }
        System.out.println("# rank " + comms.get(0).rank() + (ranks > 1 ? "-" + comms.get(ranks - 1).rank() : "")
                + ": LSA all-to-all data check, " + wrong + " wrong");
        release(send);
        release(recv);
    }

    /** Rank 0 puts into the last rank's window; in one process both, else each process its side. */
    private static void putSignal(Backend backend, List<Communicator> comms, List<DeviceComm> devComms) throws Exception {
        int last = devComms.get(0).size() - 1;
        Communicator first = comms.get(0).rank() == 0 ? comms.get(0) : null;
        Communicator target = comms.get(comms.size() - 1).rank() == last ? comms.get(comms.size() - 1) : null;
        long slot = 2 * MAX;
        List<Window> ws = windows(comms, 2 * MAX + LsaPutSignal.SLOT_BYTES);
        for (Window w : ws) w.buffer().write(slot, new long[] {0, 0});
        Window w0 = first == null ? null : ws.get(0);
        Window wl = target == null ? null : ws.get(ws.size() - 1);
        LsaPutSignal sender = first == null ? null : LsaPutSignal.of(devComms.get(0));
        LsaPutSignal receiver = target == null ? null : LsaPutSignal.of(devComms.get(devComms.size() - 1));
        if (first == null && target == null) { // a rank between them only takes part in the windows' collectives
            release(ws);
            return;
        }
        boolean host = backend.features().has(Feature.PUT_SIGNAL);
        if (first != null) {
            System.out.println("# LsaPutSignal: 32 blocks x 512 threads" + (host ? "" : "; ncclPutSignal needs NCCL 2.29.2+: not measured"));
            System.out.println("#    bytes  iters   lsa_us  lsa_GB/s  nccl_us nccl_GB/s  lsa/nccl");
        }
        for (long bytes = MIN; bytes <= MAX; bytes *= 4) {
            long n = bytes;
            int iters = bytes <= (1 << 20) ? 200 : 50;
            double lsa = perOp(iters, r -> both(sender == null ? null : sender.put(w0, MAX, last, 0, n, slot, 32),
                    receiver == null ? null : receiver.waitFor(wl, slot, 1)), 1);
            double nccl = Double.NaN;
            if (host) {
                nccl = perOp(iters, r -> {
                    Group g = Group.create();
                    if (first != null) g.add(first, OneSided.of(first).putSignalOperation(w0, w0.buffer().slice(MAX, n), n, DataType.UINT8, last, 0, 0, 0));
                    if (target != null) g.add(target, OneSided.of(target).waitSignalOperation(SignalWait.of(0, 1)));
                    return g.submit();
                }, 1);
            }
            if (first != null) {
                System.out.printf("%10d %6d %8.2f %9.2f %8.2f %9.2f %9.2f%n", bytes, iters, lsa, bytes / lsa / 1e3, nccl,
                        bytes / nccl / 1e3, nccl / lsa);
            }
        }
        release(ws);
    }

    private static CompletableFuture<Void> both(Work put, Work wait) {
        if (put == null) return wait;
        if (wait == null) return put;
        return put.thenCombine(wait, (a, b) -> (Void) null);
    }

    /** Microseconds per operation: a warm-up round, then {@code iters} issued back to back on every rank, the last waited for. */
    private static double perOp(int iters, IntFunction<CompletableFuture<Void>> issue, int ranks) throws Exception {
        double micros = 0;
        for (int round = 0; round < 2; round++) {
            long start = System.nanoTime();
            List<CompletableFuture<Void>> last = new ArrayList<>();
            for (int i = 0; i < iters; i++) {
                last.clear();
                for (int r = 0; r < ranks; r++) last.add(issue.apply(r));
            }
            for (CompletableFuture<Void> f : last) f.get(120, TimeUnit.SECONDS);
            micros = (System.nanoTime() - start) / 1e3 / iters;
        }
        return micros;
    }

    private static List<Window> windows(List<Communicator> comms, long bytes) throws Exception {
        return OneSided.registerAll(comms, bytes, WindowFlag.COLL_SYMMETRIC).get(60, TimeUnit.SECONDS);
    }

    private static void release(List<Window> windows) throws Exception {
        OneSided.closeAll(windows).get(60, TimeUnit.SECONDS);
    }
}
