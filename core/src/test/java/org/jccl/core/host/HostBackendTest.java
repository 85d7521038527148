package org.jccl.core.host;

import static org.awaitility.Awaitility.await;
import static org.jccl.core.host.HostTesting.await;
import static org.jccl.core.host.HostTesting.failure;
import static org.jccl.core.host.HostTesting.floats;
import static org.jccl.core.host.HostTesting.host;
import static org.jccl.core.host.HostTesting.read;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jccl.core.Buffer;
import org.jccl.core.TestAccess;
import org.jccl.core.CommConfig;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Event;
import org.jccl.core.Group;
import org.jccl.core.Modules;
import org.jccl.core.Operation;
import org.jccl.core.ReduceOp;
import org.jccl.core.Registration;
import org.jccl.core.Stream;
import org.jccl.core.UniqueId;
import org.jccl.core.Work;
import org.jccl.core.error.CommunicatorAbortedException;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.InvalidUsageException;
import org.jccl.core.error.JcclException;
import org.jccl.core.error.RemoteErrorException;
import org.jccl.core.error.SystemErrorException;
import org.jccl.core.error.UnsupportedFeatureException;
import org.jccl.core.spi.DeviceCommSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The host backend through the public API: failures, communicator management, groups, lifetime, ordering. */
class HostBackendTest {
    private final List<AutoCloseable> opened = new ArrayList<>();

    private List<Communicator> ranks(int n) throws Exception {
        List<Communicator> comms = await(host().initAll(n));
        opened.addAll(comms);
        return comms;
    }

    private <T extends AutoCloseable> T keep(T resource) {
        opened.add(resource);
        return resource;
    }

    @AfterEach
    void closeAll() throws Exception {
        // Buffers after communicators: close in reverse order of opening.
        for (int i = opened.size() - 1; i >= 0; i--) opened.get(i).close();
    }

    /** The host backend loads no library: what it lacks is refused naming it, with no NCCL version to upgrade to. */
    @Test
    void whatTheHostBackendLacksIsRefusedNamingTheBackendAndNoLibraryVersion() throws Exception {
        Communicator comm = ranks(1).get(0);
        List<UnsupportedFeatureException> refusals = List.of(
                assertThrows(UnsupportedFeatureException.class, comm::suspend),
                assertThrows(UnsupportedFeatureException.class, () -> host().kernels()),
                assertThrows(UnsupportedFeatureException.class,
                        () -> Modules.context(comm).capability(DeviceCommSupport.class)));
        for (UnsupportedFeatureException e : refusals) {
            assertTrue(e.getMessage().contains("not implemented by the host backend (pure Java)"), e.getMessage());
            assertFalse(e.getMessage().matches(".*(version|NCCL \\d|2\\.\\d+\\.\\d).*"), e.getMessage());
        }
        assertEquals("ncclCommSuspend", refusals.get(0).function());
    }

    @Test
    void abortFailsTheAbortingRanksWorkAndItsPeersWithTypedErrors() throws Exception {
        List<Communicator> c = ranks(2);
        Buffer a = keep(floats(1, 2));
        Buffer b = keep(floats(3, 4));
        Work pending = c.get(0).allReduce(a, a, 2, DataType.FLOAT32, ReduceOp.SUM);
        assertFalse(pending.isDone());
        await(c.get(0).abort());
        assertInstanceOf(CommunicatorAbortedException.class, failure(pending));
        Throwable peer = failure(c.get(1).allReduce(b, b, 2, DataType.FLOAT32, ReduceOp.SUM));
        assertInstanceOf(RemoteErrorException.class, peer);
    }

    @Test
    void abortReleasesPeersAlreadyBlockedInACollective() throws Exception {
        List<Communicator> c = ranks(3);
        Buffer a = keep(floats(1));
        Buffer b = keep(floats(2));
        Work w0 = c.get(0).allReduce(a, a, 1, DataType.FLOAT32, ReduceOp.SUM);
        Work w1 = c.get(1).allReduce(b, b, 1, DataType.FLOAT32, ReduceOp.SUM);
        await(c.get(2).abort());
        assertInstanceOf(RemoteErrorException.class, failure(w0));
        assertInstanceOf(RemoteErrorException.class, failure(w1));
        assertNotEquals(null, c.get(0).lastError());
    }

