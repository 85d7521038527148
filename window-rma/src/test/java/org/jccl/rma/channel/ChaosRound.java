package org.jccl.rma.channel;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.jccl.core.Backend;
import org.jccl.core.Buffer;
import org.jccl.core.CommOptions;
import org.jccl.core.Communicator;
import org.jccl.rma.channel.ChaosPlan.Channel;
import org.jccl.rma.channel.ChaosPlan.ConsumerFault;
import org.jccl.rma.channel.ChaosPlan.Pace;
import org.jccl.rma.channel.ChaosPlan.ProducerFault;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

/**
 * Runs the channels of one {@link ChaosPlan} on host ranks of this JVM: every side streams with its pace and fault,
 * each rank closes all its channels (in channel order, as every rank must) once its progress reaches its close point,
 * once all its sides ended, or once a consumer of it holds a full ring; the victim's communicators are aborted at its
 * kill point. Records what every side, close and delivered block did, for {@link ChannelChaosTest} to check.
 */
final class ChaosRound implements AutoCloseable {
    /** What one side's subscriber saw: the blocks, or the failure; {@link #CANCELLED_BY_TEST} if the test cancelled it. */
    static final long CANCELLED_BY_TEST = -1;

    final ChaosPlan plan;
    final List<Communicator> comms;
    final List<List<BlockChannel>> channels = new ArrayList<>();
    final List<CompletableFuture<Long>> sent = new ArrayList<>();
    final List<CompletableFuture<Long>> received = new ArrayList<>();
    final List<CompletableFuture<Void>> closes = new CopyOnWriteArrayList<>();
    final AtomicLong wrongBlocks = new AtomicLong();
    final AtomicBoolean killed = new AtomicBoolean();
    /** More communicators of the victim's to abort with its own (the raw one-sided part's). */
    final List<Communicator> killedWith = new CopyOnWriteArrayList<>();
    private final Backend backend;
    private final List<Buffer> sources = new ArrayList<>();
    private final List<Disposable> running = new CopyOnWriteArrayList<>();
    private final AtomicLong[] progress;
    private final boolean[] closed;
    /** Ranks that must close for their channels to end: a consumer holds a full ring, or never subscribed. */
    private final boolean[] holding;
    private final ExecutorService control = Executors.newSingleThreadExecutor(r -> new Thread(r, "chaos-control"));

    ChaosRound(ChaosPlan plan, Backend backend) throws Exception {
        this.plan = plan;
        this.backend = backend;
        int[] devices = new int[plan.ranks()];
        Arrays.fill(devices, -1);
        // a communicator closed while a channel still waits drains for closeTimeout, then aborts
        comms = backend.initAll(devices, CommOptions.defaults().withCloseTimeout(Duration.ofSeconds(2))).get(30, TimeUnit.SECONDS);
        progress = new AtomicLong[plan.ranks()];
        for (int r = 0; r < plan.ranks(); r++) progress[r] = new AtomicLong();
        closed = new boolean[plan.ranks()];
        holding = new boolean[plan.ranks()];
    }

    /** Opens every channel (every rank, in plan order), then starts every side. */
    void start(Duration limit) {
        for (Channel c : plan.channels()) {
            channels.add(BlockChannelLanesTest.openOnEveryRank(comms, c.producer(), c.consumer(), c.slots(), c.blockBytes())
                    .block(limit));
            sent.add(new CompletableFuture<>());
            received.add(new CompletableFuture<>());
        }
        for (Channel c : plan.channels()) {
            startProducer(c);
            startConsumer(c);
        }
        control.execute(this::checkTriggers);
    }

    /** The bytes of block {@code i} of channel {@code c}: its length varies, its content names both. */
    static byte[] content(Channel c, int i) {
        byte[] b = new byte[Math.max(1, c.blockBytes() - i % 7)];
        for (int j = 0; j < b.length; j++) b[j] = (byte) (c.index() * 131 + i * 17 + j);
        return b;
    }

