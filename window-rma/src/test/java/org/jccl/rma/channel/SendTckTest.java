package org.jccl.rma.channel;

import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import org.testng.annotations.AfterClass;
import org.testng.annotations.AfterMethod;
import org.testng.annotations.BeforeClass;

/**
 * The Reactive Streams TCK on the result of {@link BlockChannel#send}, a publisher of at most one element (the blocks
 * sent): a channel of one rank into its own window, drained by a consumer that releases every block. For the TCK's
 * empty publisher, the send's result without its element ({@code ignoreElement()}).
 */
public class SendTckTest extends PublisherVerification<Long> {
    private ChannelTckFixture fixture;

    public SendTckTest() {
        super(new TestEnvironment(1_000, 100), 300);
    }

    @BeforeClass
    public void open() {
        fixture = new ChannelTckFixture();
    }

    @AfterMethod(alwaysRun = true)
    public void closeChannels() {
        fixture.closeChannels();
    }

    @AfterClass(alwaysRun = true)
    public void close() {
        if (fixture != null) fixture.close();
    }

    @Override
    public Publisher<Long> createPublisher(long elements) {
        BlockChannel ch = fixture.open(4);
        fixture.drain(ch);
        return elements == 0 ? ch.send(fixture.blocks(10)).ignoreElement() : ch.send(fixture.blocks(10));
    }

    /** A send whose upstream fails: the result fails with the upstream's error. */
    @Override
    public Publisher<Long> createFailedPublisher() {
        BlockChannel ch = fixture.open(4);
        fixture.drain(ch);
        return ch.send(reactor.core.publisher.Flux.error(new IllegalStateException("the blocks failed")));
    }

    @Override
    public long maxElementsFromPublisher() {
        return 1;
    }
}
