package org.jccl.core.launch;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * Copies one rank's stream to the launcher's, line by line, each line prefixed with {@code [rank N] }. Lines are
 * written whole under the sink's lock, so ranks' lines never interleave mid-line.
 */
final class PrefixedOutput implements Runnable {
    private final InputStream source;
    private final PrintStream sink;
    private final String prefix;

    PrefixedOutput(InputStream source, PrintStream sink, int rank) {
        this.source = source;
        this.sink = sink;
        this.prefix = "[rank " + rank + "] ";
    }

    /** Starts copying on a daemon thread (it ends when the rank's stream closes). */
    Thread start(String name) {
        Thread t = new Thread(this, name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    @Override
    public void run() {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(source, StandardCharsets.UTF_8))) {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                synchronized (sink) {
                    sink.println(prefix + line);
                }
            }
        } catch (IOException e) {
            // The process was killed mid-line: its remaining output is lost, which the exit report explains.
        } finally {
            sink.flush();
        }
    }
}
