package org.jccl.core.host;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.util.Collections;
import java.util.concurrent.TimeUnit;
import org.jccl.core.config.JcclSettings;
import org.jccl.core.error.InvalidArgumentException;
import org.jspecify.annotations.Nullable;

/**
 * The process-wide Netty threads of the host backend's network transport, shared by every bootstrap root and
 * network clique and shut down when the last one is released (so no thread outlives the communicators). Also
 * where listeners bind: the rendezvous bind rules ({@code jccl.rendezvous.bind}, loopback unless set).
 */
final class HostNetwork {
    private static final Object LOCK = new Object();
    private static @Nullable EventLoopGroup group;
    private static int users;

    private HostNetwork() {
    }

    /** The shared event loop group; every acquire needs one {@link #release}. */
    static EventLoopGroup acquire() {
        synchronized (LOCK) {
            if (group == null) {
                int threads = Math.max(2, Math.min(4, Runtime.getRuntime().availableProcessors()));
                group = new NioEventLoopGroup(threads, new DefaultThreadFactory("jccl-host-net", true));
            }
            users++;
            return group;
        }
    }

    /** Gives back one {@link #acquire}; the last release stops the threads. */
    static void release() {
        synchronized (LOCK) {
            if (users == 0) return;
            if (--users == 0 && group != null) {
                group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
                group = null;
            }
        }
    }

    /** The number of holders of the shared threads, for tests. */
    static int users() {
        synchronized (LOCK) {
            return users;
        }
    }

    /** The local address listeners bind to, with port 0. */
    static InetSocketAddress bindAddress() {
        String bind = JcclSettings.RENDEZVOUS_BIND.value().trim();
        try {
            return new InetSocketAddress(InetAddress.getByName(bind), 0);
        } catch (UnknownHostException e) {
            throw new InvalidArgumentException(JcclSettings.RENDEZVOUS_BIND.property() + " = " + bind + " is not an address: " + e.getMessage());
        }
    }

    /**
     * The address other processes reach a listener bound at {@code bound} by: the bound address itself, or for a
     * wildcard bind this host's first non-loopback IPv4 address (loopback when there is none).
     */
    static InetSocketAddress advertised(InetSocketAddress bound) {
        InetAddress ip = bound.getAddress();
        if (!ip.isAnyLocalAddress()) return bound;
        return new InetSocketAddress(firstExternalAddress(), bound.getPort());
    }

    private static InetAddress firstExternalAddress() {
        try {
            for (NetworkInterface nif : Collections.list(NetworkInterface.getNetworkInterfaces())) {
                if (!nif.isUp() || nif.isLoopback()) continue;
                for (InetAddress a : Collections.list(nif.getInetAddresses())) {
                    if (a instanceof Inet4Address && !a.isLinkLocalAddress()) return a;
                }
            }
        } catch (SocketException e) {
            // Fall through to loopback: a host without interfaces can still run ranks locally.
        }
        return InetAddress.getLoopbackAddress();
    }
}
