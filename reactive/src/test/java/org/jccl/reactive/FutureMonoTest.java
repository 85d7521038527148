package org.jccl.reactive;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.jccl.core.error.InvalidArgumentException;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.test.subscriber.TestSubscriber;

/**
 * The bridge every Mono of the module goes through, on plain futures: cold, issue before the subscriber's set-up,
 * values only on request, typed errors, and a result that a cancelled subscriber never takes goes to its owner.
 */
class FutureMonoTest {
    private static final Duration WAIT = Duration.ofSeconds(5);

    @Test
    void eachSubscriptionMakesOneFreshCall() {
        AtomicInteger calls = new AtomicInteger();
        Mono<Integer> mono = FutureMono.of(() -> CompletableFuture.completedFuture(calls.incrementAndGet()), null);
        assertEquals(0, calls.get(), "nothing is called before a subscription");
        StepVerifier.create(mono).expectNext(1).verifyComplete();
        StepVerifier.create(mono).expectNext(2).verifyComplete();
    }

    @Test
    void theCallIsMadeBeforeTheSubscriberHearsOfItsSubscription() {
        List<String> order = new CopyOnWriteArrayList<>();
        Mono<Void> mono = FutureMono.of(() -> {
            order.add("call");
            return new CompletableFuture<Void>();
        }, null);
        mono.doOnSubscribe(s -> order.add("onSubscribe")).subscribe();
        assertEquals(List.of("call", "onSubscribe"), order);
    }

    @Test
    void aVoidResultCompletesEmptyWithoutARequest() {
        CompletableFuture<Void> future = new CompletableFuture<>();
        TestSubscriber<Void> subscriber = TestSubscriber.builder().initialRequest(0).build();
        FutureMono.of(() -> future, null).subscribe(subscriber);
        future.complete(null);
        assertTrue(subscriber.isTerminatedComplete(), "an empty completion needs no demand");
    }

    @Test
    void aValueWaitsForTheRequestWhicheverComesFirst() {
        StepVerifier.create(FutureMono.of(() -> CompletableFuture.completedFuture("early"), null), 0)
                .expectSubscription().expectNoEvent(Duration.ofMillis(20))
                .thenRequest(1).expectNext("early").verifyComplete();

        CompletableFuture<String> late = new CompletableFuture<>();
        StepVerifier.create(FutureMono.of(() -> late, null))
                .expectSubscription().then(() -> late.complete("late"))
                .expectNext("late").expectComplete().verify(WAIT);
    }

    @Test
    void errorsReachTheSubscriberTypedAndUnwrapped() {
        InvalidArgumentException cause = new InvalidArgumentException("bad count");
        StepVerifier.create(FutureMono.of(() -> CompletableFuture.failedFuture(new CompletionException(cause)), null))
                .expectErrorSatisfies(e -> assertSame(cause, e)).verify(WAIT);
        StepVerifier.create(FutureMono.of(() -> {
            throw cause;
        }, null)).expectErrorSatisfies(e -> assertSame(cause, e)).verify(WAIT);
    }

    @Test
    void aResultArrivingAfterCancellationGoesToItsOwner() {
        List<String> handedBack = new ArrayList<>();
        CompletableFuture<String> future = new CompletableFuture<>();
        TestSubscriber<String> subscriber = TestSubscriber.create();
        FutureMono.of(() -> future, handedBack::add, null).subscribe(subscriber);
        subscriber.cancel();
        future.complete("communicator");
        assertEquals(List.of("communicator"), handedBack);
        assertTrue(subscriber.getReceivedOnNext().isEmpty(), "the cancelled subscriber gets nothing");
    }

    @Test
    void aResultHeldForARequestGoesToItsOwnerOnCancellation() {
        List<String> handedBack = new ArrayList<>();
        TestSubscriber<String> subscriber = TestSubscriber.builder().initialRequest(0).build();
        FutureMono.of(() -> CompletableFuture.completedFuture("registration"), handedBack::add, null).subscribe(subscriber);
        subscriber.cancel();
        assertEquals(List.of("registration"), handedBack);
        subscriber.request(1);
        assertTrue(subscriber.getReceivedOnNext().isEmpty(), "a request after cancellation emits nothing");
    }

    @Test
    void anEmittedResultIsNeverHandedBack() {
        List<String> handedBack = new ArrayList<>();
        TestSubscriber<String> subscriber = TestSubscriber.create();
        FutureMono.of(() -> CompletableFuture.completedFuture("kept"), handedBack::add, null).subscribe(subscriber);
        subscriber.cancel();
        assertEquals(List.of("kept"), subscriber.getReceivedOnNext());
        assertTrue(handedBack.isEmpty());
    }

    @Test
    void aCallThatReturnsNoFutureIsAnError() {
        StepVerifier.create(FutureMono.<Void>of(() -> null, null))
                .expectErrorSatisfies(e -> assertTrue(e instanceof NullPointerException && e.getMessage().contains("no future")))
                .verify(WAIT);
    }
}
