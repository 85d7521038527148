package org.jccl.rma.channel;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Work;
import org.jccl.core.error.JcclException;
import org.jccl.reactive.ReactiveCommunicator;
import org.jccl.rma.OneSided;
import org.jccl.rma.SignalWait;
import org.jccl.rma.Window;
import org.jccl.rma.WindowFlag;
import org.jccl.rma.reactive.ReactiveOneSided;
import reactor.core.Disposable;

/**
 * The raw one-sided part of a chaos round, on communicators of its own (split from the channels', so its waits never
 * sit on the channels' stream): every rank registers a window, then the plan's steps run in one order every rank
 * follows — {@code from} writes a region of its window and puts it, with a signal (index, context), into
 * {@code to}'s window; {@code to} waits for it and checks the bytes. At the plan's close point every rank closes its
 * window; one wait is cancelled (its subscriber detaches; the wait still runs on the stream); the round's kill aborts
 * the victim's communicator under way. Records every step's end: done, or a typed failure.
 */
final class OneSidedChaos {
    static final int REGION = 256;

    final AtomicLong stepsDone = new AtomicLong();
    final AtomicLong wrong = new AtomicLong();
    final List<Throwable> failures = new ArrayList<>();
    private final ChaosPlan.OneSided plan;
    private final List<Communicator> comms;

    OneSidedChaos(ChaosPlan.OneSided plan, List<Communicator> comms) {
        this.plan = plan;
        this.comms = comms;
    }

    /** Runs the steps on the calling thread; ends early, typed, when the round's kill reaches these communicators. */
    void run(Duration limit) {
        List<Window> windows;
        try {
            windows = OneSided.registerAll(comms, ChaosPlan.WINDOW_BYTES, WindowFlag.COLL_SYMMETRIC)
                    .get(limit.toSeconds(), TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            record(e.getCause());
            return;
        } catch (Exception e) {
            record(e);
            return;
        }
        List<ChaosPlan.Step> steps = plan.steps();
        try {
            for (int s = 0; s < steps.size() && s < plan.closeAt(); s++) {
                if (!step(s, steps.get(s), windows, limit)) break;
            }
        } finally {
            try {
                OneSided.closeAll(windows).get(limit.toSeconds(), TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                record(e.getCause());
            } catch (Exception e) {
                record(e);
            }
        }
    }

    /** One step; false once a failure ended the script (the communicators failed). */
    private boolean step(int s, ChaosPlan.Step step, List<Window> windows, Duration limit) {
        byte[] data = new byte[step.bytes()];
        for (int i = 0; i < data.length; i++) data[i] = (byte) (s * 7 + i);
        Window from = windows.get(step.from());
        Buffer source = from.buffer().slice(ChaosPlan.WINDOW_BYTES / 2 + (long) s * REGION, step.bytes());
        CompletableFuture<Void> waited;
        Work put;
        try {
            source.write(0, ByteBuffer.wrap(data));
            put = OneSided.of(comms.get(step.from())).putSignal(from, source, step.bytes(), DataType.UINT8, step.to(),
                    (long) s * REGION, step.signalIndex(), step.context());
            SignalWait wait = new SignalWait(step.from(), 1, step.signalIndex(), step.context());
            if (s == plan.cancelAt()) {
                // the subscriber goes away; the wait still runs on the stream, and the next step's wait follows it
                Disposable cancelled = ReactiveOneSided.of(ReactiveCommunicator.of(comms.get(step.to()))).waitSignal(wait).subscribe();
                cancelled.dispose();
                put.get(limit.toSeconds(), TimeUnit.SECONDS);
                stepsDone.incrementAndGet();
                return true;
            }
            waited = OneSided.of(comms.get(step.to())).waitSignal(wait);
            put.get(limit.toSeconds(), TimeUnit.SECONDS);
            waited.get(limit.toSeconds(), TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            record(e.getCause());
            return false;
        } catch (Exception e) {
            record(e);
            return false;
        }
        ByteBuffer got = ByteBuffer.allocate(step.bytes());
        windows.get(step.to()).buffer().read((long) s * REGION, got);
        if (!Arrays.equals(data, got.array())) wrong.incrementAndGet();
        stepsDone.incrementAndGet();
        return true;
    }

    private synchronized void record(Throwable t) {
        failures.add(t);
    }

    /** Failures that are not of jccl's hierarchy. */
    synchronized List<Throwable> untyped() {
        List<Throwable> out = new ArrayList<>();
        for (Throwable t : failures) if (!(t instanceof JcclException)) out.add(t);
        return out;
    }
}
