package org.jccl.rma.kv;

import java.util.ArrayDeque;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jccl.core.error.InvalidArgumentException;
import org.jccl.core.error.InvalidUsageException;

/** A {@link KvBlockAllocator} over block ids {@code 0..blocks-1}, first freed first reused. Thread-safe. */
public final class KvBlockPool implements KvBlockAllocator {
    private final int blocks;
    private final ArrayDeque<Integer> free = new ArrayDeque<>();
    private final BitSet taken;
    private final List<Runnable> listeners = new CopyOnWriteArrayList<>();

    public KvBlockPool(int blocks) {
        if (blocks <= 0) throw new InvalidArgumentException("a block pool needs blocks, not " + blocks);
        this.blocks = blocks;
        this.taken = new BitSet(blocks);
        for (int b = 0; b < blocks; b++) free.add(b);
    }

    @Override
    public synchronized int[] allocate(int count) {
        if (count <= 0) throw new InvalidArgumentException("allocate at least one block, not " + count);
        if (count > free.size()) return null;
        int[] out = new int[count];
        for (int i = 0; i < count; i++) {
            out[i] = free.poll();
            taken.set(out[i]);
        }
        return out;
    }

    @Override
    public void free(int[] ids) {
        synchronized (this) {
            for (int b : ids) {
                if (b < 0 || b >= blocks || !taken.get(b)) throw new InvalidUsageException("block " + b + " is not taken from this pool");
            }
            for (int b : ids) {
                taken.clear(b);
                free.add(b);
            }
        }
        for (Runnable r : listeners) r.run();
    }

    @Override
    public void onFree(Runnable listener) {
        listeners.add(listener);
    }

    /** Blocks free now. */
    public synchronized int available() {
        return free.size();
    }

    public int capacity() {
        return blocks;
    }
}
