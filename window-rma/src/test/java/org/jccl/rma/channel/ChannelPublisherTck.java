package org.jccl.rma.channel;

import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import org.testng.annotations.AfterClass;
import org.testng.annotations.AfterMethod;
import org.testng.annotations.BeforeClass;

/**
 * What the channel's publisher verifications share: one {@link ChannelTckFixture} per class (host ranks and windows),
 * the channels of each TCK case closed after it.
 *
 * @param <T> the publisher's element
 */
public abstract class ChannelPublisherTck<T> extends PublisherVerification<T> {
    /** The host ranks and channels of this class. */
    protected ChannelTckFixture fixture;

    protected ChannelPublisherTck() {
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
}
