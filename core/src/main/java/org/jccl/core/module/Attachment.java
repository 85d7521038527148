package org.jccl.core.module;

/**
 * A module's state for one communicator (its windows, its device communicators, its transfers), made once per
 * communicator by an {@link AttachmentKey} and ended with it, in this order:
 * <ol>
 *   <li>{@link #communicatorClosing()} when {@code close()} begins or an abort fails the communicator's work: refuse
 *       new work and end what waits on peers (the close drains pending work next, and a wait no peer will satisfy
 *       would hold it until the close timeout);</li>
 *   <li>{@link #communicatorGone()} once the library destroyed or aborted the communicator: release host-side
 *       resources (retained memory, native structures the module allocated) without calling the library, which freed
 *       its own objects (windows, device communicators) with the communicator.</li>
 * </ol>
 * Attachments are told in the reverse order of their creation (the last made, the first ended), each at most once,
 * on the thread that closes or aborts; they must not block.
 */
public interface Attachment {
    /** The communicator is closing or aborting: refuse new work, end waits on peers. */
    default void communicatorClosing() {
    }

    /** The communicator is gone: release what this attachment holds, without calling the library. */
    void communicatorGone();
}
