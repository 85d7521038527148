package org.jccl.core.nccl;

import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import org.jccl.core.config.JcclSettings;
import org.jccl.core.error.InvalidArgumentException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

/**
 * NCCL's (or RCCL's) log lines delivered to SLF4J ({@code jccl.nccl.log=slf4j}): NCCL writes its log to the file
 * {@code NCCL_DEBUG_FILE} names, and here that file is a named pipe whose lines a daemon thread
 * ({@code jccl-nccl-log}) reads and logs under the logger {@value #LOGGER}, at the level NCCL gave each line. The pipe
 * is opened read-write before NCCL can open it, so NCCL's open never waits for a reader and the thread never sees an
 * end of file; a line NCCL writes while the thread is slow waits in the pipe (64 KiB), which is why this is not the
 * default. The choice of a pipe over a file: nothing grows on disk, and lines arrive as NCCL writes them.
 */
final class NcclLogBridge {
    /** The SLF4J logger NCCL's lines go to. */
    static final String LOGGER = "nccl";
    private static final Logger LOG = LoggerFactory.getLogger(NcclLogBridge.class);
    private static final Logger NCCL = LoggerFactory.getLogger(LOGGER);
    private static boolean applied;

    private final Path pipe;
    private final Thread reader;

    private NcclLogBridge(Path pipe, Thread reader) {
        this.pipe = pipe;
        this.reader = reader;
    }

    /**
     * Once per process, before NCCL loads: with {@code jccl.nccl.log=slf4j}, points {@code NCCL_DEBUG_FILE} at a new
     * pipe read into SLF4J, and sets {@code NCCL_DEBUG=WARN} unless a level is set. Does nothing when the user gave
     * NCCL_DEBUG_FILE; if the pipe cannot be made, NCCL's log stays where it was and a warning says why.
     *
     * @throws InvalidArgumentException if {@code jccl.nccl.log} is neither {@code stdout} nor {@code slf4j}
     */
    static synchronized void applyIfAsked() {
        String mode = JcclSettings.NCCL_LOG.oneOf("stdout", "slf4j");
        if (applied || mode.equals("stdout")) return;
        applied = true;
        String userFile = NativeApi.jn_getenv("NCCL_DEBUG_FILE");
        if (userFile != null) {
            LOG.warn("jccl.nccl.log=slf4j: NCCL_DEBUG_FILE={} is set, so NCCL's log goes there", userFile);
            return;
        }
        NcclLogBridge bridge;
        try {
            bridge = open(Files.createTempDirectory("jccl-nccl-log"), NcclLogBridge::toSlf4j);
        } catch (IOException e) {
            LOG.warn("jccl.nccl.log=slf4j: NCCL's log stays on stdout: {}", e.getMessage());
            return;
        }
        bridge.pipe.getParent().toFile().deleteOnExit(); // deleted in reverse order: the pipe first, then its folder
        bridge.pipe.toFile().deleteOnExit();
        if (NativeApi.jn_getenv("NCCL_DEBUG") == null) NativeApi.jn_setenv("NCCL_DEBUG", "WARN");
        NativeApi.jn_setenv("NCCL_DEBUG_FILE", bridge.pipe.toString());
        LOG.debug("NCCL's log goes to SLF4J logger '{}' through {}", LOGGER, bridge.pipe);
    }

    /**
     * Makes the pipe {@code dir/nccl.log}, opens it and starts the thread that hands each line to {@code sink} with its
     * level.
     *
     * @throws IOException if {@code mkfifo} fails or the pipe cannot be opened
     */
    static NcclLogBridge open(Path dir, BiConsumer<Level, String> sink) throws IOException {
        Path pipe = dir.resolve("nccl.log");
        makePipe(pipe);
        // Read-write: a FIFO opened so never blocks, and keeps a writer of its own, so no end of file between NCCL's opens.
        RandomAccessFile both = new RandomAccessFile(pipe.toFile(), "rw");
        BufferedReader lines = new BufferedReader(new InputStreamReader(new FileInputStream(both.getFD()), StandardCharsets.UTF_8));
        Thread reader = new Thread(() -> {
            try (both) {
                for (String line = lines.readLine(); line != null; line = lines.readLine()) deliver(line, sink);
            } catch (IOException e) {
                LOG.debug("NCCL's log pipe closed: {}", e.getMessage());
            }
        }, "jccl-nccl-log");
        reader.setDaemon(true);
        reader.start();
        return new NcclLogBridge(pipe, reader);
    }

    /** The pipe NCCL writes to. */
    Path pipe() {
        return pipe;
    }

    /** The thread reading it. */
    Thread reader() {
        return reader;
    }

    private static void makePipe(Path pipe) throws IOException {
        Process p = new ProcessBuilder("mkfifo", "-m", "600", pipe.toString()).redirectErrorStream(true).start();
        try {
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException("mkfifo " + pipe + " did not finish in 10 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while making " + pipe, e);
        }
        String said = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (p.exitValue() != 0) throw new IOException("mkfifo " + pipe + " failed (" + p.exitValue() + "): " + said);
    }

    /**
     * One NCCL line, {@code host:pid:tid [device] NCCL LEVEL text}, given to the sink without the level word and at that
     * level (WARN, INFO, TRACE; other lines, such as a warning's continuation, at INFO).
     */
    static void deliver(String line, BiConsumer<Level, String> sink) {
        Level found = null;
        int at = -1;
        for (Level level : new Level[] {Level.WARN, Level.INFO, Level.TRACE}) {
            int i = line.indexOf(" NCCL " + level.name() + " ");
            if (i >= 0 && (at < 0 || i < at)) {
                found = level;
                at = i;
            }
        }
        if (found != null) {
            sink.accept(found, line.substring(0, at) + " " + line.substring(at + (" NCCL " + found.name() + " ").length()));
        } else if (!line.isBlank()) {
            sink.accept(Level.INFO, line);
        }
    }

    private static void toSlf4j(Level level, String text) {
        switch (level) {
            case WARN -> NCCL.warn("{}", text);
            case TRACE -> NCCL.trace("{}", text);
            default -> NCCL.info("{}", text);
        }
    }
}
