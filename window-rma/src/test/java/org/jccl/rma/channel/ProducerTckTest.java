package org.jccl.rma.channel;

import java.util.concurrent.atomic.AtomicReference;
import org.jccl.core.Buffer;
import org.reactivestreams.Subscriber;
import org.reactivestreams.tck.SubscriberBlackboxVerification;
import org.reactivestreams.tck.TestEnvironment;
import org.testng.annotations.AfterClass;
import org.testng.annotations.AfterMethod;
import org.testng.annotations.BeforeClass;

/**
 * The Reactive Streams TCK on the other half of {@link BlockChannel#send}: the subscriber it subscribes to the blocks'
 * publisher (the channel's producer), taken from a publisher that only keeps it, then driven by the TCK; a consumer
 * on the same rank releases every block it puts.
 */
public class ProducerTckTest extends SubscriberBlackboxVerification<Buffer> {
    private ChannelTckFixture fixture;

    public ProducerTckTest() {
        super(new TestEnvironment(1_000, 100));
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
    public Subscriber<Buffer> createSubscriber() {
        BlockChannel ch = fixture.open(4);
        fixture.drain(ch);
        AtomicReference<Subscriber<? super Buffer>> producer = new AtomicReference<>();
        ch.send(producer::set).subscribe(n -> { }, e -> { });
        @SuppressWarnings("unchecked")
        Subscriber<Buffer> s = (Subscriber<Buffer>) producer.get();
        return s;
    }

    @Override
    public Buffer createElement(int element) {
        return fixture.block(element);
    }
}
