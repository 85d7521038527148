package org.jccl.core.net;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.util.Collections;
import org.jccl.core.config.JcclSettings;
import org.jccl.core.error.InvalidArgumentException;

/**
 * Where jccl's listeners (the host backend's bootstrap roots and ranks, KV transfer links) bind and how other
 * processes reach them: the rendezvous bind rules ({@code jccl.rendezvous.bind}, loopback unless set).
 */
public final class ListenAddresses {
    private ListenAddresses() {
    }

    /** The local address listeners bind to, with port 0. */
    public static InetSocketAddress bindAddress() {
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
    public static InetSocketAddress advertised(InetSocketAddress bound) {
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
