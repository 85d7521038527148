package org.jccl.core.launch;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;
import org.jccl.core.rendezvous.RendezvousClient;
import org.jccl.core.rendezvous.RendezvousException;
import org.jccl.core.rendezvous.RendezvousOptions;
import org.jccl.core.rendezvous.RendezvousTimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * One launcher's link to the other nodes' launchers in a job of several nodes, through the job's rendezvous server
 * (node 0's), joined as {@link RendezvousOptions#NO_RANK}. Two kinds of key carry the news:
 * {@code jccl/launch/exit/<rank>} holds a rank's exit code (decimal), set by its launcher when it exits, and
 * {@code jccl/launch/failed} the first failure's description, set once. {@link #failure()} completes with a
 * description when another node's rank failed (the key), vanished (the server announced it dead and its launcher
 * reported no exit within the grace period: a node killed whole), or when the server is lost before this node is done.
 */
final class NodeLink implements AutoCloseable {
    static final String FAILED_KEY = "jccl/launch/failed";
    private static final String EXIT_PREFIX = "jccl/launch/exit/";

    private final RendezvousClient client;
    private final LaunchArguments arguments;
    private final CompletableFuture<String> failure = new CompletableFuture<>();
    private volatile boolean finished;

    private NodeLink(RendezvousClient client, LaunchArguments arguments) {
        this.client = client;
        this.arguments = arguments;
    }

    /** Connects (waiting up to the options' timeout for node 0's server) and starts watching the other nodes. */
    static NodeLink connect(RendezvousOptions options, LaunchArguments arguments) {
        NodeLink link = new NodeLink(RendezvousClient.connectNow(options), arguments);
        link.untilSet(() -> link.client.getString(FAILED_KEY, options.timeout())).thenAccept(link.failure::complete);
        link.client.onRankDead(link::rankDead);
        link.client.disconnected().thenRun(() -> {
            if (!link.finished) {
                link.failure.complete("lost the rendezvous server on node 0 (" + options.host() + ":" + options.port() + ")");
            }
        });
        return link;
    }

    /** Completes with a description of the first failure elsewhere in the job. */
    CompletableFuture<String> failure() {
        return failure;
    }

    /** Tells the other nodes that a rank of this node exited 0; {@code last}: this node is done. */
    void reportSuccess(int rank, boolean last) {
        // Done before the last report: node 0 may close the server as soon as it sees it.
        if (last) finished = true;
        try {
            client.setNow(EXIT_PREFIX + rank, "0".getBytes(UTF_8));
        } catch (RendezvousException e) {
            // Node 0 closes the server once it has every report, possibly before our answer is sent: the last
            // report landed if node 0 is done, and if node 0 is gone there is no one left to tell.
            if (!last) throw e;
        }
    }

    /** Tells the other nodes that a rank of this node failed, so that they stop theirs. */
    void reportFailure(int rank, int code, String description) {
        finished = true;
        client.setNow(EXIT_PREFIX + rank, Integer.toString(code).getBytes(UTF_8));
        client.compareAndSetNow(FAILED_KEY, null, description.getBytes(UTF_8));
    }

    /**
     * Node 0, its ranks done: waits until every rank of the job has exited 0 (so that the server outlives every
     * node's use of it), or a failure comes first. Returns the failure's description, or null.
     */
    @Nullable String awaitEveryNode() {
        List<String> keys = new ArrayList<>();
        for (int r = 0; r < arguments.worldSize(); r++) keys.add(EXIT_PREFIX + r);
        CompletableFuture<@Nullable String> allExited =
                untilSet(() -> client.waitFor(keys, client.options().timeout())).thenApply(v -> null);
        try {
            return (String) CompletableFuture.anyOf(allExited, failure).join();
        } catch (CompletionException e) {
            return "waiting for the other nodes failed: " + e.getCause().getMessage();
        }
    }

    private void rankDead(int rank) {
        int node = arguments.nodeOf(rank);
        if (node == arguments.nodeRank()) return; // this launcher sees its own ranks exit
        Duration grace = arguments.grace();
        client.getString(EXIT_PREFIX + rank, grace).whenComplete((code, t) -> {
            if (t == null && code.equals("0")) return;
            failure.complete(t == null ? "rank " + rank + " (node " + node + ") exited with code " + code
                    : "rank " + rank + " (node " + node + ") is gone: its rendezvous connection ended and its launcher "
                    + "reported no exit within " + grace.toMillis() + " ms");
        });
    }

    /** Re-asks a waiting request each time it times out, until it is answered, the link fails or it is closed. */
    private <T> CompletableFuture<T> untilSet(Supplier<CompletableFuture<T>> request) {
        CompletableFuture<T> result = new CompletableFuture<>();
        ask(request, result);
        return result;
    }

    private <T> void ask(Supplier<CompletableFuture<T>> request, CompletableFuture<T> result) {
        request.get().whenComplete((v, t) -> {
            if (t == null) {
                result.complete(v);
            } else if (unwrap(t) instanceof RendezvousTimeoutException && client.isConnected() && !failure.isDone()) {
                ask(request, result);
            } else {
                result.completeExceptionally(unwrap(t));
            }
        });
    }

    private static Throwable unwrap(Throwable t) {
        return t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
    }

    @Override
    public void close() {
        finished = true;
        client.close();
    }
}