    @Test
    void ranksThatDisagreeFailWithAnAsyncErrorInsteadOfCorruptingMemory() throws Exception {
        List<Communicator> c = ranks(2);
        Buffer a = keep(floats(1, 2, 3));
        Buffer b = keep(floats(1, 2, 3));
        Work w0 = c.get(0).allReduce(a, a, 3, DataType.FLOAT32, ReduceOp.SUM);
        Work w1 = c.get(1).allReduce(b, b, 2, DataType.FLOAT32, ReduceOp.SUM);
        Throwable e0 = failure(w0);
        Throwable e1 = failure(w1);
        assertInstanceOf(JcclException.class, e0);
        assertInstanceOf(JcclException.class, e1);
        assertTrue(e0 instanceof InvalidUsageException || e1 instanceof InvalidUsageException, e0 + " / " + e1);
        assertFalse(c.get(0).isOpen());
    }

    @Test
    void validationErrorsChangeNothing() throws Exception {
        List<Communicator> c = ranks(2);
        Buffer small = keep(floats(1));
        Buffer a = keep(floats(1, 2));
        Buffer b = keep(floats(10, 20));
        assertThrows(InvalidArgumentException.class, () -> c.get(0).allReduce(a, small, 2, DataType.FLOAT32, ReduceOp.SUM));
        assertThrows(InvalidArgumentException.class, () -> c.get(0).broadcast(a, a, 2, DataType.FLOAT32, 5));
        assertEquals(0, c.get(0).pendingCount());
        Work w0 = c.get(0).allReduce(a, a, 2, DataType.FLOAT32, ReduceOp.SUM);
        Work w1 = c.get(1).allReduce(b, b, 2, DataType.FLOAT32, ReduceOp.SUM);
        await(CompletableFuture.allOf(w0, w1));
        assertArrayEquals(new float[] {11, 22}, read(a));
        assertArrayEquals(new float[] {11, 22}, read(b));
    }

    @Test
    void splitFormsCommunicatorsOrderedByKeyThenRank() throws Exception {
        List<Communicator> c = ranks(4);
        List<CompletableFuture<Communicator>> futures = new ArrayList<>();
        for (int r = 0; r < 3; r++) futures.add(c.get(r).split(r % 2, -r));
        CompletableFuture<Void> excluded = c.get(3).splitExcluded();
        List<Communicator> children = new ArrayList<>();
        for (CompletableFuture<Communicator> f : futures) children.add(keep(await(f)));
        await(excluded);
        // Color 0: ranks 0 (key 0) and 2 (key -2): rank 2 comes first. Color 1: rank 1 alone.
        assertEquals(2, children.get(0).size());
        assertEquals(1, children.get(0).rank());
        assertEquals(0, children.get(2).rank());
        assertEquals(1, children.get(1).size());
        Buffer x = keep(floats(1));
        Buffer y = keep(floats(5));
        await(CompletableFuture.allOf(children.get(0).allReduce(x, x, 1, DataType.FLOAT32, ReduceOp.SUM),
                children.get(2).allReduce(y, y, 1, DataType.FLOAT32, ReduceOp.SUM)));
        assertEquals(6f, read(x)[0]);
        assertEquals(6f, read(y)[0]);
    }

    @Test
    void shrinkRenumbersTheRemainingRanksAndWorksAfterAnAbort() throws Exception {
        List<Communicator> c = ranks(3);
        await(c.get(1).abort());
        CompletableFuture<Communicator> s0 = c.get(0).shrink(new int[] {1}, CommConfig.DEFAULT, c.get(0).options());
        CompletableFuture<Communicator> s2 = c.get(2).shrink(new int[] {1}, CommConfig.DEFAULT, c.get(2).options());
        Communicator n0 = keep(await(s0));
        Communicator n2 = keep(await(s2));
        assertEquals(2, n0.size());
        assertEquals(0, n0.rank());
        assertEquals(1, n2.rank());
        Buffer x = keep(floats(2));
        Buffer y = keep(floats(3));
        await(CompletableFuture.allOf(n0.allReduce(x, x, 1, DataType.FLOAT32, ReduceOp.PROD),
                n2.allReduce(y, y, 1, DataType.FLOAT32, ReduceOp.PROD)));
        assertEquals(6f, read(x)[0]);
    }

