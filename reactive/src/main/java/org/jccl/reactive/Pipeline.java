package org.jccl.reactive;

import java.time.Duration;
import java.util.function.Function;
import org.jccl.core.Communicator;
import org.jccl.core.Operation;
import org.jccl.core.Work;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;

/**
 * Builds the Flux of {@link ReactiveCommunicator#pipeline}: items flow through one communicator with a bounded
 * number of operations in flight.
 *
 * <p>Two steps, each with one job. The launch step ({@code map}) issues an item's operation synchronously, on the
 * thread that delivers the item, before the next item can arrive: launch order is item order by construction, and
 * does not depend on when Reactor subscribes to inner publishers. The await step ({@code flatMapSequential} with
 * concurrency {@code maxInFlight}) asks upstream for {@code maxInFlight} items, then for one more each time the
 * oldest launched work has completed and its item was emitted: at most {@code maxInFlight} works are ever in flight,
 * and items are emitted in launch order.
 */
final class Pipeline {
    private Pipeline() {
    }

    /** An item and the work its operation issued. */
    private record Launched<T>(T item, Work work) {
    }

    static <T> Flux<T> of(Communicator communicator, @Nullable Duration timeout, @Nullable Scheduler scheduler,
                          Publisher<T> items, Function<? super T, Operation> toOperation, int maxInFlight) {
        Errors.requireArgument(items, "items");
        Errors.requireArgument(toOperation, "toOperation");
        if (maxInFlight < 1) throw new InvalidArgumentException("maxInFlight must be at least 1, not " + maxInFlight);
        Flux<T> flux = Flux.from(items)
                .map(item -> {
                    Operation operation = Errors.requireArgument(toOperation.apply(item), "toOperation returned null");
                    Work work = timeout == null ? communicator.submit(operation) : communicator.submit(operation, timeout);
                    return new Launched<T>(item, work);
                })
                .flatMapSequential(launched -> FutureMono.of(launched::work, null).thenReturn(launched.item()),
                        maxInFlight, 1);
        // Prefetch maxInFlight: completed items waiting for a slow consumer stay bounded too.
        return scheduler == null ? flux : flux.publishOn(scheduler, maxInFlight);
    }
}
