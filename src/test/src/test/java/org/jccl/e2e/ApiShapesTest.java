package org.jccl.e2e;

import static java.util.Map.entry;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.reflect.GenericArrayType;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.lang.reflect.TypeVariable;
import java.lang.reflect.WildcardType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import kotlin.Unit;
import kotlin.coroutines.Continuation;
import org.jccl.core.Backend;
import org.jccl.core.Communicator;
import org.jccl.core.Group;
import org.jccl.core.Step;
import org.jccl.core.Work;
import org.jccl.device.DeviceApi;
import org.jccl.device.kotlin.CoroutineDeviceApi;
import org.jccl.device.reactive.ReactiveDeviceApi;
import org.jccl.reactive.ReactiveBackend;
import org.jccl.reactive.ReactiveCommunicator;
import org.jccl.reactive.ReactiveGroup;
import org.jccl.reactive.ReactiveStep;
import org.jccl.reactive.kotlin.CoroutineBackend;
import org.jccl.reactive.kotlin.CoroutineCommunicator;
import org.jccl.reactive.kotlin.CoroutineGroup;
import org.jccl.reactive.kotlin.CoroutineStep;
import org.jccl.rma.OneSided;
import org.jccl.rma.kotlin.CoroutineKvReceiver;
import org.jccl.rma.kotlin.CoroutineKvSender;
import org.jccl.rma.kotlin.CoroutineOneSided;
import org.jccl.rma.kv.KvReceiver;
import org.jccl.rma.kv.KvSender;
import org.jccl.rma.reactive.ReactiveKvReceiver;
import org.jccl.rma.reactive.ReactiveKvSender;
import org.jccl.rma.reactive.ReactiveOneSided;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;

/**
 * Keeps the three shapes of the API in step, the way Lettuce keeps its sync, async, reactive and coroutine APIs in
 * step (Lettuce generates them; jccl writes them by hand and checks them here). For each core type of core and of the
 * modules (Communicator, Backend, Group; OneSided of window-rma; DeviceApi of device-api) every public method must
 * have a twin of the same name and parameters in the reactive shape and in the Kotlin coroutine shape, or be listed
 * in {@link #NOT_MIRRORED} with the reason. The twin's types follow from
 * core's:
 *
 * <ul>
 *   <li>a {@link Work} or a {@code CompletableFuture<T>} becomes {@code Mono<T>} (reactive) and a {@code suspend}
 *       function returning {@code T} (Kotlin; {@code Void} becomes {@code Unit});</li>
 *   <li>a core type, as a parameter or a result, becomes its twin: {@code Communicator} becomes
 *       {@code ReactiveCommunicator} or {@code CoroutineCommunicator}, and so on.</li>
 * </ul>
 *
 * A Kotlin {@code suspend fun f(a: A): R} compiles to {@code Object f(A, Continuation<? super R>)}, so its result
 * type is read from the continuation's type argument. Besides core, the reactive and Kotlin shapes are compared with
 * each other, so an operation only they have (listed in {@link #SHAPE_ONLY}) cannot exist in one of them alone.
 */
class ApiShapesTest {
    private static final String QUERY = "a plain query answered at once from state the core object holds: not an"
            + " operation; read it from the wrapped core object (communicator(), backend())";
    private static final String RESOURCE = "makes memory, a stream or an event at once and gives it to the caller:"
            + " not an operation; call it on backend()";
    private static final String DESCRIPTION = "each shape describes itself";
    private static final String AS_DATA = "the operation as data, checked at once, for a group in any shape"
            + " (ReactiveGroup.add and CoroutineGroup.add take it): not issued, so nothing to await";

