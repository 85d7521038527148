package org.jccl.core.matrix;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Jccl;
import org.jccl.core.PreMulSum;
import org.jccl.core.ReduceOp;
import org.jccl.core.Work;

/**
 * Finds out, on the GPUs of this machine, in which order NCCL adds the ranks' fp8 contributions in a reduce-scatter,
 * and whether a PreMulSum with host scalars equals a plain sum of inputs premultiplied on the host: the evidence for
 * how the collective matrix's reference must model fp8 PreMulSum on three or more ranks. For each fp8 type it runs
 * (A) reduceScatter with PreMulSum(s_r) and (B) reduceScatter with SUM of x_r·s_r rounded to the type, compares A with
 * B bit for bit, and reports for each output rank which summation orders (rank order, or a ring starting after any
 * rank, either direction) reproduce A exactly.
 *
 * <pre>  bash src/test/gpu/run.sh main org.jccl.core.matrix.Fp8SumOrderProbe</pre>
 */
public final class Fp8SumOrderProbe {
    static final int COUNT = 4096;

    private Fp8SumOrderProbe() {
    }

    public static void main(String[] args) throws Exception {
        Backend nccl = Jccl.backend(BackendKind.NCCL);
        int n = nccl.deviceCount();
        int[] devices = new int[n];
        for (int i = 0; i < n; i++) devices[i] = i;
        List<Communicator> comms = nccl.initAll(devices, org.jccl.core.CommOptions.defaults()).get(120, TimeUnit.SECONDS);
        System.out.println(nccl.describe() + ", " + n + " ranks, " + COUNT + " elements per rank");
        for (DataType type : new DataType[] {DataType.FLOAT8_E4M3, DataType.FLOAT8_E5M2}) {
            ByteBuffer[] x = new ByteBuffer[n];
            ByteBuffer[] premultiplied = new ByteBuffer[n];
            double[] s = new double[n];
            for (int r = 0; r < n; r++) {
                s[r] = 0.5 * (r % 4 + 1); // the matrix's scalars
                Random random = new Random(1000L * r + type.ordinal());
                x[r] = Reference.allocate(type, (long) COUNT * n);
                premultiplied[r] = Reference.allocate(type, (long) COUNT * n);
                for (int i = 0; i < COUNT * n; i++) {
                    double v = (random.nextInt(17) - 8) * 0.25;
                    Reference.putFloat(type, x[r], i, v);
                    Reference.putFloat(type, premultiplied[r], i, Reference.round(type, Reference.floatAt(type, x[r], i) * Reference.round(type, s[r])));
                }
            }
            ByteBuffer[] a = run(nccl, comms, type, x, s, true);
            ByteBuffer[] b = run(nccl, comms, type, premultiplied, s, false);
            int differ = 0;
            for (int r = 0; r < n; r++) for (int i = 0; i < COUNT; i++) if (a[r].get(i) != b[r].get(i)) differ++;
            System.out.println(type + ": PreMulSum vs SUM of host-premultiplied inputs: " + differ + " of " + (n * COUNT)
                    + " elements differ");
            for (int r = 0; r < n; r++) {
                StringBuilder matches = new StringBuilder();
                for (String order : orders(n, r)) {
                    int[] seq = parse(order);
                    int wrong = 0;
                    for (int i = 0; i < COUNT; i++) {
                        double acc = Double.NaN;
                        for (int q : seq) {
                            double v = Reference.floatAt(type, premultiplied[q], r * COUNT + i);
                            acc = Double.isNaN(acc) ? v : Reference.round(type, acc + v);
                        }
                        if (Reference.round(type, acc) != Reference.floatAt(type, a[r], i)) wrong++;
                    }
                    matches.append(' ').append(order).append('=').append(wrong);
                }
                System.out.println("  output rank " + r + ", wrong elements per summation order:" + matches);
            }
        }
        comms.forEach(Communicator::close);
    }

    /** Rank order, then every ring rotation in both directions, as "a>b>c>d". */
    static List<String> orders(int n, int out) {
        List<String> o = new ArrayList<>();
        StringBuilder rank = new StringBuilder();
        for (int q = 0; q < n; q++) rank.append(q == 0 ? "" : ">").append(q);
        o.add(rank.toString());
        for (int start = 0; start < n; start++) {
            for (int dir : new int[] {1, -1}) {
                StringBuilder sb = new StringBuilder();
                for (int k = 0; k < n; k++) sb.append(k == 0 ? "" : ">").append(Math.floorMod(start + dir * k, n));
                if (!o.contains(sb.toString())) o.add(sb.toString());
            }
        }
        return o;
    }

    static int[] parse(String order) {
        String[] p = order.split(">");
        int[] seq = new int[p.length];
        for (int i = 0; i < p.length; i++) seq[i] = Integer.parseInt(p[i]);
        return seq;
    }

    static ByteBuffer[] run(Backend nccl, List<Communicator> comms, DataType type, ByteBuffer[] in, double[] s, boolean premul)
            throws Exception {
        int n = comms.size();
        List<Buffer> sends = new ArrayList<>();
        List<Buffer> recvs = new ArrayList<>();
        List<PreMulSum> ops = new ArrayList<>();
        List<CompletableFuture<?>> works = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            Communicator c = comms.get(r);
            Buffer send = nccl.allocate(c.device(), in[r].capacity());
            send.write(0, ByteBuffer.allocateDirect(in[r].capacity()).put(in[r].duplicate().clear()).flip());
            Buffer recv = nccl.allocate(c.device(), COUNT);
            sends.add(send);
            recvs.add(recv);
            ReduceOp op = ReduceOp.SUM;
            if (premul) {
                PreMulSum p = c.createPreMulSum(s[r], type).get(30, TimeUnit.SECONDS);
                ops.add(p);
                op = p;
            }
            Work w = c.reduceScatter(send, recv, COUNT, type, op);
            works.add(w);
        }
        CompletableFuture.allOf(works.toArray(new CompletableFuture<?>[0])).get(60, TimeUnit.SECONDS);
        ByteBuffer[] out = new ByteBuffer[n];
        for (int r = 0; r < n; r++) {
            ByteBuffer direct = ByteBuffer.allocateDirect(COUNT);
            recvs.get(r).read(0, direct.duplicate());
            out[r] = Reference.allocate(type, COUNT);
            out[r].put(0, direct, 0, COUNT);
            sends.get(r).close();
            recvs.get(r).close();
        }
        for (PreMulSum p : ops) p.close();
        return out;
    }
}
