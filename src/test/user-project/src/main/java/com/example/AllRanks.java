package com.example;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.jccl.core.Backend;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Jccl;
import org.jccl.core.ReduceOp;
import org.jccl.core.Work;

/** The README's first program: every rank of one process takes part; rank i contributes i + 1. */
public final class AllRanks {
    public static void main(String[] args) {
        Backend backend = Jccl.backend();
        List<Communicator> comms = backend.initAll(2).join();
        int n = 1 << 20;
        List<Buffer> buffers = new ArrayList<>();
        List<Work> works = new ArrayList<>();
        for (Communicator c : comms) {
            float[] in = new float[n];
            Arrays.fill(in, c.rank() + 1);
            Buffer b = backend.allocate(c.device(), 4L * n);
            b.write(0, in);
            buffers.add(b);
            works.add(c.allReduce(b, b, n, DataType.FLOAT32, ReduceOp.SUM));
        }
        CompletableFuture.allOf(works.toArray(CompletableFuture[]::new)).join();
        for (Buffer b : buffers) {
            float[] out = b.readFloats(0, n);
            System.out.println("sum = " + out[0] + ", last = " + out[n - 1]);
        }
        for (Buffer b : buffers) b.close();
        for (Communicator c : comms) c.close();
    }
}