    /**
     * Public core methods that deliberately have no twin, keyed as {@code Type.name(ParameterType, ...)}. A method
     * added to core fails {@link #everyCoreMethodHasAReactiveTwin} and {@link #everyCoreMethodHasACoroutineTwin}
     * until it is mirrored in both shapes or listed here with its reason.
     */
    private static final Map<String, String> NOT_MIRRORED = Map.ofEntries(
            entry("Communicator.rank()", QUERY + "; ReactiveCommunicator and CoroutineCommunicator repeat it"),
            entry("Communicator.size()", QUERY + "; ReactiveCommunicator and CoroutineCommunicator repeat it"),
            entry("Communicator.device()", QUERY),
            entry("Communicator.backend()", QUERY),
            entry("Communicator.stream()", QUERY),
            entry("Communicator.options()", QUERY),
            entry("Communicator.id()", QUERY),
            entry("Communicator.describe()", QUERY),
            entry("Communicator.failure()", QUERY),
            entry("Communicator.isOpen()", QUERY),
            entry("Communicator.pendingCount()", QUERY),
            entry("Communicator.lastError()", QUERY),
            entry("Communicator.toString()", DESCRIPTION),
            entry("Communicator.close()", "blocks the caller until drained: ReactiveCommunicator keeps it as the same"
                    + " blocking AutoCloseable.close(); both shapes have closeAsync(), which does not block"),
            entry("Backend.kind()", QUERY),
            entry("Backend.kernels()", "the device-api module's access to the driver API and NVRTC (an SPI object, not an"
                    + " operation); device-api has its own reactive and Kotlin shapes"),
            entry("Backend.libraryFile()", QUERY),
            entry("Backend.describe()", QUERY),
            entry("Backend.version()", QUERY),
            entry("Backend.features()", QUERY),
            entry("Backend.deviceCount()", QUERY),
            entry("Backend.deviceInfo(int)", QUERY),
            entry("Backend.eventThread()", QUERY),
            entry("Backend.completedWorkCount()", QUERY),
            entry("Backend.eventThreadStallCount()", QUERY),
            entry("Backend.toString()", DESCRIPTION),
            entry("Backend.allocate(int, long)", RESOURCE),
            entry("Backend.allocatePinned(long)", RESOURCE),
            entry("Backend.allocateForCommunication(int, long)", RESOURCE),
            entry("Backend.createStream(int)", RESOURCE),
            entry("Backend.wrap(int, long, long, Object)", RESOURCE),
            entry("Backend.wrapWithRelease(int, long, long, Runnable)", RESOURCE),
            entry("Backend.wrapStream(int, long)", RESOURCE),
            entry("Backend.createEvent(int, boolean)", RESOURCE),
            entry("Backend.newUniqueId()", "made at once, before any communicator exists, and sent to the other"
                    + " ranks before anyone creates one: call it on backend()"),
            entry("OneSided.communicator()", QUERY),
            entry("OneSided.limits()", QUERY + "; ReactiveOneSided and CoroutineOneSided repeat it"),
            entry("OneSided.windows()", QUERY + "; ReactiveOneSided and CoroutineOneSided repeat it"),
            entry("OneSided.allocate(long)", RESOURCE),
            entry("OneSided.putSignalOperation(Window, Buffer, long, DataType, int, long, int, int)", AS_DATA),
            entry("OneSided.signalOperation(int, int, int)", AS_DATA),
            entry("OneSided.waitSignalOperation(SignalWait[])", AS_DATA),
            entry("DeviceApi.prepare(Kernel, LaunchConfig, KernelArgs)", "the launch as data for a Step, checked at once: not"
                    + " issued, so nothing to await; the step's replay is awaited in every shape (ReactiveStep, CoroutineStep)"),
            entry("DeviceApi.communicator()", QUERY),
            entry("DeviceApi.toString()", DESCRIPTION),
            entry("OneSided.toString()", DESCRIPTION),
            entry("KvSender.pool()", QUERY),
            entry("KvSender.options()", QUERY),
            entry("KvSender.toString()", DESCRIPTION),
            entry("KvSender.close()", "waits for closeAsync(), which every shape has"),
            entry("KvSender.send(KvRequest)", "the core form hands back a KvSend to mark layers ready on; the shapes take"
                    + " the layers as a Publisher (reactive) or a Flow (Kotlin) and return the delivery"),
            entry("KvReceiver.pool()", QUERY),
            entry("KvReceiver.options()", QUERY),
            entry("KvReceiver.waiting()", QUERY),
            entry("KvReceiver.toString()", DESCRIPTION),
            entry("KvReceiver.close()", "waits for closeAsync(), which every shape has"),
            entry("KvReceiver.communicatorEnding()", "the hook the communicator's attachment calls when the communicator"
                    + " closes or aborts (public for its KvEndpoints interface): not for applications"),
            entry("Step.builder(Communicator)", "collects operations at once, nothing issued: the shapes build from a"
                    + " Step.Builder (ReactiveStep.build, CoroutineStep.build)"),
            entry("Step.communicator()", QUERY),
            entry("Step.communicators()", QUERY),
            entry("Step.isCaptured()", QUERY),
            entry("Step.toString()", DESCRIPTION),
            entry("Step.close()", "waits for closeAsync(), which every shape has"),
            entry("Step.replay(Completion)", "replay() without a future, for loops that allocate nothing per step: a Mono"
                    + " or a suspension allocates per replay anyway, so the shapes replay through replay()"),
            entry("KvReceiver.open(KvPool, KvBlockAllocator, KvOptions, Consumer)", "the core form takes a callback for the"
                    + " requests granted blocks; the shapes give them as a Flux (reactive) or a Flow (Kotlin) instead"));

