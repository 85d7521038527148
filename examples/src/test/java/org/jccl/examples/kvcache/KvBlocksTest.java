package org.jccl.examples.kvcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jccl.core.Backend;
import org.jccl.core.BackendKind;
import org.jccl.core.Buffer;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.Jccl;
import org.jccl.rma.kv.KvLayout;
import org.jccl.rma.kv.KvPool;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The pattern prefill writes and decode checks, through the host model on a real pool: a request written in place reads
 * right, and a block, token, head or tensor moved to the wrong place reads wrong, byte for byte.
 */
class KvBlocksTest {
    private static final KvLayout LAYOUT = KvLayout.builder().layers(2).tensors(2).blocks(6).tokensPerBlock(4).kvHeads(2)
            .headDim(8).type(DataType.BFLOAT16).build();
    private static final int[] BLOCKS = {4, 1, 3};
    private static final int TOKENS = 10; // the last block holds 2 of its 4 tokens

    private Communicator comm;
    private KvPool pool;
    private KvModel.Placed request;

    @BeforeEach
    void writeOneRequest() throws Exception {
        Backend host = Jccl.backend(BackendKind.HOST);
        comm = host.initAll(1).get(30, TimeUnit.SECONDS).get(0);
        pool = KvPool.allocate(comm, LAYOUT, 0).get(30, TimeUnit.SECONDS);
        try (KvModel model = KvModel.of(pool, 1, BLOCKS.length)) {
            request = model.place(7, TOKENS, BLOCKS);
            for (int layer = 0; layer < LAYOUT.layers(); layer++) request.computeLayer(layer).join();
        }
    }

    @AfterEach
    void close() {
        pool.close();
        comm.close();
    }

    @Test
    void aRequestInPlaceHasNoWrongByte() {
        assertEquals(0, request.wrongBytes().join());
    }

    @Test
    void neighbouringCoordinatesGiveOtherWords() {
        int word = KvBlocks.word(7, 1, 0, 5, 1, 3);
        for (int[] other : List.of(new int[] {8, 1, 0, 5, 1, 3}, new int[] {7, 0, 0, 5, 1, 3}, new int[] {7, 1, 1, 5, 1, 3},
                new int[] {7, 1, 0, 4, 1, 3}, new int[] {7, 1, 0, 5, 0, 3}, new int[] {7, 1, 0, 5, 1, 2})) {
            assertNotEquals(word, KvBlocks.word(other[0], other[1], other[2], other[3], other[4], other[5]));
        }
    }

    @Test
    void swappedBlocksReadWrong() {
        long block = LAYOUT.blockBytes();
        swap(LAYOUT.offset(1, 0, BLOCKS[0]), LAYOUT.offset(1, 0, BLOCKS[1]), block);
        assertWrong(2 * block);
    }

    @Test
    void swappedTokensReadWrong() {
        long row = LAYOUT.tokenBytes();
        long first = LAYOUT.offset(0, 1, BLOCKS[1]);
        swap(first, first + row, row);
        assertWrong(2 * row);
    }

    @Test
    void swappedHeadsReadWrong() {
        long head = LAYOUT.headBytes();
        long token = LAYOUT.offset(1, 1, BLOCKS[2]) + LAYOUT.tokenBytes();
        swap(token, token + head, head);
        assertWrong(2 * head);
    }

    @Test
    void kSwappedWithVReadsWrong() {
        swap(LAYOUT.offset(0, 0, BLOCKS[0]), LAYOUT.offset(0, 1, BLOCKS[0]), LAYOUT.blockBytes());
        assertWrong(2 * LAYOUT.blockBytes());
    }

    /** About every byte moved reads wrong: a byte may match by chance (1 in 256). */
    private void assertWrong(long moved) {
        long wrong = request.wrongBytes().join();
        assertEquals(moved, wrong, moved / 32.0, "wrong bytes of " + moved + " moved");
    }

    private void swap(long a, long b, long bytes) {
        Buffer buffer = pool.buffer();
        ByteBuffer first = ByteBuffer.allocate((int) bytes);
        ByteBuffer second = ByteBuffer.allocate((int) bytes);
        buffer.read(a, first);
        buffer.read(b, second);
        buffer.write(a, second.flip());
        buffer.write(b, first.flip());
    }
}
