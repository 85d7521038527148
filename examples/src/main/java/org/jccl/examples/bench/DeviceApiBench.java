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
import org.jccl.core.Work;
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
        int ranks = args.length > 1 ? Integer.parseInt(args[1]) : Math.min(2, backend.deviceCount());
        List<Communicator> comms = backend.initAll(ranks).get(60, TimeUnit.SECONDS);
        List<DeviceComm> devComms = DeviceApi.createAll(comms, DeviceCommRequirements.builder().lsaBarrierCount(16).build())
                .get(60, TimeUnit.SECONDS);
        System.out.println("# " + backend.describe() + ", " + ranks + " GPU(s), one process");
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
        }
    }

    private static void allToAll(List<Communicator> comms, List<DeviceComm> devComms) throws Exception {
        int ranks = comms.size();
        List<Window> send = windows(comms, MAX * ranks);
        List<Window> recv = windows(comms, MAX * ranks);
        List<LsaAllToAll> kernels = devComms.stream().map(LsaAllToAll::of).toList();
        System.out.println("# LsaAllToAll: " + kernels.get(0).blocks() + " blocks x 512 threads, between two LSA barriers");
        System.out.println("#    block  iters   lsa_us  lsa_GB/s  nccl_us nccl_GB/s  lsa/nccl");
        for (long block = MIN; block <= MAX; block *= 4) {
            long b = block;
            int iters = block <= (1 << 20) ? 200 : 50;
            double lsa = perOp(iters, r -> kernels.get(r).run(send.get(r), 0, recv.get(r), 0, b), ranks);
            double nccl = perOp(iters, r -> comms.get(r).allToAll(send.get(r).buffer(), recv.get(r).buffer(), b, DataType.UINT8), ranks);
            double bytes = (double) block * ranks;
            System.out.printf("%10d %6d %8.2f %9.2f %8.2f %9.2f %9.2f%n", block, iters, lsa, bytes / lsa / 1e3, nccl,
                    bytes / nccl / 1e3, nccl / lsa);
        }
        release(send);
        release(recv);
    }

    private static void putSignal(Backend backend, List<Communicator> comms, List<DeviceComm> devComms) throws Exception {
        int last = comms.size() - 1;
        long slot = 2 * MAX;
        List<Window> ws = windows(comms, 2 * MAX + LsaPutSignal.SLOT_BYTES);
        for (Window w : ws) w.buffer().write(slot, new long[] {0, 0});
        LsaPutSignal sender = LsaPutSignal.of(devComms.get(0));
        LsaPutSignal receiver = LsaPutSignal.of(devComms.get(last));
        boolean host = backend.features().has(Feature.PUT_SIGNAL);
        System.out.println("# LsaPutSignal: 32 blocks x 512 threads" + (host ? "" : "; ncclPutSignal needs NCCL 2.29.2+: not measured"));
        System.out.println("#    bytes  iters   lsa_us  lsa_GB/s  nccl_us nccl_GB/s  lsa/nccl");
        for (long bytes = MIN; bytes <= MAX; bytes *= 4) {
            long n = bytes;
            int iters = bytes <= (1 << 20) ? 200 : 50;
            double lsa = perOp(iters, r -> {
                Work put = sender.put(ws.get(0), MAX, last, 0, n, slot, 32);
                Work wait = receiver.waitFor(ws.get(last), slot, 1);
                return last == 0 ? wait : put.thenCombine(wait, (a, b) -> (Void) null);
            }, 1);
            double nccl = host ? perOp(iters, r -> Group.create()
                    .add(comms.get(0), OneSided.of(comms.get(0)).putSignalOperation(ws.get(0), ws.get(0).buffer().slice(MAX, n),
                            n, DataType.UINT8, last, 0, 0, 0))
                    .add(comms.get(last), OneSided.of(comms.get(last)).waitSignalOperation(SignalWait.of(0, 1)))
                    .submit(), 1) : Double.NaN;
            System.out.printf("%10d %6d %8.2f %9.2f %8.2f %9.2f %9.2f%n", bytes, iters, lsa, bytes / lsa / 1e3, nccl,
                    bytes / nccl / 1e3, nccl / lsa);
        }
        release(ws);
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
        List<CompletableFuture<Window>> all = new ArrayList<>();
        for (Communicator c : comms) all.add(OneSided.of(c).register(OneSided.of(c).allocate(bytes), WindowFlag.COLL_SYMMETRIC));
        List<Window> out = new ArrayList<>();
        for (CompletableFuture<Window> f : all) out.add(f.get(60, TimeUnit.SECONDS));
        return out;
    }

    private static void release(List<Window> windows) throws Exception {
        List<CompletableFuture<Void>> all = new ArrayList<>();
        for (Window w : windows) all.add(w.closeAsync());
        for (CompletableFuture<Void> f : all) f.get(60, TimeUnit.SECONDS);
        for (Window w : windows) w.buffer().close();
    }
}