    /** Mono operations of the reactive shape that core lacks; each has a suspend twin like every other. */
    private static final Map<String, String> SHAPE_ONLY = Map.of(
            "ReactiveCommunicator.issue(Operation)", "emits core's Work itself at issue (for its sequence number or"
                    + " description), where the other operations complete with it; core's submit already returns it",
            "ReactiveOneSided.close(Window)", "core closes a window on the window itself (Window.closeAsync()); the"
                    + " shapes close it through the API object, to issue it on their scheduler",
            "ReactiveDeviceApi.close(DeviceComm)", "core closes a device communicator on itself (DeviceComm.closeAsync());"
                    + " the shapes close it through the API object, to issue it on their scheduler",
            "ReactiveKvSender.send(KvRequest, Publisher)", "the layers as a stream in, the delivery out: the shapes'"
                    + " form of core's send(KvRequest) and KvSend.ready",
            "ReactiveKvReceiver.open(KvPool, KvBlockAllocator, KvOptions)", "the requests as a Flux instead of core's"
                    + " callback",
            "ReactiveKvReceiver.done(KvIncoming)", "KvIncoming.done() as a Mono, for reactive chains",
            "ReactiveStep.build(ReactiveCommunicator, Builder)", "core's Step.Builder.build() with the shape's scheduler");

    private static final Map<Class<?>, Class<?>> REACTIVE_TWINS = Map.of(
            Communicator.class, ReactiveCommunicator.class,
            Backend.class, ReactiveBackend.class,
            Group.class, ReactiveGroup.class,
            OneSided.class, ReactiveOneSided.class,
            DeviceApi.class, ReactiveDeviceApi.class,
            KvSender.class, ReactiveKvSender.class,
            KvReceiver.class, ReactiveKvReceiver.class,
            Step.class, ReactiveStep.class);

    private static final Map<Class<?>, Class<?>> COROUTINE_TWINS = Map.of(
            Communicator.class, CoroutineCommunicator.class,
            Backend.class, CoroutineBackend.class,
            Group.class, CoroutineGroup.class,
            OneSided.class, CoroutineOneSided.class,
            DeviceApi.class, CoroutineDeviceApi.class,
            KvSender.class, CoroutineKvSender.class,
            KvReceiver.class, CoroutineKvReceiver.class,
            Step.class, CoroutineStep.class);

    /** The reactive types' Kotlin twins, for comparing those two shapes directly. */
    private static final Map<Class<?>, Class<?>> REACTIVE_TO_COROUTINE = Map.of(
            ReactiveCommunicator.class, CoroutineCommunicator.class,
            ReactiveBackend.class, CoroutineBackend.class,
            ReactiveGroup.class, CoroutineGroup.class,
            ReactiveOneSided.class, CoroutineOneSided.class,
            ReactiveDeviceApi.class, CoroutineDeviceApi.class,
            ReactiveKvSender.class, CoroutineKvSender.class,
            ReactiveKvReceiver.class, CoroutineKvReceiver.class,
            ReactiveStep.class, CoroutineStep.class);