    private void startProducer(Channel c) {
        Buffer staging = backend.allocate(-1, (long) c.blockBytes() * Math.max(1, c.blocks()));
        sources.add(staging);
        for (int i = 0; i < c.blocks(); i++) staging.write((long) i * c.blockBytes(), ByteBuffer.wrap(content(c, i)));
        Flux<Buffer> blocks = Flux.range(0, c.blocks()).map(i -> staging.slice((long) i * c.blockBytes(), content(c, i).length));
        if (c.producerFault() == ProducerFault.UPSTREAM_FAILS) {
            blocks = blocks.take(c.producerFaultAt()).concatWith(Flux.error(new IllegalStateException(ChannelChaosTest.UPSTREAM_FAILURE)));
        }
        if (c.producerPace() == Pace.SLOW) blocks = blocks.delayElements(Duration.ofMillis(1));
        AtomicLong emitted = new AtomicLong();
        CompletableFuture<Long> result = sent.get(c.index());
        Disposable[] self = new Disposable[1];
        blocks = blocks.doOnNext(b -> {
            long n = emitted.incrementAndGet();
            advance(c.producer());
            if (c.producerFault() == ProducerFault.CANCELS && n >= c.producerFaultAt() && self[0] != null) {
                result.complete(CANCELLED_BY_TEST);
                self[0].dispose();
            }
        });
        BlockChannel producer = channels.get(c.index()).get(c.producer());
        Disposable d = producer.send(blocks).subscribe(result::complete, result::completeExceptionally);
        self[0] = d;
        running.add(d);
        if (c.producerFault() == ProducerFault.CANCELS && c.producerFaultAt() == 0) {
            result.complete(CANCELLED_BY_TEST);
            d.dispose();
        }
        result.whenComplete((v, e) -> control.execute(this::checkTriggers));
    }

    private void startConsumer(Channel c) {
        BlockChannel consumer = channels.get(c.index()).get(c.consumer());
        CompletableFuture<Long> result = received.get(c.index());
        AtomicLong count = new AtomicLong();
        AtomicLong heldHere = new AtomicLong();
        Flux<ReceivedBlock> blocks = consumer.receive().publishOn(Schedulers.boundedElastic());
        if (c.consumerPace() == Pace.SLOW) blocks = blocks.delayElements(Duration.ofMillis(1));
        if (c.consumerFault() == ConsumerFault.CANCELS) blocks = blocks.take(c.consumerFaultAt());
        if (c.consumerFault() == ConsumerFault.CANCELS && c.consumerFaultAt() == 0) {
            // take(0) never subscribes: like a user whose consumer never comes, its rank must close the channel to
            // end the producer, which otherwise waits for credits (or, on one rank, for releases) for ever
            synchronized (this) {
                holding[c.consumer()] = true;
            }
        }
        Disposable d = blocks.doOnNext(b -> {
            long n = count.incrementAndGet();
            ByteBuffer got = ByteBuffer.allocate((int) b.data().byteSize());
            try {
                b.data().read(0, got);
            } catch (RuntimeException e) {
                // the channel's window was freed by its close
            }
            boolean intact = b.sequence() == n - 1 && Arrays.equals(got.array(), content(c, (int) b.sequence()));
            // A block read once its rank's close began may have been overwritten: close counts blocks still held as
            // released. One read before must be intact.
            if (!intact && !closing(c.consumer())) wrongBlocks.incrementAndGet();
            advance(c.consumer());
            if (c.consumerFault() == ConsumerFault.HOLDS && n > c.consumerFaultAt()) {
                // held: never released; its rank's close counts it released
                if (heldHere.incrementAndGet() >= c.slots()) {
                    synchronized (this) {
                        holding[c.consumer()] = true;
                    }
                    control.execute(this::checkTriggers);
                }
            } else {
                b.release();
            }
        }).count().subscribe(n -> result.complete(c.consumerFault() == ConsumerFault.CANCELS
                && n == c.consumerFaultAt() && n < c.blocks() ? CANCELLED_BY_TEST : n), result::completeExceptionally);
        running.add(d);
        result.whenComplete((v, e) -> control.execute(this::checkTriggers));
    }

