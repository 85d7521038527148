package org.jccl.rma.channel;

import org.reactivestreams.Publisher;

/**
 * The Reactive Streams TCK on the result of {@link BlockChannel#send}, a publisher of at most one element (the blocks
 * sent): a channel of one rank into its own window, drained by a consumer that releases every block. For the TCK's
 * empty publisher, the send's result without its element ({@code ignoreElement()}).
 */
public class SendTckTest extends ChannelPublisherTck<Long> {
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
