package org.jccl.device;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.jccl.core.Communicator;
import org.jccl.core.DataType;
import org.jccl.core.error.JcclException;
import org.jccl.rma.OneSided;
import org.jccl.rma.SignalWait;
import org.jccl.rma.Window;
import org.jccl.rma.WindowFlag;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The lifecycle table of the modules' objects, on the stub NCCL 2.29.7: a window and a device communicator of a fresh
 * one-rank communicator, with that communicator open, closed or aborted, or the window or the device communicator
 * closed; every window call (register, registerAll, putSignal, signal, waitSignal, close) and device call (create,
 * properties, a kernel launch, close) is made in each. Each cell must end within seconds in a result, a typed
 * exception thrown at once, or a future failed with one. The table of outcomes is printed and in the failure message.
 */
class ModuleLifecycleTableTest {
    private static final long CELL_SECONDS = 10;
    private static KernelLibrary library;

    private enum State {
        OPEN, COMMUNICATOR_CLOSED, COMMUNICATOR_ABORTED, WINDOW_CLOSED, DEVICE_COMM_CLOSED
    }

    private record Cell(Communicator comm, Window window, DeviceComm devComm) {
    }

    @BeforeAll
    static void load() throws Exception {
        library = KernelLibrary.load(StubBackend.backend(), KernelImage.ptx(DeviceApiStubTest.FILL));
    }

    @AfterAll
    static void unload() {
        library.close();
    }

    @Test
    void everyCallCompletesInEveryState() throws Exception {
        Map<String, Function<Cell, CompletableFuture<?>>> calls = new LinkedHashMap<>();
        calls.put("window register", c -> {
            OneSided rma = OneSided.of(c.comm());
            return rma.register(rma.allocate(4096), WindowFlag.COLL_SYMMETRIC).thenCompose(Window::closeAsync);
        });
        calls.put("window registerAll", c -> OneSided.registerAll(List.of(c.comm()), 4096, WindowFlag.COLL_SYMMETRIC)
                .thenCompose(OneSided::closeAll));
        calls.put("putSignal (to itself)", c -> OneSided.of(c.comm())
                .putSignal(c.window(), c.window().buffer().slice(0, 64), 16, DataType.FLOAT32, 0, 1024));
        calls.put("signal", c -> OneSided.of(c.comm()).signal(0));
        calls.put("waitSignal", c -> OneSided.of(c.comm()).waitSignal(SignalWait.of(0, 1)));
        calls.put("window closeAsync", c -> c.window().closeAsync());
        calls.put("device create", c -> DeviceApi.of(c.comm()).create(requirements()).thenCompose(DeviceComm::closeAsync));
        calls.put("device properties", c -> DeviceApi.of(c.comm()).properties());
        calls.put("kernel launch", c -> DeviceApi.of(c.comm()).launch(library.kernel("fill"), LaunchConfig.of(1, 32),
                KernelArgs.create().window(c.window()).deviceComm(c.devComm()).float32(1f).int64(16)));
        calls.put("device closeAsync", c -> c.devComm().closeAsync());

        List<String> table = new ArrayList<>();
        List<String> broken = new ArrayList<>();
        for (State state : State.values()) {
            for (Map.Entry<String, Function<Cell, CompletableFuture<?>>> call : calls.entrySet()) {
                Cell cell = cell();
                try {
                    enter(state, cell);
                    String outcome = outcome(call.getValue(), cell);
                    table.add(state + " x " + call.getKey() + ": " + outcome);
                    if (outcome.startsWith("HANG") || outcome.startsWith("UNTYPED")) broken.add(state + " x " + call.getKey() + ": " + outcome);
                } finally {
                    release(cell);
                }
            }
        }
        System.out.println("lifecycle table (windows and device communicators, stub NCCL):\n" + String.join("\n", table));
        assertTrue(broken.isEmpty(), "cells that did not end cleanly: " + broken + "\nthe whole table:\n" + String.join("\n", table));
    }

    /** Clean-up code closing a window or a device communicator after its communicator is gone does not fail. */
    @Test
    void closingWhatAGoneCommunicatorTookWithItSucceeds() throws Exception {
        for (State gone : new State[] {State.COMMUNICATOR_CLOSED, State.COMMUNICATOR_ABORTED}) {
            Cell cell = cell();
            try {
                enter(gone, cell);
                cell.window().closeAsync().get(CELL_SECONDS, TimeUnit.SECONDS);
                cell.devComm().closeAsync().get(CELL_SECONDS, TimeUnit.SECONDS);
            } finally {
                release(cell);
            }
        }
    }

    private static DeviceCommRequirements requirements() {
        return DeviceCommRequirements.builder().lsaBarrierCount(1).build();
    }

    private static Cell cell() throws Exception {
        Communicator comm = StubBackend.backend().initAll(1).get(CELL_SECONDS, TimeUnit.SECONDS).get(0);
        OneSided rma = OneSided.of(comm);
        Window window = rma.register(rma.allocate(4096), WindowFlag.COLL_SYMMETRIC).get(CELL_SECONDS, TimeUnit.SECONDS);
        DeviceComm devComm = DeviceApi.of(comm).create(requirements()).get(CELL_SECONDS, TimeUnit.SECONDS);
        return new Cell(comm, window, devComm);
    }

    private static void enter(State state, Cell c) throws Exception {
        switch (state) {
            case OPEN -> { }
            case COMMUNICATOR_CLOSED -> c.comm().close();
            case COMMUNICATOR_ABORTED -> c.comm().abort().get(CELL_SECONDS, TimeUnit.SECONDS);
            case WINDOW_CLOSED -> c.window().closeAsync().get(CELL_SECONDS, TimeUnit.SECONDS);
            case DEVICE_COMM_CLOSED -> c.devComm().closeAsync().get(CELL_SECONDS, TimeUnit.SECONDS);
        }
    }

    private static void release(Cell c) {
        for (CompletableFuture<?> f : List.of(c.devComm().closeAsync(), c.window().closeAsync(), c.comm().abort())) {
            try {
                f.get(CELL_SECONDS, TimeUnit.SECONDS);
            } catch (Exception e) {
                // clean-up after the cell: whichever way it ends
            }
        }
        c.window().buffer().close();
    }

    /** "ok", "refused: Type" (thrown at once), "failed: Type" (the future), "HANG" or "UNTYPED: …". */
    private static String outcome(Function<Cell, CompletableFuture<?>> call, Cell cell) {
        CompletableFuture<?> f;
        try {
            f = call.apply(cell);
        } catch (JcclException e) {
            return "refused: " + e.getClass().getSimpleName();
        } catch (RuntimeException e) {
            return "UNTYPED (thrown): " + e;
        }
        try {
            f.get(CELL_SECONDS, TimeUnit.SECONDS);
            return "ok";
        } catch (TimeoutException e) {
            return "HANG";
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            while (cause instanceof CompletionException && cause.getCause() != null) cause = cause.getCause();
            return cause instanceof JcclException ? "failed: " + cause.getClass().getSimpleName() : "UNTYPED: " + cause;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "UNTYPED: interrupted";
        }
    }
}