    private void advance(int rank) {
        progress[rank].incrementAndGet();
        control.execute(this::checkTriggers);
    }

    /** On the control thread: the kill, then each rank's close, once its moment came. */
    private void checkTriggers() {
        int victim = plan.victim();
        if (victim >= 0 && !killed.get() && (progress[victim].get() >= plan.killAfter() || sidesEnded(victim))) {
            killed.set(true);
            comms.get(victim).abort();
            if (victim < killedWith.size()) killedWith.get(victim).abort();
        }
        for (int r = 0; r < plan.ranks(); r++) {
            boolean holds;
            synchronized (this) {
                if (closed[r]) continue;
                holds = holding[r];
            }
            boolean killedHere = r == victim && killed.get();
            if (progress[r].get() >= plan.closeAfter()[r] || sidesEnded(r) || holds || killedHere) closeAll(r);
        }
    }

    private synchronized boolean closing(int rank) {
        return closed[rank];
    }

    private boolean sidesEnded(int rank) {
        for (Channel c : plan.channels()) {
            if (c.producer() == rank && !sent.get(c.index()).isDone()) return false;
            if (c.consumer() == rank && !received.get(c.index()).isDone()) return false;
        }
        return true;
    }

    /** Rank {@code r} closes every channel, in channel order (every rank's order), each close called at once. */
    private void closeAll(int r) {
        synchronized (this) {
            closed[r] = true;
        }
        for (List<BlockChannel> ch : channels) closes.add(ch.get(r).close().toFuture());
    }

    boolean finished() {
        synchronized (this) {
            for (boolean c : closed) if (!c) return false;
        }
        for (CompletableFuture<Void> c : closes) if (!c.isDone()) return false;
        for (CompletableFuture<Long> s : sent) if (!s.isDone()) return false;
        for (CompletableFuture<Long> s : received) if (!s.isDone()) return false;
        return true;
    }

    /** Whether nothing but the channel's own faults touched channel {@code c}: it must deliver every block. */
    boolean undisturbed(Channel c) {
        if (plan.victim() >= 0 || c.producerFault() != ProducerFault.NONE || c.consumerFault() != ConsumerFault.NONE) return false;
        for (int r : new int[] {c.producer(), c.consumer()}) {
            if (plan.closeAfter()[r] != ChaosPlan.NEVER) return false;
            for (Channel other : plan.channels()) {
                // a consumer that holds its ring or never subscribes makes its rank close everything
                boolean closesItsRank = other.consumerFault() == ConsumerFault.HOLDS
                        || other.consumerFault() == ConsumerFault.CANCELS && other.consumerFaultAt() == 0;
                if (other.consumer() == r && closesItsRank) return false;
            }
        }
        return true;
    }

    String state() {
        StringBuilder b = new StringBuilder("progress");
        for (AtomicLong p : progress) b.append(' ').append(p.get());
        synchronized (this) {
            b.append(", killed ").append(killed.get()).append(", closed ").append(Arrays.toString(closed));
        }
        for (int i = 0; i < channels.size(); i++) {
            b.append("\n    #").append(i).append(" sent ").append(describe(sent.get(i))).append(", received ")
                    .append(describe(received.get(i))).append(": ").append(channels.get(i));
        }
        return b.toString();
    }

    private static String describe(CompletableFuture<Long> f) {
        if (!f.isDone()) return "pending";
        return f.handle((v, e) -> e == null ? String.valueOf(v) : String.valueOf(e)).join();
    }

    @Override
    public void close() {
        running.forEach(Disposable::dispose);
        control.shutdownNow();
        comms.forEach(Communicator::close);
        sources.forEach(Buffer::close);
    }
}
