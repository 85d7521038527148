package org.jccl.rma.channel;

import org.reactivestreams.Publisher;

/**
 * The Reactive Streams TCK (TestNG, run on the JUnit Platform by the TestNG engine) on {@link BlockChannel#receive()}:
 * a channel of one rank into its own window with a slot for every block and one for its end, so that the TCK's
 * subscribers, which never release a block, see every one and the end (releases and credits are the other tests'
 * business); its producer sends the blocks the TCK asks for.
 */
public class ReceiveTckTest extends ChannelPublisherTck<ReceivedBlock> {
    @Override
    public Publisher<ReceivedBlock> createPublisher(long elements) {
        BlockChannel ch = fixture.open((int) elements + 1); // the last header too needs a slot
        ch.send(fixture.blocks(elements)).subscribe(n -> { }, e -> { });
        return ch.receive();
    }

    /** A closed channel's {@code receive()}: subscribing fails with InvalidUsageException. */
    @Override
    public Publisher<ReceivedBlock> createFailedPublisher() {
        BlockChannel ch = fixture.open(1);
        ch.close().block(ChannelTckFixture.LIMIT);
        return ch.receive();
    }

    @Override
    public long maxElementsFromPublisher() {
        return ChannelTckFixture.MAX_BLOCKS;
    }

}
