package org.jccl.rma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Group;
import org.jccl.core.Jccl;
import org.jccl.core.Operation;
import org.jccl.core.ReduceOp;
import org.jccl.core.spi.Feature;
import org.jccl.reactive.ReactiveCommunicator;
import org.jccl.rma.channel.BlockChannel;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Windows and one-sided operations on the GPU, one process: rank 0 puts into the last rank's window (on one GPU,
 * its own). Windows need NCCL 2.27+, put/signal/wait 2.29.2+ (the machine's stock NCCL is 2.28.9: point
 * {@code jccl.nccl.library} at a newer one).
 */
@Tag("gpu")
class OneSidedGpuTest {
    static Backend backend;
    static List<Communicator> comms;
    static int last;

    @BeforeAll
    static void open() throws Exception {
        backend = Jccl.backend(BackendKind.NCCL);
        assumeTrue(backend.features().has(Feature.COMM_WINDOW_REGISTER), "windows need NCCL 2.27+, loaded " + backend.describe());
        int n = backend.deviceCount();
        comms = backend.initAll(n).get(60, TimeUnit.SECONDS);
        last = n - 1;
    }

    @AfterAll
    static void close() {
        if (comms != null) comms.forEach(Communicator::close);
    }

    static void assumeOneSided() {
        assumeTrue(backend.features().has(Feature.PUT_SIGNAL), "put/signal/wait need NCCL 2.29.2+, loaded " + backend.describe());
    }

    /** Every rank registers a symmetric window of {@code bytes}. */
    static List<Window> windows(long bytes) throws Exception {
        return OneSided.registerAll(comms, bytes, WindowFlag.COLL_SYMMETRIC).get(60, TimeUnit.SECONDS);
    }

    static void closeAll(List<Window> windows) throws Exception {
        OneSided.closeAll(windows).get(60, TimeUnit.SECONDS);
    }

    @Test
    void windowsRegisterAndDeregisterOnEveryRank() throws Exception {
        List<Window> ws = windows(1 << 20);
        for (Window w : ws) {
            assertEquals(1 << 20, w.byteSize());
            if (backend.features().has(Feature.WIN_GET_USER_PTR)) {
                assertEquals(w.buffer().address(), w.userPointer().get(30, TimeUnit.SECONDS));
            }
        }
        closeAll(ws);
        for (int r = 0; r < comms.size(); r++) {
            assertFalse(OneSided.of(comms.get(r)).windows().contains(ws.get(r)));
            assertTrue(ws.get(r).isClosed());
        }
    }

    @Test
    void putSignalDeliversRandomDataAtAnOffset() throws Exception {
        assumeOneSided();
        int n = 1 << 18;
        List<Window> ws = windows(8L * n);
        float[] data = new float[n];
        Random random = new Random(7);
        for (int i = 0; i < n; i++) data[i] = random.nextFloat();
        Buffer source = ws.get(0).buffer().slice(4L * n, 4L * n); // the source lies in rank 0's window
        source.write(0, data);
        OneSided r0 = OneSided.of(comms.get(0));
        OneSided rl = OneSided.of(comms.get(last));
        long offset = 4096;
        var put = r0.putSignal(ws.get(0), source, n - 1024, DataType.FLOAT32, last, offset);
        rl.waitSignal(SignalWait.of(0, 1)).get(60, TimeUnit.SECONDS);
        put.get(60, TimeUnit.SECONDS);
        float[] got = ws.get(last).buffer().readFloats(offset, n - 1024);
        float[] want = java.util.Arrays.copyOf(data, n - 1024);
        assertArrayEquals(want, got);
        // a signal without data, then a wait for two: a put and that signal
        r0.putSignal(ws.get(0), source, 16, DataType.FLOAT32, last, 0);
        r0.signal(last);
        rl.waitSignal(SignalWait.of(0, 2)).get(60, TimeUnit.SECONDS);
        assertArrayEquals(java.util.Arrays.copyOf(data, 16), ws.get(last).buffer().readFloats(0, 16));
        closeAll(ws);
    }

    @Test
    void aGroupMixesPutsWaitsAndCollectives() throws Exception {
        assumeOneSided();
        List<Window> ws = windows(1 << 16);
        List<Buffer> sums = new ArrayList<>();
        Group g = Group.create();
        for (int r = 0; r < comms.size(); r++) {
            Communicator c = comms.get(r);
            Buffer b = backend.allocate(c.device(), 4 * 256);
            b.write(0, new float[256]);
            sums.add(b);
            g.add(c, Operation.allReduce(b, b, 256, DataType.FLOAT32, ReduceOp.SUM));
        }
        Buffer source = ws.get(0).buffer().slice(0, 1024);
        source.write(0, new int[] {42, 43, 44});
        g.add(comms.get(0), OneSided.of(comms.get(0)).putSignalOperation(ws.get(0), source, 3, DataType.INT32, last, 512, 0, 0));
        g.add(comms.get(last), OneSided.of(comms.get(last)).waitSignalOperation(SignalWait.of(0, 1)));
        g.submit().get(60, TimeUnit.SECONDS);
        assertArrayEquals(new int[] {42, 43, 44}, ws.get(last).buffer().readInts(512, 3));
        for (Buffer b : sums) b.close();
        closeAll(ws);
    }

    @Test
    void blockChannelDeliversEveryBlockInOrder() throws Exception {
        assumeOneSided();
        int blocks = 64;
        long blockBytes = 1 << 20;
        List<ReactiveCommunicator> shapes = comms.stream().map(ReactiveCommunicator::of).toList();
        List<BlockChannel> channels = Flux.fromIterable(shapes)
                .flatMapSequential(s -> BlockChannel.open(s, 0, last, 4, blockBytes)).collectList()
                .block(Duration.ofSeconds(60));
        Buffer staging = backend.allocate(comms.get(0).device(), blockBytes * blocks);
        for (int i = 0; i < blocks; i++) staging.write(i * blockBytes, new int[] {i, i * 31, -i});
        Mono<Long> sent = channels.get(0).send(Flux.range(0, blocks).map(i -> staging.slice(i * blockBytes, blockBytes)));
        List<int[]> seen = new ArrayList<>();
        Mono<Void> received = channels.get(last).receive().doOnNext(b -> {
            seen.add(b.data().readInts(0, 3)); // synchronous read: fine off the event thread only
            b.release();
        }).subscribeOn(reactor.core.scheduler.Schedulers.boundedElastic())
                .publishOn(reactor.core.scheduler.Schedulers.boundedElastic()).then();
        Mono.when(sent, received).block(Duration.ofSeconds(120));
        assertEquals(blocks, seen.size());
        for (int i = 0; i < blocks; i++) assertArrayEquals(new int[] {i, i * 31, -i}, seen.get(i));
        Flux.fromIterable(channels).flatMap(BlockChannel::close).blockLast(Duration.ofSeconds(60));
        staging.close();
    }
}
