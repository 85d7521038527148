package org.jccl.rma.kv;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jccl.core.rendezvous.RendezvousOptions;
import org.jccl.core.rendezvous.RendezvousServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * KV transfers between a prefill and a decode process ({@link KvRankMain}) on the host backend over TCP, the KV link a
 * TCP connection published in the rendezvous store: a request lands byte for byte, and a process killed with SIGKILL
 * in the middle of a transfer whose layers come slowly fails every request in flight on the other side.
 *
 * <p>The detection time: SIGKILL makes the kernel close the dead process's sockets, so the survivor's KV link sees
 * the connection close at once and ends every request on it with {@link KvFailure#PEER_LOST}. The link's silence
 * timeout ({@link TcpKvLinks#SILENCE}, 10 s) is for a peer that stops answering with its sockets open (a frozen
 * process, a cut network); the bound asserted here is well under it, so a pass shows the close was what told.
 */
class KvAcrossProcessesTest {
    private static final String SECRET = "kv-across-processes-test-secret-0123456";
    /** The close is seen at once; this bound only allows for two JVMs time-sliced on a loaded machine. */
    private static final Duration DETECTION = Duration.ofSeconds(5);

    @ParameterizedTest
    @EnumSource(value = KvPathKind.class, names = {"PUT_SIGNAL", "SEND_RECV"})
    void aRequestCrossesTheProcessesByteForByte(KvPathKind path) throws Exception {
        try (Job job = new Job("deliver", path.name())) {
            for (KvProcess p : job.ranks) {
                assertTrue(p.process.waitFor(60, TimeUnit.SECONDS), () -> "it hangs\n" + p.output());
                assertEquals(0, p.process.exitValue(), p::output);
                assertTrue(p.said("kv threads left: 0"), p::output);
            }
            KvProcess prefill = job.ranks.get(0);
            KvProcess decode = job.ranks.get(1);
            KvLayout l = KvRankMain.LAYOUT;
            // Both sides count what decode holds: the tokens' rows of every layer and tensor.
            long filled = (long) l.layers() * l.tensors() * KvRankMain.TOKENS * l.tokenBytes();
            assertTrue(prefill.said("delivered " + filled + " bytes by " + path), prefill::output);
            assertTrue(decode.said("arrived " + filled + " bytes of across from rank 0, wrong bytes 0"), decode::output);
        }
    }

    @Test
    void aKilledPrefillProcessFailsItsRequestsOnDecodeWithPeerLostAndTheirBlocksComeBack() throws Exception {
        try (Job job = new Job("producer-dies")) {
            KvProcess decode = job.ranks.get(1);
            long killedAt = job.kill(0, decode);
            survivorReportsEveryRequestLostWithin(decode, killedAt);
            assertTrue(decode.said("blocks free: " + KvRankMain.LAYOUT.blocks() + " of " + KvRankMain.LAYOUT.blocks()), decode::output);
        }
    }

    @Test
    void aKilledDecodeProcessFailsThePrefillRequestsWithPeerLost() throws Exception {
        try (Job job = new Job("decode-dies")) {
            KvProcess prefill = job.ranks.get(0);
            long killedAt = job.kill(1, job.ranks.get(1));
            survivorReportsEveryRequestLostWithin(prefill, killedAt);
        }
    }

    private static void survivorReportsEveryRequestLostWithin(KvProcess survivor, long killedAt) throws Exception {
        await().atMost(Duration.ofSeconds(30)).until(() -> survivor.linesWith("ended: ").size() == KvRankMain.REQUESTS
                || !survivor.process.isAlive());
        List<String> ends = survivor.linesWith("ended: ");
        assertEquals(KvRankMain.REQUESTS, ends.size(), survivor::output);
        for (String end : ends) assertTrue(end.contains("ended: KvTransferException PEER_LOST"), survivor::output);
        Duration took = Duration.ofNanos(survivor.lastSaidAt("ended: ") - killedAt);
        assertTrue(took.compareTo(DETECTION) < 0, () -> "the last request ended " + took + " after the kill\n" + survivor.output());
        assertTrue(survivor.process.waitFor(30, TimeUnit.SECONDS), () -> "the survivor hangs\n" + survivor.output());
        assertEquals(0, survivor.process.exitValue(), survivor::output);
        List<String> communicator = survivor.linesWith("communicator: ");
        assertTrue(communicator.size() == 1 && (communicator.get(0).contains("communicator: works")
                || communicator.get(0).contains("communicator: failed typed")), survivor::output);
        assertTrue(survivor.said("kv threads left: 0"), survivor::output);
    }

    /** A rendezvous server and the two ranks of one job; closing it kills whatever still runs. */
    private static final class Job implements AutoCloseable {
        final RendezvousServer server;
        final List<KvProcess> ranks = new ArrayList<>();

        Job(String mode, String... args) throws Exception {
            server = RendezvousServer.bindNow(RendezvousOptions.builder().port(0).worldSize(2).secret(SECRET)
                    .timeout(Duration.ofSeconds(60)).build());
            for (int r = 0; r < 2; r++) ranks.add(KvProcess.start(mode, List.of(args), server.port(), r, SECRET));
        }

        /** Kills rank {@code victim} once the decode rank has the first layers; returns when ({@link System#nanoTime()}). */
        long kill(int victim, KvProcess decode) {
            await().atMost(Duration.ofSeconds(60)).until(() -> decode.said("in flight: ") || !decode.process.isAlive());
            assertTrue(decode.said("in flight: " + KvRankMain.REQUESTS + " requests with layer 0 usable"), decode::output);
            long at = System.nanoTime();
            ranks.get(victim).process.destroyForcibly(); // SIGKILL: no shutdown hook, no goodbye
            return at;
        }

        @Override
        public void close() {
            for (KvProcess p : ranks) {
                p.process.destroyForcibly();
                System.out.println(p.output()); // what each rank reported, in the test's output file
            }
            server.close();
        }
    }
}
