package org.jccl.core.launch;

import java.io.PrintStream;
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

/**
 * Starts N JVMs on this host as the ranks of one job, like torchrun:
 *
 * <pre>
 * java -cp app.jar:jccl-core.jar:... org.jccl.core.launch.Launcher --nproc 2 -- com.example.Train --epochs 3
 * java -cp jccl-core.jar:... org.jccl.core.launch.Launcher --nproc 2 -- -jar app.jar --epochs 3
 * </pre>
 *
 * <p>The launcher hosts the rendezvous server itself (on 127.0.0.1, at {@code --master-port} or any free port),
 * so the store outlives every rank and sees any of them die. Each rank gets the java of this JVM
 * ({@code java.home}), this JVM's class path unless {@code --classpath} is given, and the variables
 * {@code MASTER_ADDR=127.0.0.1}, {@code MASTER_PORT}, {@code RANK}, {@code LOCAL_RANK}, {@code WORLD_SIZE},
 * {@code LOCAL_WORLD_SIZE}, their {@code JCCL_*} twins, {@code JCCL_RENDEZVOUS_SERVER=external} and
 * {@code JCCL_RENDEZVOUS_SECRET} — a fresh random secret per launch (or {@code --secret-file}'s), passed in the
 * environment only, never on a command line. Each line the ranks print is prefixed with {@code [rank N] }.
 *
 * <p>When a rank exits with a non-zero code, the launcher says which rank and code, stops the others (destroy,
 * then destroy forcibly after {@code --grace}), and exits with that code. It exits 0 when every rank did.
 */
public final class Launcher {
    /** Exit code for a command line the launcher cannot run. */
    public static final int USAGE_ERROR = 2;
    private static final int SECRET_BYTES = 32;

    private final LaunchArguments arguments;
    private final PrintStream out;
    private final PrintStream err;
    private final List<Process> processes = new ArrayList<>();

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
        String secret = arguments.secretFile() == null
                ? HexFormat.of().formatHex(randomBytes()) : RendezvousOptions.readSecretFile(arguments.secretFile());
        RendezvousOptions serverOptions;
        try {
            serverOptions = RendezvousOptions.builder()
                    .bindAddress("127.0.0.1")
                    .port(arguments.masterPort())
                    .worldSize(arguments.processes())
                    .secret(secret)
                    .heartbeatInterval(JcclSettings.RENDEZVOUS_HEARTBEAT.duration())
                    .deadAfter(JcclSettings.RENDEZVOUS_DEAD_AFTER.duration())
                    .handshakeTimeout(JcclSettings.RENDEZVOUS_HANDSHAKE_TIMEOUT.duration())
                    .build();
        } catch (InvalidArgumentException e) {
            err.println("jccl launcher: " + e.getMessage());
            return USAGE_ERROR;
        }
        try (RendezvousServer server = RendezvousServer.bindNow(serverOptions)) {
            List<Thread> pumps = new ArrayList<>();
            for (int rank = 0; rank < arguments.processes(); rank++) {
                Process p;
                try {
                    p = start(rank, server.port(), secret);
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
            int code = awaitRanks();
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
    }

    private Process start(int rank, int port, String secret) throws java.io.IOException {
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
        String n = Integer.toString(arguments.processes());
        String r = Integer.toString(rank);
        // Both spellings: a JCCL_* variable inherited from the launcher's own environment would otherwise win.
        put(env, JcclSettings.MASTER_ADDR.env(), JcclSettings.JCCL_MASTER_ADDR.env(), "127.0.0.1");
        put(env, JcclSettings.MASTER_PORT.env(), JcclSettings.JCCL_MASTER_PORT.env(), Integer.toString(port));
        put(env, JcclSettings.RANK.env(), JcclSettings.JCCL_RANK.env(), r);
        put(env, JcclSettings.LOCAL_RANK.env(), JcclSettings.JCCL_LOCAL_RANK.env(), r);
        put(env, JcclSettings.WORLD_SIZE.env(), JcclSettings.JCCL_WORLD_SIZE.env(), n);
        env.put("LOCAL_WORLD_SIZE", n);
        env.put(JcclSettings.RENDEZVOUS_SERVER.env(), StoreHost.EXTERNAL.name().toLowerCase(java.util.Locale.ROOT));
        env.put(JcclSettings.RENDEZVOUS_SECRET.env(), secret);
        env.remove(JcclSettings.RENDEZVOUS_SECRET_FILE.env());
        return pb.start();
    }

    private static void put(Map<String, String> env, String plain, String prefixed, String value) {
        env.put(plain, value);
        env.put(prefixed, value);
    }

    /** Waits for every rank; on the first failure stops the rest. Returns the launch's exit code. */
    private int awaitRanks() {
        List<CompletableFuture<Process>> running = new ArrayList<>();
        synchronized (processes) {
            for (Process p : processes) running.add(p.onExit());
        }
        while (!running.isEmpty()) {
            CompletableFuture<Object> any = CompletableFuture.anyOf(running.toArray(CompletableFuture[]::new));
            Process exited;
            try {
                exited = (Process) any.get();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                err.println("jccl launcher: interrupted; stopping every rank");
                stopAll();
                return 1;
            } catch (ExecutionException e) {
                throw new IllegalStateException("onExit failed", e);
            }
            running.removeIf(f -> f.isDone());
            int code = exited.exitValue();
            if (code != 0) {
                int rank = rankOf(exited);
                err.println("jccl launcher: rank " + rank + " exited with code " + code + describe(code)
                        + "; stopping the other " + running.size() + " rank(s)");
                err.flush();
                stopAll();
                return code;
            }
        }
        return 0;
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
                err.println("jccl launcher: rank " + rankOf(p) + " did not stop within " + arguments.grace().toMillis()
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
