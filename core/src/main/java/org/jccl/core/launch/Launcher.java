package org.jccl.core.launch;

import java.io.PrintStream;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jccl.core.config.JcclSettings;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.rendezvous.RendezvousOptions;
import org.jccl.core.rendezvous.RendezvousServer;
import org.jccl.core.rendezvous.StoreHost;
import org.jspecify.annotations.Nullable;
import org.jccl.core.net.NettyDefaults;

/**
 * Starts the ranks of one job as JVMs, like torchrun: N on this host, or N on each of M nodes with one launcher per
 * node:
 *
 * <pre>
 * java -cp app.jar:jccl-core.jar:... org.jccl.core.launch.Launcher --nproc 2 -- com.example.Train --epochs 3
 * java -cp jccl-core.jar:... org.jccl.core.launch.Launcher --nproc 2 -- -jar app.jar --epochs 3
 * # on each of two nodes, K = 0 on node0 and 1 on the other; the secret file readable by both:
 * java -cp ... org.jccl.core.launch.Launcher --nnodes 2 --node-rank K --nproc-per-node 4 --master-addr node0 \
 *      --master-port 29500 --secret-file /shared/secret -- com.example.Train
 * </pre>
 *
 * <p>Node 0's launcher hosts the rendezvous server itself (on {@code --master-addr}, 127.0.0.1 by default, at
 * {@code --master-port} or, on one node, any free port), so the store outlives every rank and sees any of them die.
 * Each rank gets the java of this JVM ({@code java.home}), this JVM's class path unless {@code --classpath} is
 * given, and the variables {@code MASTER_ADDR}, {@code MASTER_PORT}, {@code RANK} (node rank × ranks per node +
 * local rank), {@code LOCAL_RANK}, {@code WORLD_SIZE}, {@code LOCAL_WORLD_SIZE}, {@code GROUP_RANK} (the node rank),
 * their {@code JCCL_*} twins, {@code JCCL_RENDEZVOUS_SERVER=external} and {@code JCCL_RENDEZVOUS_SECRET} — a fresh
 * random secret per launch on one node (the same one on every node: {@code --secret-file} or the launcher's own
 * {@code JCCL_RENDEZVOUS_SECRET}), passed in the environment only, never on a command line. With several nodes (or
 * {@code --local-addr}) ranks also get {@code JCCL_RENDEZVOUS_BIND}: the address they listen on and advertise to
 * peers, by default the one this host reaches the master from (never a wildcard). Each line the ranks print is
 * prefixed with {@code [rank N] }.
 *
 * <p>When a rank exits with a non-zero code, the launcher says which rank and code, stops the others (destroy,
 * then destroy forcibly after {@code --grace}), and exits with that code. With several nodes it first tells the
 * other launchers through the rendezvous store ({@link NodeLink}); they stop their ranks too, naming the failed rank,
 * and exit 1 — as they do when another node vanishes. It exits 0 when every rank did (node 0 once every node's
 * ranks did).
 */
public final class Launcher {
    static {
        NettyDefaults.apply(); // before this class can start Netty: no Unsafe warning on JDK 24+
    }

    /** Exit code for a command line the launcher cannot run. */
    public static final int USAGE_ERROR = 2;
    private static final int SECRET_BYTES = 32;

    private final LaunchArguments arguments;
    private final PrintStream out;
    private final PrintStream err;
    private final List<Process> processes = new ArrayList<>();
    /** Set when the launcher itself is being stopped: the ranks it kills then are not failures to report. */
    private volatile boolean stopping;

    private Launcher(LaunchArguments arguments, PrintStream out, PrintStream err) {
        this.arguments = arguments;
        this.out = out;
        this.err = err;
    }

    /** Runs the launcher and exits the JVM with its code. */
    public static void main(String[] args) {
        System.exit(run(Arrays.asList(args), System.out, System.err));
    }

