package org.jccl.core.net;

import java.util.List;

/**
 * Netty's settings jccl chooses before Netty loads, so that a program using jccl prints no JVM warning.
 *
 * <p>From JDK 24 the JVM warns the first time {@code sun.misc.Unsafe}'s memory methods are called (JEP 498), and Netty
 * 4.1 calls them when it starts (jccl's 4.1.118, and 4.1.137, the newest 4.1 on Maven Central, alike: 4.1.120 stopped
 * using {@code Unsafe} by default on JDK 24+, later 4.1 releases went back to it for speed; 4.2 avoids it but would move
 * reactor-netty and every user of Netty in the application with it). Netty's own switch {@code io.netty.noUnsafe=true}
 * turns that off: its buffers then use plain {@code ByteBuffer}s, which jccl's traffic (the rendezvous, the host
 * backend's TCP frames) does not notice. jccl sets it only on JDK 24 and later, and only where nobody decided: an
 * application or command line that sets {@code io.netty.noUnsafe}, {@code io.netty.tryUnsafe} or
 * {@code --sun-misc-unsafe-memory-access} keeps its choice. Netty reads the property once, when it first loads: an
 * application that starts Netty itself before jccl decides for both.
 */
public final class NettyDefaults {
    /** The first JDK that warns about {@code Unsafe}'s memory methods. */
    private static final int FIRST_WARNING_JDK = 24;
    private static final List<String> USER_CHOICES = List.of("io.netty.noUnsafe", "io.netty.tryUnsafe",
            "sun.misc.unsafe.memory.access");

    static {
        applyNow();
    }

    private NettyDefaults() {
    }

    /**
     * Makes sure the defaults are set: called (first, in a static initializer) by every jccl class that may be the
     * first to start Netty. Idempotent and cheap after the first call.
     */
    public static void apply() {
        // The static initializer did the work, once, under the JVM's class initialization lock.
    }

    private static void applyNow() {
        if (Runtime.version().feature() < FIRST_WARNING_JDK) return;
        for (String key : USER_CHOICES) if (System.getProperty(key) != null) return;
        System.setProperty("io.netty.noUnsafe", "true");
    }
}
