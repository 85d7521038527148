package org.jccl.rma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Jccl;
import org.jccl.core.Work;
import org.jccl.core.WorkObserver;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * The one-sided set-up NCCL makes collective, taken by every rank with its communicator's first window: once per
 * communicator, before the first registration completes, so that two ranks of four can then put to each other alone.
 */
class OneSidedSetUpTest {
    @Test
    void theFirstWindowTakesTheSetUpOnEveryRankOnceAndTwoRanksOfFourThenPutAlone() throws Exception {
        List<Integer> setUps = new CopyOnWriteArrayList<>();
        WorkObserver observer = new WorkObserver() {
            @Override
            public void issued(Work work) {
            }

            @Override
            public void completed(Work work, @Nullable Throwable error, long elapsedNanos) {
                Communicator c = work.communicator();
                if (work.operation().equals("oneSidedSetUp") && error == null && c != null) setUps.add(c.rank());
            }
        };
        Jccl.addWorkObserver(observer);
        Backend host = Jccl.backend(BackendKind.HOST);
        List<Communicator> comms = host.initAll(4).get(30, TimeUnit.SECONDS);
        try {
            List<Window> first = OneSided.registerAll(comms, 4096, WindowFlag.COLL_SYMMETRIC).get(30, TimeUnit.SECONDS);
            assertEquals(List.of(0, 1, 2, 3), setUps.stream().sorted().toList(), "one set-up per rank, done when registered");
            List<Window> second = OneSided.registerAll(comms, 4096, WindowFlag.COLL_SYMMETRIC).get(30, TimeUnit.SECONDS);
            assertEquals(4, setUps.size(), "a communicator's later windows take no set-up");

            Window source = first.get(0);
            source.buffer().write(0, new int[] {7, 8, 9});
            Work put = OneSided.of(comms.get(0)).putSignal(source, source.buffer().slice(0, 12), 3, DataType.INT32, 3, 64);
            OneSided.of(comms.get(3)).waitSignal(SignalWait.of(0, 1)).get(30, TimeUnit.SECONDS);
            put.get(30, TimeUnit.SECONDS);
            assertArrayEquals(new int[] {7, 8, 9}, first.get(3).buffer().readInts(64, 3));
            OneSided.closeAll(second).get(30, TimeUnit.SECONDS);
            OneSided.closeAll(first).get(30, TimeUnit.SECONDS);
        } finally {
            Jccl.removeWorkObserver(observer);
            comms.forEach(Communicator::close);
        }
    }
}
