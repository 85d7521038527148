package org.jccl.rma.kv;

import java.util.List;
import org.jccl.core.DataType;
import org.jccl.core.OpKind;
import org.jccl.core.module.ModuleContext;
import org.jccl.core.module.StreamOperation;
import org.jccl.core.spi.Driver;
import org.jccl.core.spi.DriverComm;
import org.jccl.core.spi.DriverStream;
import org.jccl.core.spi.LaunchOp;
import org.jccl.core.spi.MemoryRef;
import org.jccl.core.spi.OneSidedComm;
import org.jccl.core.spi.WaitDescriptor;

/**
 * The stream operations the staged paths are made of, on one rank's pool: gather a piece's segments from the pool into
 * a staging slot and put or send it, or wait for or receive a piece into a staging slot and scatter it into the pool.
 * One operation per piece, so one work and one completion event each. Segments are copied one by one through the
 * driver here; a kernel that packs them at once is the LSA path's business.
 */
final class KvCopies {
    private final KvPool pool;
    private final ModuleContext context;
    private final Driver driver;
    private final DriverComm driverComm;
    private final MemoryRef memory;

    KvCopies(KvPool pool, ModuleContext context) {
        this.pool = pool;
        this.context = context;
        this.driver = context.driver();
        this.driverComm = context.driverComm();
        this.memory = context.memory(pool.memory());
    }

    /** Where slot {@code slot} of this rank's staging area starts in its allocation, for slots of {@code slotBytes}. */
    long slotOffset(int slot, long slotBytes) {
        return pool.stagingOffset() + slot * slotBytes;
    }

    /** Gathers {@code piece} of ({@code layer}, {@code tensor}) into local slot {@code slot}, then puts it into the peer's window. */
    StreamOperation gatherAndPut(String request, int layer, int tensor, KvGeometry piece, int slot, long slotBytes, int peer,
                                 long peerOffset) {
        long staged = slotOffset(slot, slotBytes);
        long window = pool.window().handle();
        OneSidedComm oneSided = context.capability(OneSidedComm.class);
        MemoryRef from = new MemoryRef(memory.block(), memory.offset() + staged);
        return new StreamOperation("kvPut(" + request + ", layer=" + layer + ", tensor=" + tensor + ", bytes=" + piece.bytes()
                + ", peer=" + peer + ")", List.of(pool.memory()), stream -> {
                    gather(stream, layer, tensor, piece, staged);
                    oneSided.putSignal(from, piece.bytes(), DataType.UINT8, peer, window, peerOffset, 0, 0, stream);
                });
    }

    /** Gathers {@code piece} into local slot {@code slot}, then sends it to the peer. */
    StreamOperation gatherAndSend(String request, int layer, int tensor, KvGeometry piece, int slot, long slotBytes, int peer) {
        long staged = slotOffset(slot, slotBytes);
        LaunchOp send = new LaunchOp(OpKind.SEND, piece.bytes(), DataType.UINT8, LaunchOp.NO_REDUCTION, peer,
                new MemoryRef(memory.block(), memory.offset() + staged), null, null, null);
        return new StreamOperation("kvSend(" + request + ", layer=" + layer + ", tensor=" + tensor + ", bytes=" + piece.bytes()
                + ", peer=" + peer + ")", List.of(pool.memory()), stream -> {
                    gather(stream, layer, tensor, piece, staged);
                    driver.launch(driverComm, send, stream);
                });
    }

    /** Waits for the signal of the sender's put into slot {@code slot}, then scatters the piece into the pool. */
    StreamOperation waitAndScatter(String request, int layer, int tensor, KvGeometry piece, int slot, long slotBytes, int sender) {
        long staged = slotOffset(slot, slotBytes);
        OneSidedComm oneSided = context.capability(OneSidedComm.class);
        WaitDescriptor[] one = {new WaitDescriptor(1, sender, 0, 0)};
        return new StreamOperation("kvLand(" + request + ", layer=" + layer + ", tensor=" + tensor + ", bytes=" + piece.bytes()
                + ", from=" + sender + ")", List.of(pool.memory()), stream -> {
                    oneSided.waitSignal(one, stream);
                    scatter(stream, layer, tensor, piece, staged);
                });
    }

    /** Receives the sender's piece into slot {@code slot}, then scatters it into the pool. */
    StreamOperation receiveAndScatter(String request, int layer, int tensor, KvGeometry piece, int slot, long slotBytes,
                                      int sender) {
        long staged = slotOffset(slot, slotBytes);
        LaunchOp recv = new LaunchOp(OpKind.RECV, piece.bytes(), DataType.UINT8, LaunchOp.NO_REDUCTION, sender, null,
                new MemoryRef(memory.block(), memory.offset() + staged), null, null);
        return new StreamOperation("kvReceive(" + request + ", layer=" + layer + ", tensor=" + tensor + ", bytes="
                + piece.bytes() + ", from=" + sender + ")", List.of(pool.memory()), stream -> {
                    driver.launch(driverComm, recv, stream);
                    scatter(stream, layer, tensor, piece, staged);
                });
    }

    private void gather(DriverStream stream, int layer, int tensor, KvGeometry piece, long staged) {
        long base = memory.offset() + pool.layout().offset(layer, tensor, 0);
        long at = memory.offset() + staged;
        for (int i = 0; i < piece.count(); i++) {
            driver.copyAsync(memory.block(), at, memory.block(), base + piece.source(i), piece.length(i), stream);
            at += piece.length(i);
        }
    }

    private void scatter(DriverStream stream, int layer, int tensor, KvGeometry piece, long staged) {
        long base = memory.offset() + pool.layout().offset(layer, tensor, 0);
        long at = memory.offset() + staged;
        for (int i = 0; i < piece.count(); i++) {
            driver.copyAsync(memory.block(), base + piece.destination(i), memory.block(), at, piece.length(i), stream);
            at += piece.length(i);
        }
    }
}