    private static final String MONO = Mono.class.getName();
    private static final String VOID = Void.class.getName();
    private static final String UNIT = Unit.class.getName();

    /**
     * One method as the shapes are compared: its name, whether it is static, its parameter types and result type
     * (rendered with type arguments), and whether it is a Kotlin suspend function.
     */
    private record Signature(String name, boolean isStatic, List<String> parameters, String result, boolean suspends) {
        /** Same name, parameters and kind of call: the method that must have {@link #result}. */
        boolean sameCall(Signature other) {
            return name.equals(other.name) && parameters.equals(other.parameters) && suspends == other.suspends;
        }

        @Override
        public String toString() {
            return (isStatic ? "static " : "") + (suspends ? "suspend " : "") + name + "("
                    + String.join(", ", parameters) + "): " + result;
        }
    }

    @Test
    void everyCoreMethodHasAReactiveTwin() {
        List<String> problems = new ArrayList<>();
        REACTIVE_TWINS.forEach((core, twin) -> checkTwins(core, twin, REACTIVE_TWINS, false, problems));
        assertEquals(List.of(), problems, String.join("\n", problems));
    }

    @Test
    void everyCoreMethodHasACoroutineTwin() {
        List<String> problems = new ArrayList<>();
        COROUTINE_TWINS.forEach((core, twin) -> checkTwins(core, twin, COROUTINE_TWINS, true, problems));
        assertEquals(List.of(), problems, String.join("\n", problems));
    }

    /** Each reactive Mono has a suspend twin, and each suspend function a Mono twin: the Kotlin shape wraps it. */
    @Test
    void reactiveMonosAndKotlinSuspendFunctionsMatchOneToOne() {
        List<String> problems = new ArrayList<>();
        REACTIVE_TO_COROUTINE.forEach((reactive, coroutine) -> {
            List<Signature> suspendFunctions = signatures(coroutine).stream().filter(Signature::suspends).toList();
            List<Signature> monos = signatures(reactive).stream().filter(s -> isMono(s.result())).toList();
            for (Signature mono : monos) {
                Signature expected = new Signature(mono.name(), mono.isStatic(), rename(mono.parameters()),
                        monoToSuspendResult(mono.result()), true);
                requireTwin(coroutine, expected, suspendFunctions, "the Mono " + reactive.getSimpleName() + "."
                        + mono, problems);
            }
            for (Signature function : suspendFunctions) {
                boolean twinned = monos.stream().anyMatch(mono -> mono.name().equals(function.name())
                        && rename(mono.parameters()).equals(function.parameters()));
                if (!twinned) {
                    problems.add(reactive.getSimpleName() + " lacks a Mono twin of " + coroutine.getSimpleName() + "."
                            + function);
                }
            }
        });
        assertEquals(List.of(), problems, String.join("\n", problems));
    }

    /** A Mono of the reactive shape that core lacks must be a deliberate, listed addition. */
    @Test
    void operationsOnlyTheShapesHaveAreListed() {
        List<String> unlisted = new ArrayList<>();
        REACTIVE_TWINS.forEach((core, reactive) -> {
            List<Signature> fromCore = new ArrayList<>();
            for (Method m : publicMethods(core)) {
                Signature expected = expectedTwin(m, REACTIVE_TWINS, false);
                if (expected != null) fromCore.add(expected);
            }
            for (Method m : publicMethods(reactive)) {
                Signature s = signature(m);
                if (isMono(s.result()) && fromCore.stream().noneMatch(s::sameCall) && !SHAPE_ONLY.containsKey(key(m))) {
                    unlisted.add(key(m) + " has no core twin: add it to core or list it in SHAPE_ONLY with why");
                }
            }
        });
        assertEquals(List.of(), unlisted, String.join("\n", unlisted));
    }