    @Test
    void sendAndRecvInOneGroupNeverDeadlockInEitherOrder() throws Exception {
        List<Communicator> c = ranks(2);
        Buffer s0 = keep(floats(1, 2));
        Buffer r0 = keep(floats(0, 0));
        Buffer s1 = keep(floats(3, 4));
        Buffer r1 = keep(floats(0, 0));
        Work w0 = c.get(0).submitGroup(List.of(Operation.send(s0, 2, DataType.FLOAT32, 1), Operation.recv(r0, 2, DataType.FLOAT32, 1)));
        Work w1 = c.get(1).submitGroup(List.of(Operation.send(s1, 2, DataType.FLOAT32, 0), Operation.recv(r1, 2, DataType.FLOAT32, 0)));
        await(CompletableFuture.allOf(w0, w1));
        assertArrayEquals(new float[] {3, 4}, read(r0));
        assertArrayEquals(new float[] {1, 2}, read(r1));
    }

    @Test
    void ungroupedSendAndRecvPairUp() throws Exception {
        List<Communicator> c = ranks(2);
        Buffer s = keep(floats(7, 8, 9));
        Buffer r = keep(floats(0, 0, 0));
        Work recv = c.get(1).recv(r, 3, DataType.FLOAT32, 0);
        Work send = c.get(0).send(s, 3, DataType.FLOAT32, 1);
        await(CompletableFuture.allOf(recv, send));
        assertArrayEquals(new float[] {7, 8, 9}, read(r));
    }

    @Test
    void oneGroupOverSeveralCommunicatorsOfThisProcess() throws Exception {
        List<Communicator> c = ranks(2);
        Buffer s = keep(floats(5, 6));
        Buffer r = keep(floats(0, 0));
        Buffer a = keep(floats(1));
        Buffer b = keep(floats(2));
        Work w = Group.create()
                .add(c.get(1), Operation.recv(r, 2, DataType.FLOAT32, 0))
                .add(c.get(0), Operation.send(s, 2, DataType.FLOAT32, 1))
                .add(c.get(0), Operation.allReduce(a, a, 1, DataType.FLOAT32, ReduceOp.MAX))
                .add(c.get(1), Operation.allReduce(b, b, 1, DataType.FLOAT32, ReduceOp.MAX))
                .submit();
        await(w);
        assertArrayEquals(new float[] {5, 6}, read(r));
        assertEquals(2f, read(a)[0]);
        float estimate = await(Group.create().add(c.get(0), Operation.allReduce(a, a, 1, DataType.FLOAT32, ReduceOp.SUM)).simulate());
        assertTrue(estimate > 0, "estimate " + estimate);
    }

    @Test
    void closingABufferWithPendingWorkDefersTheFree() throws Exception {
        List<Communicator> c = ranks(2);
        Buffer a = floats(1, 2);
        Buffer b = keep(floats(3, 4));
        Work w0 = c.get(0).allReduce(a, a, 2, DataType.FLOAT32, ReduceOp.SUM);
        a.close();
        assertTrue(a.isClosed());
        assertFalse(TestAccess.block(a).isFreed(), "pending work still holds the memory");
        Work w1 = c.get(1).allReduce(b, b, 2, DataType.FLOAT32, ReduceOp.SUM);
        await(CompletableFuture.allOf(w0, w1));
        await().atMost(Duration.ofSeconds(10)).until(() -> TestAccess.block(a).isFreed());
        assertArrayEquals(new float[] {4, 6}, read(b));
    }

