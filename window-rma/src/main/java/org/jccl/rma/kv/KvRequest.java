package org.jccl.rma.kv;

import java.time.Duration;
import org.jccl.core.error.Errors;
import org.jccl.core.error.InvalidArgumentException;

/**
 * One request's KV cache, as the prefill rank sends it: {@code tokens} tokens in {@code sourceBlocks} of its pool
 * (in token order: token {@code t} is in block {@code sourceBlocks[t / tokensPerBlock]}), to decode rank
 * {@code receiver}, complete within {@code deadline} or failed with {@link KvFailure#DEADLINE}. The receiver chooses
 * the destination blocks.
 *
 * @param name         the request's name in every event and error, e.g. the serving system's request id; at most
 *                     {@link #MAX_NAME_LENGTH} chars
 * @param receiver     the decode rank (of the pool's communicator)
 * @param tokens       the prompt's tokens
 * @param sourceBlocks this rank's blocks holding them; kept unchanged until the send ends
 * @param deadline     how long the whole transfer may take, from {@link KvSender#send}
 */
public record KvRequest(String name, int receiver, int tokens, int[] sourceBlocks, Duration deadline) {
    /** The longest name, in chars: what a control message between processes carries whole. */
    public static final int MAX_NAME_LENGTH = 4096;

    public KvRequest {
        Errors.requireArgument(name, "name");
        Errors.requireArgument(sourceBlocks, "sourceBlocks");
        Errors.requireArgument(deadline, "deadline");
        if (name.isBlank()) throw new InvalidArgumentException("a KV request needs a name");
        if (name.length() > MAX_NAME_LENGTH) {
            throw new InvalidArgumentException("a KV request's name is at most " + MAX_NAME_LENGTH + " chars, not " + name.length()
                    + ": " + name.substring(0, 40) + "…");
        }
        if (tokens <= 0) throw new InvalidArgumentException("KV request " + name + " needs at least one token, not " + tokens);
        if (deadline.isNegative() || deadline.isZero()) {
            throw new InvalidArgumentException("KV request " + name + " needs a positive deadline, not " + deadline);
        }
        sourceBlocks = sourceBlocks.clone();
    }

    @Override
    public int[] sourceBlocks() {
        return sourceBlocks.clone();
    }

    @Override
    public String toString() {
        return "KvRequest[" + name + ", " + tokens + " tokens in " + sourceBlocks.length + " blocks to rank " + receiver
                + ", within " + deadline + "]";
    }
}
