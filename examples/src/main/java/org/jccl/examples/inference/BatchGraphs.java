package org.jccl.examples.inference;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import org.jccl.core.Step;
import org.jccl.device.KernelLaunch;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * The batch step captured once per batch size and replayed as one graph launch ({@code --batch-step graph}, the
 * default on GPUs). A size is captured after its first eager run: NCCL connects peers on a collective's first run,
 * which a capture cannot hold. A size whose capture fails runs eagerly from then on, with one warning; the ranks may
 * then differ in how they issue it, which is fine: a replayed collective meets an eager one. Touched only on the step
 * thread.
 */
final class BatchGraphs implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(BatchGraphs.class);

    /** What a size's captured step holds: the step and the kernels' holds on their library. */
    record Captured(Step step, List<KernelLaunch> launches) {
    }

    /** A step's operations for one batch size, with the kernel launches they hold. */
    record Recipe(Step.Builder builder, List<KernelLaunch> launches) {
    }

    private final Map<Integer, Captured> bySize = new HashMap<>();
    private final Set<Integer> ranEagerly = new HashSet<>();
    private final Set<Integer> eagerOnly = new HashSet<>();

    /** The captured step of batch size {@code n}, or null. */
    @Nullable Step step(int n) {
        Captured c = bySize.get(n);
        return c == null ? null : c.step();
    }

    /** Whether an eager run of size {@code n} should be followed by its capture: its first, unless capture failed. */
    boolean captureAfter(int n) {
        return ranEagerly.add(n) && !eagerOnly.contains(n);
    }

    /** Captures size {@code n}'s step; completes empty on {@code stepThread} once it is captured or given up. */
    Mono<Void> capture(int n, Function<Integer, Recipe> recipe, Scheduler stepThread) {
        Recipe r;
        try {
            r = recipe.apply(n);
        } catch (RuntimeException e) {
            giveUp(n, e, List.of());
            return Mono.empty();
        }
        return Mono.defer(() -> Mono.fromFuture(r.builder().build())).publishOn(stepThread)
                .doOnNext(step -> bySize.put(n, new Captured(step, r.launches())))
                .onErrorResume(e -> {
                    giveUp(n, e, r.launches());
                    return Mono.empty();
                })
                .then();
    }

    private void giveUp(int n, Throwable error, List<KernelLaunch> launches) {
        launches.forEach(KernelLaunch::close);
        eagerOnly.add(n);
        LOG.warn("batches of {} run eagerly: capturing their step failed: {}", n, error.toString());
    }

    /** Closes every step, then releases its kernels once the step is done. */
    @Override
    public void close() {
        if (!bySize.isEmpty()) LOG.info("{} batch sizes ran as captured steps", bySize.size());
        List<CompletableFuture<Void>> closing = new ArrayList<>();
        for (Captured c : bySize.values()) {
            closing.add(c.step().closeAsync().whenComplete((v, e) -> c.launches().forEach(KernelLaunch::close)));
        }
        bySize.clear();
        CompletableFuture.allOf(closing.toArray(new CompletableFuture<?>[0])).join();
    }
}