    /** The lists stay honest: an entry whose method was removed or renamed is an error, not dead weight. */
    @Test
    void everyListedMethodExists() {
        Set<String> existing = new TreeSet<>();
        for (Class<?> type : REACTIVE_TWINS.keySet()) for (Method m : publicMethods(type)) existing.add(key(m));
        for (Class<?> type : REACTIVE_TO_COROUTINE.keySet()) for (Method m : publicMethods(type)) existing.add(key(m));
        Set<String> stale = new TreeSet<>(NOT_MIRRORED.keySet());
        stale.addAll(SHAPE_ONLY.keySet());
        stale.removeAll(existing);
        assertEquals(Set.of(), stale, "listed but not public methods of the compared types");
    }

    // ---- checking one core type against one twin type

    private static void checkTwins(Class<?> core, Class<?> twin, Map<Class<?>, Class<?>> twins, boolean coroutine,
                                   List<String> problems) {
        List<Signature> actual = signatures(twin);
        for (Method m : publicMethods(core)) {
            if (NOT_MIRRORED.containsKey(key(m))) continue;
            Signature expected = expectedTwin(m, twins, coroutine);
            if (expected == null) {
                problems.add(key(m) + " returns " + m.getGenericReturnType().getTypeName() + ", which has no"
                        + " asynchronous twin: list it in NOT_MIRRORED with why, or teach this test its twin");
                continue;
            }
            requireTwin(twin, expected, actual, key(m), problems);
        }
    }

    /** Reports whether {@code in} has {@code expected}: missing, or present with another result or staticness. */
    private static void requireTwin(Class<?> in, Signature expected, List<Signature> actual, String mirrored,
                                    List<String> problems) {
        if (actual.contains(expected)) return;
        List<Signature> sameCall = actual.stream().filter(expected::sameCall).toList();
        if (sameCall.isEmpty()) {
            List<Signature> sameName = actual.stream().filter(s -> s.name().equals(expected.name())).toList();
            problems.add(in.getSimpleName() + " lacks " + expected + " (twin of " + mirrored + ")"
                    + (sameName.isEmpty() ? "" : "; it has " + sameName));
        } else {
            problems.add(in.getSimpleName() + "." + sameCall.get(0) + " is mis-typed: expected " + expected
                    + " (twin of " + mirrored + ")");
        }
    }

    /**
     * The twin a core method must have in one shape, or null if its result has no mechanical twin (a plain value
     * that is not a core type).
     */
    private static Signature expectedTwin(Method core, Map<Class<?>, Class<?>> twins, boolean coroutine) {
        List<String> parameters = Arrays.stream(core.getGenericParameterTypes()).map(t -> render(t, twins)).toList();
        boolean isStatic = Modifier.isStatic(core.getModifiers());
        Type returned = core.getGenericReturnType();
        Type completesWith = asynchronousResult(returned);
        if (completesWith != null) {
            String result = render(completesWith, twins);
            return coroutine
                    ? new Signature(core.getName(), isStatic, parameters, result.equals(VOID) ? UNIT : result, true)
                    : new Signature(core.getName(), isStatic, parameters, MONO + "<" + result + ">", false);
        }
        if (returned instanceof Class<?> c && twins.containsKey(c)) {
            // A builder step or factory (Group.create, Group.add): the twin returns the twin type, at once.
            return new Signature(core.getName(), isStatic, parameters, render(c, twins), false);
        }
        return null;
    }

    /** What a core future completes with: Void for a {@link Work}, T for a {@code CompletableFuture<T>}; else null. */
    private static Type asynchronousResult(Type returned) {
        if (returned == Work.class) return Void.class;
        if (returned instanceof ParameterizedType p && p.getRawType() == CompletableFuture.class) {
            return p.getActualTypeArguments()[0];
        }
        return null;
    }

    // ---- reading signatures

    /** The public methods a caller sees, without Object's and without compiler-made ones. */
    private static List<Method> publicMethods(Class<?> type) {
        return Arrays.stream(type.getMethods())
                .filter(m -> m.getDeclaringClass() != Object.class && !m.isSynthetic() && !m.isBridge())
                .toList();
    }