    /**
     * Runs a launch to its end and returns the exit code: 0 if every rank exited 0, the first failing rank's code
     * otherwise, {@link #USAGE_ERROR} for a bad command line.
     *
     * @param args the command line (see the class description)
     * @param out  where the ranks' prefixed standard output goes
     * @param err  where their prefixed standard error and the launcher's messages go
     */
    public static int run(List<String> args, PrintStream out, PrintStream err) {
        LaunchArguments parsed;
        try {
            parsed = LaunchArguments.parse(args);
        } catch (InvalidArgumentException e) {
            err.println("jccl launcher: " + e.getMessage());
            err.println(LaunchArguments.USAGE);
            return USAGE_ERROR;
        }
        Launcher launcher = new Launcher(parsed, out, err);
        Thread stopOnExit = new Thread(launcher::killAll, "jccl-launcher-shutdown");
        Runtime.getRuntime().addShutdownHook(stopOnExit);
        try {
            return launcher.launch();
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(stopOnExit);
            } catch (IllegalStateException shuttingDown) {
                // the hook is running and will stop the ranks
            }
        }
    }

    private int launch() {
        String secret;
        RendezvousOptions serverOptions;
        try {
            secret = secret();
            serverOptions = RendezvousOptions.builder()
                    .host(arguments.masterAddr())
                    .bindAddress(serverBindAddress())
                    .port(arguments.masterPort())
                    .worldSize(arguments.worldSize())
                    .secret(secret)
                    .timeout(JcclSettings.RENDEZVOUS_TIMEOUT.duration())
                    .heartbeatInterval(JcclSettings.RENDEZVOUS_HEARTBEAT.duration())
                    .deadAfter(JcclSettings.RENDEZVOUS_DEAD_AFTER.duration())
                    .handshakeTimeout(JcclSettings.RENDEZVOUS_HANDSHAKE_TIMEOUT.duration())
                    .build();
        } catch (InvalidArgumentException e) {
            err.println("jccl launcher: " + e.getMessage());
            return USAGE_ERROR;
        }
        RendezvousServer server = null;
        NodeLink link = null;
        try {
            int port = arguments.masterPort();
            if (arguments.nodeRank() == 0) {
                server = RendezvousServer.bindNow(serverOptions);
                port = server.port();
            }
            if (arguments.nodes() > 1) link = NodeLink.connect(serverOptions.toBuilder().port(port).build(), arguments);
            return runRanks(port, secret, link);
        } catch (RuntimeException e) {
            err.println("jccl launcher: node " + arguments.nodeRank() + ": " + e.getMessage());
            stopAll();
            return 1;
        } finally {
            if (link != null) link.close();
            if (server != null) server.close();
        }
    }

    /** One node's launch gets a fresh secret; a job of several nodes needs the one every node was given. */
    private String secret() {
        if (arguments.secretFile() != null) return RendezvousOptions.readSecretFile(arguments.secretFile());
        if (JcclSettings.RENDEZVOUS_SECRET.isSet()) return JcclSettings.RENDEZVOUS_SECRET.value();
        if (arguments.nodes() > 1) {
            throw new InvalidArgumentException("a job of several nodes needs one secret on every node: --secret-file F or "
                    + JcclSettings.RENDEZVOUS_SECRET.env() + " in each launcher's environment");
        }
        return HexFormat.of().formatHex(randomBytes());
    }

    private int runRanks(int port, String secret, @Nullable NodeLink link) {
        String bind = bindAddress(port);
        Map<String, String> ncclVariables = JcclSettings.ncclEnvironment();
        List<Thread> pumps = new ArrayList<>();
        for (int local = 0; local < arguments.processes(); local++) {
            int rank = arguments.globalRank(local);
            Process p;
            try {
                p = start(local, port, secret, bind, ncclVariables);
            } catch (java.io.IOException e) {
                err.println("jccl launcher: cannot start rank " + rank + ": " + e.getMessage());
                stopAll();
                return 1;
            }
            synchronized (processes) {
                processes.add(p);
            }
            pumps.add(new PrefixedOutput(p.getInputStream(), out, rank).start("jccl-launcher-out-" + rank));
            pumps.add(new PrefixedOutput(p.getErrorStream(), err, rank).start("jccl-launcher-err-" + rank));
        }
        int code = awaitRanks(link);
        for (Thread t : pumps) {
            try {
                t.join(arguments.grace().toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        out.flush();
        err.flush();
        return code;
    }

    /**
     * Where this node's ranks listen and what they advertise: {@code --local-addr}; else the launcher's own
     * {@code jccl.rendezvous.bind} if set (a wildcard makes ranks advertise the host's first external address); else,
     * on several nodes, the address this host reaches the master from (a connected datagram socket sends nothing, the
     * kernel only picks the route); on one node, whatever the ranks' environment says (null).
     */
    /**
     * Node 0's rendezvous server: on one node the master address (loopback by default); across nodes every address of
     * this host unless {@code jccl.rendezvous.bind} names one, since the master's name may resolve to loopback here
     * (127.0.1.1 in many /etc/hosts) while the other nodes reach it from outside. Clients authenticate either way.
     */
    private String serverBindAddress() {
        if (arguments.nodes() == 1) return arguments.masterAddr();
        return JcclSettings.RENDEZVOUS_BIND.isSet() ? JcclSettings.RENDEZVOUS_BIND.value() : "0.0.0.0";
    }

    private @Nullable String bindAddress(int port) {
        if (arguments.localAddr() != null) return arguments.localAddr();
        if (JcclSettings.RENDEZVOUS_BIND.isSet()) return JcclSettings.RENDEZVOUS_BIND.value();
        if (arguments.nodes() == 1) return null;
        try (DatagramSocket probe = new DatagramSocket()) {
            probe.connect(new InetSocketAddress(arguments.masterAddr(), port));
            InetAddress local = probe.getLocalAddress();
            if (local == null || local.isAnyLocalAddress()) {
                throw new InvalidArgumentException("cannot tell which address of this host reaches "
                        + arguments.masterAddr() + ": give --local-addr");
            }
            if (local.isLoopbackAddress()) {
                throw new InvalidArgumentException(arguments.masterAddr() + " is reached over loopback from this host ("
                        + local.getHostAddress() + "), an address the other nodes cannot reach this node's ranks at: give"
                        + " --local-addr (this node's address on the network the nodes share)");
            }
            return local.getHostAddress();
        } catch (java.io.IOException e) {
            throw new InvalidArgumentException("cannot find a route to " + arguments.masterAddr() + " (" + e.getMessage()
                    + "): give --local-addr");
        }
    }

    private Process start(int local, int port, String secret, @Nullable String bind, Map<String, String> ncclVariables)
            throws java.io.IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        // GPU ranks load jccl's JNI library; JDK 24+ warns about that unless native access is enabled (JDK 22+ has
        // the option). A user's own setting wins.
        if (Runtime.version().feature() >= 22 && arguments.jvmArgs().stream().noneMatch(a -> a.startsWith("--enable-native-access"))) {
            cmd.add("--enable-native-access=ALL-UNNAMED");
        }
        cmd.addAll(arguments.jvmArgs());
        if (!arguments.runsJar()) {
            cmd.add("-cp");
            cmd.add(arguments.classPath());
        }
        cmd.addAll(arguments.command());
        ProcessBuilder pb = new ProcessBuilder(cmd);
        Map<String, String> env = pb.environment();
        String n = Integer.toString(arguments.worldSize());
        String r = Integer.toString(arguments.globalRank(local));
        // Both spellings: a JCCL_* variable inherited from the launcher's own environment would otherwise win.
        put(env, JcclSettings.MASTER_ADDR.env(), JcclSettings.JCCL_MASTER_ADDR.env(), arguments.masterAddr());
        put(env, JcclSettings.MASTER_PORT.env(), JcclSettings.JCCL_MASTER_PORT.env(), Integer.toString(port));
        put(env, JcclSettings.RANK.env(), JcclSettings.JCCL_RANK.env(), r);
        put(env, JcclSettings.LOCAL_RANK.env(), JcclSettings.JCCL_LOCAL_RANK.env(), Integer.toString(local));
        put(env, JcclSettings.WORLD_SIZE.env(), JcclSettings.JCCL_WORLD_SIZE.env(), n);
        env.put("LOCAL_WORLD_SIZE", Integer.toString(arguments.processes()));
        env.put("GROUP_RANK", Integer.toString(arguments.nodeRank()));
        if (bind != null) env.put(JcclSettings.RENDEZVOUS_BIND.env(), bind);
        env.putAll(ncclVariables); // jccl.nccl.env.* given to the launcher: the ranks' NCCL reads them
        env.put(JcclSettings.RENDEZVOUS_SERVER.env(), StoreHost.EXTERNAL.name().toLowerCase(java.util.Locale.ROOT));
        env.put(JcclSettings.RENDEZVOUS_SECRET.env(), secret);
        env.remove(JcclSettings.RENDEZVOUS_SECRET_FILE.env());
        return pb.start();
    }

    private static void put(Map<String, String> env, String plain, String prefixed, String value) {
        env.put(plain, value);
        env.put(prefixed, value);
    }

    /**
     * Waits for every rank of this node; on the first failure, here or (through the link) on another node, stops the
     * rest. Returns the launch's exit code.
     */
    private int awaitRanks(@Nullable NodeLink link) {
        List<Process> running;
        synchronized (processes) {
            running = new ArrayList<>(processes);
        }
        while (!running.isEmpty()) {
            List<CompletableFuture<?>> watched = new ArrayList<>();
            for (Process p : running) watched.add(p.onExit());
            if (link != null) watched.add(link.failure());
            Object first;
            try {
                first = CompletableFuture.anyOf(watched.toArray(CompletableFuture[]::new)).get();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                err.println("jccl launcher: interrupted; stopping every rank");
                stopAll();
                return 1;
            } catch (ExecutionException e) {
                throw new IllegalStateException("onExit failed", e);
            }
            if (first instanceof String failure) return stopForOtherNode(failure, running.size());
            // Every rank that has exited by now, not only the one that woke us: none may go unreported.
            List<Process> exited = running.stream().filter(p -> !p.isAlive()).toList();
            running.removeAll(exited);
            Process failed = exited.stream().filter(p -> p.exitValue() != 0).findFirst().orElse(null);
            if (failed != null && stopping) return failed.exitValue(); // killed by the shutdown hook, not failed
            if (failed != null) {
                int code = failed.exitValue();
                int rank = arguments.globalRank(rankOf(failed));
                String what = "rank " + rank + (link == null ? "" : " (node " + arguments.nodeRank() + ")")
                        + " exited with code " + code + describe(code);
                err.println("jccl launcher: " + what + "; stopping the other " + running.size() + " rank(s)"
                        + (link == null ? "" : " and the other nodes"));
                err.flush();
                try {
                    if (link != null) link.reportFailure(rank, code, what);
                } finally {
                    stopAll();
                }
                return code;
            }
            for (int i = 0; link != null && i < exited.size(); i++) {
                link.reportSuccess(arguments.globalRank(rankOf(exited.get(i))), running.isEmpty() && i == exited.size() - 1);
            }
        }
        if (link != null && arguments.nodeRank() == 0) {
            String failure = link.awaitEveryNode();
            if (failure != null) return stopForOtherNode(failure, 0);
        }
        return 0;
    }

    private int stopForOtherNode(String failure, int live) {
        err.println("jccl launcher: node " + arguments.nodeRank() + ": " + failure + "; stopping the " + live
                + " rank(s) of this node");
        err.flush();
        stopAll();
        return 1;
    }

    private static String describe(int code) {
        return code > 128 && code < 160 ? " (killed by signal " + (code - 128) + ")" : "";
    }

    private int rankOf(Process p) {
        synchronized (processes) {
            return processes.indexOf(p);
        }
    }

    /** Asks every live rank to stop, waits the grace period, then kills what is left. */
    private void stopAll() {
        List<Process> live;
        synchronized (processes) {
            live = new ArrayList<>(processes);
        }
        live.removeIf(p -> !p.isAlive());
        live.forEach(Process::destroy);
        long deadline = System.nanoTime() + arguments.grace().toNanos();
        for (Process p : live) {
            long left = deadline - System.nanoTime();
            try {
                p.onExit().get(Math.max(0, left), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                err.println("jccl launcher: rank " + arguments.globalRank(rankOf(p)) + " did not stop within " + arguments.grace().toMillis()
                        + " ms; killing it");
                p.destroyForcibly();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                killAll();
                return;
            } catch (ExecutionException e) {
                p.destroyForcibly();
            }
        }
    }

    /** Kills every rank at once (the launcher itself is being stopped). */
    private void killAll() {
        stopping = true;
        synchronized (processes) {
            for (Process p : processes) if (p.isAlive()) p.destroyForcibly();
        }
    }

    private static byte[] randomBytes() {
        byte[] b = new byte[SECRET_BYTES];
        new SecureRandom().nextBytes(b);
        return b;
    }
}
