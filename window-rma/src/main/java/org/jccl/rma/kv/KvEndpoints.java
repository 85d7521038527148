package org.jccl.rma.kv;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.jccl.core.Communicator;
import org.jccl.core.Modules;
import org.jccl.core.module.Attachment;
import org.jccl.core.module.AttachmentKey;

/**
 * The KV senders and receivers open on one communicator, as its attachment: when the communicator closes or aborts,
 * each ends its requests ({@link KvFailure#CLOSED}) and closes its links, so no request waits for a peer that will
 * never answer while the communicator drains.
 */
final class KvEndpoints implements Attachment {
    private static final AttachmentKey<KvEndpoints> KEY = AttachmentKey.of("kv-transfer", c -> new KvEndpoints());

    /** What an endpoint does when its communicator ends. */
    interface Endpoint {
        void communicatorEnding();
    }

    private final Set<Endpoint> open = ConcurrentHashMap.newKeySet();

    static KvEndpoints of(Communicator communicator) {
        return Modules.context(communicator).attachment(KEY);
    }

    void add(Endpoint endpoint) {
        open.add(endpoint);
    }

    void remove(Endpoint endpoint) {
        open.remove(endpoint);
    }

    @Override
    public void communicatorClosing() {
        for (Endpoint e : open) e.communicatorEnding();
    }

    @Override
    public void communicatorGone() {
        for (Endpoint e : open) e.communicatorEnding();
        open.clear();
    }
}