    private static List<Signature> signatures(Class<?> type) {
        return publicMethods(type).stream().map(ApiShapesTest::signature).toList();
    }

    /** A method's signature; a Kotlin suspend function is recognised by its trailing {@link Continuation}. */
    private static Signature signature(Method m) {
        List<Type> parameters = new ArrayList<>(List.of(m.getGenericParameterTypes()));
        boolean isStatic = Modifier.isStatic(m.getModifiers());
        Type last = parameters.isEmpty() ? null : parameters.get(parameters.size() - 1);
        if (last instanceof ParameterizedType p && p.getRawType() == Continuation.class) {
            parameters.remove(parameters.size() - 1);
            // Continuation<? super R>: R is what the suspend function returns.
            Type argument = p.getActualTypeArguments()[0];
            Type result = argument instanceof WildcardType w && w.getLowerBounds().length == 1
                    ? w.getLowerBounds()[0] : argument;
            return new Signature(m.getName(), isStatic, renderAll(parameters), render(result, Map.of()), true);
        }
        return new Signature(m.getName(), isStatic, renderAll(parameters), render(m.getGenericReturnType(), Map.of()),
                false);
    }

    /** e.g. {@code Communicator.submit(Operation, Duration)}: how the lists name a method. */
    private static String key(Method m) {
        return m.getDeclaringClass().getSimpleName() + "." + m.getName() + "("
                + Arrays.stream(m.getParameterTypes()).map(Class::getSimpleName).collect(Collectors.joining(", ")) + ")";
    }

    private static List<String> renderAll(List<Type> types) {
        return types.stream().map(t -> render(t, Map.of())).toList();
    }

    /**
     * A type's full name with its type arguments, each class replaced by its twin. {@code ? extends T} is written
     * {@code T}: Kotlin adds that wildcard to {@code List<T>} parameters where Java has none, and it changes nothing
     * for a caller.
     */
    private static String render(Type type, Map<Class<?>, Class<?>> twins) {
        if (type instanceof Class<?> c) return twins.getOrDefault(c, c).getTypeName();
        if (type instanceof ParameterizedType p) {
            return render(p.getRawType(), twins) + Arrays.stream(p.getActualTypeArguments()).map(a -> render(a, twins))
                    .collect(Collectors.joining(", ", "<", ">"));
        }
        if (type instanceof WildcardType w) {
            if (w.getLowerBounds().length == 1) return "? super " + render(w.getLowerBounds()[0], twins);
            Type upper = w.getUpperBounds()[0];
            return upper == Object.class ? "?" : render(upper, twins);
        }
        if (type instanceof GenericArrayType a) return render(a.getGenericComponentType(), twins) + "[]";
        if (type instanceof TypeVariable<?> v) return v.getName();
        return type.getTypeName();
    }

    // ---- reactive to Kotlin

    private static boolean isMono(String renderedResult) {
        return renderedResult.startsWith(MONO + "<");
    }

    /** {@code Mono<T>} to the result of its suspend twin: T with reactive types renamed, Void as Unit. */
    private static String monoToSuspendResult(String mono) {
        String inner = mono.substring(MONO.length() + 1, mono.length() - 1);
        return inner.equals(VOID) ? UNIT : renameReactive(inner);
    }

    private static List<String> rename(List<String> reactiveTypes) {
        return reactiveTypes.stream().map(ApiShapesTest::renameReactive).toList();
    }

    /** Replaces every reactive type name in a rendered type by its Kotlin twin's. */
    private static String renameReactive(String rendered) {
        Map<String, String> names = new HashMap<>();
        REACTIVE_TO_COROUTINE.forEach((r, k) -> names.put(r.getName(), k.getName()));
        names.put(Publisher.class.getName(), "kotlinx.coroutines.flow.Flow"); // a stream in: Publisher, Flow in Kotlin
        String out = rendered;
        for (Map.Entry<String, String> e : names.entrySet()) out = out.replace(e.getKey(), e.getValue());
        return out;
    }
}
