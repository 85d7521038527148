package org.jccl.reactive;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Jccl;
import org.jccl.core.Operation;
import org.jccl.core.ReduceOp;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import org.testng.annotations.AfterClass;
import org.testng.annotations.BeforeClass;
import reactor.core.publisher.Flux;

/**
 * The Reactive Streams TCK (TestNG, run on the JUnit Platform by the TestNG engine) on
 * {@link ReactiveCommunicator#pipeline}: each item issues an all-reduce on a one-rank host communicator, at most four
 * in flight, and the pipeline's Flux is the publisher under test.
 */
public class PipelineTckTest extends PublisherVerification<Integer> {
    /** Generous for a loaded two-core build machine; the no-signal wait is what most required tests spend. */
    static final TestEnvironment ENV = new TestEnvironment(1_000, 100);
    private Communicator communicator;
    private ReactiveCommunicator shape;
    private final List<Buffer> buffers = new ArrayList<>();

    public PipelineTckTest() {
        super(ENV, 1_000);
    }

    @BeforeClass
    public void openCommunicator() throws Exception {
        Backend backend = Jccl.backend(BackendKind.HOST);
        communicator = backend.initAll(1).get(30, TimeUnit.SECONDS).get(0);
        shape = ReactiveCommunicator.of(communicator);
    }

    @AfterClass(alwaysRun = true)
    public void closeCommunicator() {
        if (communicator != null) communicator.close();
        buffers.forEach(Buffer::close);
    }

    @Override
    public Publisher<Integer> createPublisher(long elements) {
        Buffer b = communicator.backend().allocate(communicator.device(), 4);
        synchronized (buffers) {
            buffers.add(b);
        }
        Operation allReduce = Operation.allReduce(b, b, 1, DataType.INT32, ReduceOp.SUM);
        // Long.MAX_VALUE asks for an endless stream: the TCK cancels it
        Flux<Integer> items = Flux.generate(() -> 0L, (issued, sink) -> {
            if (issued < elements) sink.next((int) (long) issued);
            else sink.complete();
            return issued + 1;
        });
        return shape.pipeline(items, item -> allReduce, 4);
    }

    @Override
    public Publisher<Integer> createFailedPublisher() {
        return shape.pipeline(Flux.error(new IllegalStateException("the items failed")), item -> null, 4);
    }
}
