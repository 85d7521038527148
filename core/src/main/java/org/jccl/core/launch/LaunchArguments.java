package org.jccl.core.launch;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jccl.core.config.JcclSettings;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.rendezvous.RendezvousOptions;
import org.jspecify.annotations.Nullable;

/**
 * The launcher's command line, parsed and checked:
 * {@code --nproc-per-node N [--nnodes M --node-rank K] [--master-addr A] [--master-port P] [--local-addr L]
 * [--secret-file F] [--classpath CP] [--jvm-arg A]... [--grace D] -- (MAIN | -jar JAR) [ARGS...]}.
 *
 * @param processes  how many ranks (JVMs) to start on this node
 * @param nodes      how many nodes (launchers) the job has
 * @param nodeRank   this node's index, 0 hosting the rendezvous server
 * @param masterAddr the rendezvous server's address (node 0's), as every node reaches it
 * @param masterPort the rendezvous port, 0 for any free one (one node only)
 * @param localAddr  the address this node's ranks listen on and advertise, or null to find it
 * @param secretFile a file holding the shared secret, or null to make a fresh one for this launch
 * @param classPath  the ranks' class path (ignored with {@code -jar})
 * @param jvmArgs    options for each rank's JVM, before the main class or {@code -jar}
 * @param grace      how long stopped ranks get to exit before they are killed
 * @param command    the main class and its arguments, or {@code -jar}, the jar and its arguments
 */
record LaunchArguments(int processes, int nodes, int nodeRank, String masterAddr, int masterPort,
                       @Nullable String localAddr, @Nullable Path secretFile, String classPath, List<String> jvmArgs,
                       Duration grace, List<String> command) {
    static final Duration DEFAULT_GRACE = Duration.ofSeconds(10);
    static final String USAGE = String.join("\n",
            "usage: java -cp <jccl-core and dependencies> org.jccl.core.launch.Launcher --nproc-per-node N [options] -- "
                    + "(MAIN_CLASS | -jar JAR) [ARGS...]",
            "  --nproc-per-node N ranks (JVMs) to start on this node (also --nproc)",
            "  --nnodes M         nodes in the job, one launcher each (default 1)",
            "  --node-rank K      this node's index, 0..M-1; node 0 hosts the rendezvous (default 0)",
            "  --master-addr A    node 0's address as every node reaches it (default 127.0.0.1)",
            "  --master-port P    rendezvous port (default: any free port on one node, 29500 on several)",
            "  --local-addr L     address this node's ranks listen on and advertise (default: the one that reaches A)",
            "  --secret-file F    read the rendezvous secret from F (default: a fresh random secret per launch)",
            "  --classpath CP     the ranks' class path (default: this JVM's)",
            "  --jvm-arg A        an option for each rank's JVM (repeatable)",
            "  --grace D          time stopped ranks get before they are killed (default 10s)");

    LaunchArguments {
        Objects.requireNonNull(masterAddr, "masterAddr");
        Objects.requireNonNull(classPath, "classPath");
        jvmArgs = List.copyOf(jvmArgs);
        command = List.copyOf(command);
    }

    /** Whether the ranks run a jar ({@code -jar}) rather than a main class. */
    boolean runsJar() {
        return command.get(0).equals("-jar");
    }

    /**
     * Parses the launcher's arguments.
     *
     * @throws InvalidArgumentException with a message naming the problem (the caller prints the usage)
     */
    static LaunchArguments parse(List<String> args) {
        int processes = 0;
        int nodes = 1;
        int nodeRank = 0;
        String masterAddr = RendezvousOptions.DEFAULT_HOST;
        int port = -1;
        @Nullable String localAddr = null;
        Path secretFile = null;
        String classPath = System.getProperty("java.class.path", "");
        List<String> jvmArgs = new ArrayList<>();
        Duration grace = DEFAULT_GRACE;
        int i = 0;
        for (; i < args.size(); i++) {
            String a = args.get(i);
            if (a.equals("--")) break;
            switch (a) {
                case "--nproc", "--nproc-per-node" -> processes = positiveInt(a, value(args, ++i, a));
                case "--nnodes" -> nodes = positiveInt(a, value(args, ++i, a));
                case "--node-rank" -> nodeRank = nonNegativeInt(a, value(args, ++i, a));
                case "--master-addr" -> masterAddr = reachable(a, address(a, value(args, ++i, a)));
                case "--local-addr" -> localAddr = address(a, value(args, ++i, a));
                case "--master-port" -> {
                    port = nonNegativeInt(a, value(args, ++i, a));
                    if (port > 65535) throw new InvalidArgumentException("--master-port must be 0..65535, not " + port);
                }
                case "--secret-file" -> secretFile = Path.of(value(args, ++i, a));
                case "--classpath", "-cp" -> classPath = value(args, ++i, a);
                case "--jvm-arg" -> jvmArgs.add(value(args, ++i, a));
                case "--grace" -> grace = JcclSettings.parseDuration(value(args, ++i, a), null);
                default -> throw new InvalidArgumentException("unknown option " + a);
            }
        }
        if (processes == 0) throw new InvalidArgumentException("--nproc-per-node (or --nproc) is required");
        if (nodeRank >= nodes) {
            throw new InvalidArgumentException("--node-rank must be below --nnodes " + nodes + ", not " + nodeRank);
        }
        if (port == 0 && nodes > 1) {
            throw new InvalidArgumentException("--master-port 0 cannot be told to other nodes: name a port");
        }
        if (port < 0) port = nodes > 1 ? RendezvousOptions.DEFAULT_PORT : 0;
        if (i >= args.size()) throw new InvalidArgumentException("missing '--' before the program to run");
        List<String> command = args.subList(i + 1, args.size());
        if (command.isEmpty()) throw new InvalidArgumentException("no main class or -jar after '--'");
        if (command.get(0).equals("-jar") && command.size() < 2) throw new InvalidArgumentException("-jar needs a jar");
        return new LaunchArguments(processes, nodes, nodeRank, masterAddr, port, localAddr, secretFile, classPath, jvmArgs, grace, command);
    }

    /** The job's size: ranks on every node. */
    int worldSize() {
        return processes * nodes;
    }

    /** The global rank of this node's local rank {@code local}. */
    int globalRank(int local) {
        return nodeRank * processes + local;
    }

    /** The node that runs global rank {@code rank}. */
    int nodeOf(int rank) {
        return rank / processes;
    }

    private static String address(String option, String v) {
        if (v.isBlank() || v.contains(" ")) throw new InvalidArgumentException(option + " needs a host name or address, not '" + v + "'");
        return v.trim();
    }

    /** The master is what other nodes dial: a wildcard would name no host. */
    private static String reachable(String option, String address) {
        if (List.of("0.0.0.0", "::", "[::]").contains(address)) {
            throw new InvalidArgumentException(option + " " + address + " is a wildcard, not an address other nodes can "
                    + "reach: give node 0's host name or address");
        }
        return address;
    }

    private static String value(List<String> args, int i, String option) {
        if (i >= args.size()) throw new InvalidArgumentException(option + " needs a value");
        return args.get(i);
    }

    private static int positiveInt(String option, String v) {
        int n = nonNegativeInt(option, v);
        if (n < 1) throw new InvalidArgumentException(option + " must be at least 1, not " + n);
        return n;
    }

    private static int nonNegativeInt(String option, String v) {
        try {
            int n = Integer.parseInt(v.trim());
            if (n < 0) throw new InvalidArgumentException(option + " must not be negative, not " + n);
            return n;
        } catch (NumberFormatException e) {
            throw new InvalidArgumentException(option + " needs a number, not '" + v + "'");
        }
    }
}