    @Test
    void worksOfOneStreamCompleteInIssueOrderOnTheEventThread() throws Exception {
        List<Communicator> c = ranks(2);
        Buffer a = keep(floats(1));
        Buffer b = keep(floats(1));
        List<Long> order = new CopyOnWriteArrayList<>();
        List<String> threads = new CopyOnWriteArrayList<>();
        List<Work> works = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            Work w = c.get(0).allReduce(a, a, 1, DataType.FLOAT32, ReduceOp.SUM);
            w.thenRun(() -> {
                order.add(w.sequence());
                threads.add(Thread.currentThread().getName());
            });
            works.add(w);
            works.add(c.get(1).allReduce(b, b, 1, DataType.FLOAT32, ReduceOp.SUM));
        }
        await(CompletableFuture.allOf(works.toArray(new CompletableFuture[0])));
        await().atMost(Duration.ofSeconds(10)).until(() -> order.size() == 50);
        for (int i = 1; i < order.size(); i++) assertTrue(order.get(i) > order.get(i - 1), "order " + order);
        assertTrue(threads.stream().allMatch("jccl-event"::equals), threads.toString());
        assertEquals((float) Math.pow(2, 50), read(a)[0]);
    }

    @Test
    void streamsAndEventsOrderCopiesAcrossStreams() throws Exception {
        Stream first = keep(host().createStream(0));
        Stream second = keep(host().createStream(0));
        Buffer src = keep(host().allocate(0, 1 << 20));
        Buffer dst = keep(host().allocate(0, 1 << 20));
        Event filled = keep(host().createEvent(0, true));
        first.fill(src, 7, 1 << 20);
        filled.record(first);
        second.waitFor(filled);
        await(second.copy(dst, src, 1 << 20));
        ByteBuffer out = ByteBuffer.allocate(1 << 20);
        dst.read(0, out);
        for (int i = 0; i < out.capacity(); i++) assertEquals(7, out.get(i));
        assertTrue(filled.isDone());
    }

    @Test
    void largeUnalignedReductionsCrossBlockBoundaries() throws Exception {
        List<Communicator> c = ranks(3);
        int n = 20_011;
        List<Work> works = new ArrayList<>();
        List<Buffer> views = new ArrayList<>();
        for (int r = 0; r < 3; r++) {
            Buffer whole = keep(host().allocate(0, 4L * n + 3));
            Buffer view = whole.slice(3, 4L * n);
            ByteBuffer in = ByteBuffer.allocate(4 * n).order(ByteOrder.nativeOrder());
            for (int i = 0; i < n; i++) in.putInt(i * (r + 1));
            in.flip();
            view.write(0, in);
            views.add(view);
            works.add(c.get(r).allReduce(view, view, n, DataType.INT32, ReduceOp.SUM));
        }
        await(CompletableFuture.allOf(works.toArray(new CompletableFuture[0])));
        ByteBuffer out = ByteBuffer.allocate(4 * n).order(ByteOrder.nativeOrder());
        views.get(1).read(0, out);
        for (int i = 0; i < n; i++) assertEquals(6 * i, out.getInt(i * 4));

        // reduceScatter in place over several chunks per block: rank r keeps block r of the sum.
        int m = 17_003;
        List<Work> scatters = new ArrayList<>();
        List<Buffer> sends = new ArrayList<>();
        for (int r = 0; r < 3; r++) {
            Buffer send = keep(host().allocate(0, 4L * m * 3));
            ByteBuffer in = ByteBuffer.allocate(4 * m * 3).order(ByteOrder.nativeOrder());
            for (int i = 0; i < 3 * m; i++) in.putInt(i + r);
            in.flip();
            send.write(0, in);
            sends.add(send);
            Buffer recv = send.slice(4L * m * r, 4L * m);
            scatters.add(c.get(r).reduceScatter(send, recv, m, DataType.INT32, ReduceOp.SUM));
        }
        await(CompletableFuture.allOf(scatters.toArray(new CompletableFuture[0])));
        for (int r = 0; r < 3; r++) {
            ByteBuffer block = ByteBuffer.allocate(4 * m).order(ByteOrder.nativeOrder());
            sends.get(r).slice(4L * m * r, 4L * m).read(0, block);
            for (int i = 0; i < m; i++) assertEquals(3 * (r * m + i) + 3, block.getInt(i * 4), "rank " + r + " element " + i);
        }
    }

    @Test
    void initRankJoinsRanksByUniqueIdAndTimesOutAlone() throws Exception {
        UniqueId id = host().newUniqueId();
        List<CompletableFuture<Communicator>> joins = new ArrayList<>();
        for (int r = 0; r < 3; r++) joins.add(host().initRank(id, 3, r, -1));
        List<Communicator> c = new ArrayList<>();
        for (CompletableFuture<Communicator> f : joins) c.add(keep(await(f)));
        Buffer x = keep(floats(4));
        Buffer y = keep(floats(9));
        Buffer z = keep(floats(1));
        await(CompletableFuture.allOf(c.get(0).allReduce(x, x, 1, DataType.FLOAT32, ReduceOp.MIN),
                c.get(1).allReduce(y, y, 1, DataType.FLOAT32, ReduceOp.MIN),
                c.get(2).allReduce(z, z, 1, DataType.FLOAT32, ReduceOp.MIN)));
        assertEquals(1f, read(y)[0]);

        UniqueId second = host().newUniqueId();
        CompletableFuture<Communicator> s0 = host().initRankScalable(List.of(id, second), 2, 0, -1, CommConfig.DEFAULT,
                org.jccl.core.CommOptions.defaults());
        CompletableFuture<Communicator> s1 = host().initRankScalable(List.of(id, second), 2, 1, -1, CommConfig.DEFAULT,
                org.jccl.core.CommOptions.defaults());
        assertEquals(2, keep(await(s0)).size());
        assertEquals(1, keep(await(s1)).rank());

        String key = "jccl.host.initTimeout";
        System.setProperty(key, "200ms");
        try {
            Throwable alone = failure(host().initRank(host().newUniqueId(), 2, 0, -1));
            assertInstanceOf(SystemErrorException.class, alone);
        } finally {
            System.clearProperty(key);
        }
    }

    @Test
    void registrationsAndPreMulSumsAreValidatedHandles() throws Exception {
        List<Communicator> c = ranks(1);
        Buffer a = keep(floats(1, 2));
        Registration reg = await(c.get(0).register(a));
        assertTrue(reg.handle() > 0);
        reg.close();
        try (var p = await(c.get(0).createPreMulSum(3.0, DataType.FLOAT32))) {
            assertTrue(p.code() >= 5);
            await(c.get(0).allReduce(a, a, 2, DataType.FLOAT32, p));
            assertArrayEquals(new float[] {3, 6}, read(a));
            assertThrows(InvalidUsageException.class, () -> c.get(0).allReduce(a, a, 2, DataType.FLOAT64, p));
        }
        HostDriver driver = new HostDriver();
        HostComm comm = (HostComm) driver.initAll(new int[] {-1}).get(0);
        assertThrows(InvalidArgumentException.class, () -> comm.deregister(42));
        assertThrows(InvalidArgumentException.class, () -> comm.destroyReduceOp(7));
        assertThrows(InvalidArgumentException.class, () -> comm.destroyReduceOp(0));
        comm.destroy();
    }

    @Test
    void smallFloatReductionsSaturateOrOverflowPerFormat() throws Exception {
        List<Communicator> c = ranks(2);
        // {type, input pattern on both ranks, expected pattern of the sum}
        Object[][] cases = {
                {DataType.FLOAT8_E4M3, 0x7E, 0x7E},   // 448 + 448 saturates to 448
                {DataType.FLOAT8_E4M3, 0x7F, 0x7F},   // NaN stays NaN
                {DataType.FLOAT8_E5M2, 0x7B, 0x7B},   // 57344 + 57344 saturates, never infinity
                {DataType.FLOAT8_E5M2, 0xFB, 0xFB},   // negative side too
                {DataType.FLOAT16, 0x7BFF, 0x7C00},   // 65504 + 65504 overflows to infinity (IEEE)
                {DataType.BFLOAT16, 0x7F7F, 0x7F80},
        };
        for (Object[] k : cases) {
            DataType type = (DataType) k[0];
            int input = (Integer) k[1];
            int expected = (Integer) k[2];
            Buffer[] b = new Buffer[2];
            Work[] w = new Work[2];
            for (int r = 0; r < 2; r++) {
                b[r] = keep(host().allocate(0, type.size()));
                ByteBuffer in = ByteBuffer.allocate(type.size()).order(ByteOrder.nativeOrder());
                if (type.size() == 1) in.put((byte) input);
                else in.putShort((short) input);
                in.flip();
                b[r].write(0, in);
                w[r] = c.get(r).allReduce(b[r], b[r], 1, type, ReduceOp.SUM);
            }
            await(CompletableFuture.allOf(w));
            ByteBuffer out = ByteBuffer.allocate(type.size()).order(ByteOrder.nativeOrder());
            b[1].read(0, out);
            int actual = type.size() == 1 ? out.get(0) & 0xff : out.getShort(0) & 0xffff;
            assertEquals(expected, actual, type + " sum of " + Integer.toHexString(input));
        }
    }
}
