package org.jccl.core.nccl;

import org.bytedeco.javacpp.FunctionPointer;
import org.bytedeco.javacpp.Loader;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.javacpp.LongPointer;
import org.bytedeco.javacpp.annotation.Platform;

/**
 * The JNI surface of {@code jccl_native.h}: one static native method per C wrapper. JavaCPP's Maven plugin generates
 * and compiles the glue at build time; {@link Loader#load()} extracts it from the jar and loads it.
 *
 * <p>Every handle (context, communicator, stream, event, address) is a {@code long}; results are the libraries' codes.
 * Output values go into caller-supplied arrays, so the hot path (launch, record, poll) creates no Java objects.
 * The context argument is the value {@link #jn_open} returned.
 */
@Platform(include = {"jccl_native.h", "jccl_kernels.h", "jccl_dlpack.h", "jccl_profiler.h"}, link = "dl")
final class NativeApi {
    static {
        Loader.load();
    }

    /** Result of a wrapper whose function the loaded library lacks (the feature table is checked first). */
    static final int MISSING = -1000;

    private NativeApi() {
    }

    static native long jn_open(int hip, String ncclCandidates, String runtimeCandidates, byte[] error, int errorLength);

    static native int jn_setenv(String name, String value);

    static native String jn_getenv(String name);

    static native int jn_nccl_function_count();

    static native String jn_nccl_function_name(int index);

    static native int jn_nccl_function_present(long ctx, int index);

    static native int jn_runtime_function_count();

    static native String jn_runtime_function_name(long ctx, int index);

    static native int jn_runtime_function_present(long ctx, int index);

    static native String jn_nccl_path(long ctx);

    static native String jn_runtime_path(long ctx);

    static native int jn_nccl_version(long ctx, int[] version);

    static native String jn_error_string(long ctx, int code);

    static native String jn_last_error(long ctx, long comm);

    static native int jn_unique_id(long ctx, byte[] id);

    static native int jn_comm_init_rank_config(long ctx, long[] comm, int nranks, byte[] id, int rank, byte[] config);

    static native int jn_comm_init_rank_scalable(long ctx, long[] comm, int nranks, int rank, int nIds, byte[] ids, byte[] config);

    static native int jn_comm_init_all(long ctx, long[] comms, int ndev, int[] devices);

    static native int jn_comm_finalize(long ctx, long comm);

    static native int jn_comm_destroy(long ctx, long comm);

    static native int jn_comm_abort(long ctx, long comm);

    static native int jn_comm_resume(long ctx, long comm);

    static native int jn_comm_async_error(long ctx, long comm, int[] out);

    static native int jn_comm_count(long ctx, long comm, int[] out);

    static native int jn_comm_device(long ctx, long comm, int[] out);

    static native int jn_comm_user_rank(long ctx, long comm, int[] out);

    static native int jn_comm_split(long ctx, long comm, int color, int key, long[] newComm, byte[] config);

    static native int jn_comm_shrink(long ctx, long comm, int[] excluded, int excludedCount, long[] newComm, byte[] config, int flags);

    static native int jn_comm_get_unique_id(long ctx, long comm, byte[] id);

    static native int jn_comm_grow(long ctx, long comm, int nranks, byte[] id, int rank, long[] newComm, byte[] config);

    static native int jn_comm_suspend(long ctx, long comm, int flags);

    static native int jn_comm_revoke(long ctx, long comm, int flags);

    static native int jn_comm_mem_stat(long ctx, long comm, int stat, long[] value);

    static native int jn_comm_register(long ctx, long comm, long buffer, long bytes, long[] handle);

    static native int jn_comm_deregister(long ctx, long comm, long handle);

    /**
     * {@code window} is native memory, not an array: NCCL writes the window at the group's end, which on a non-blocking
     * communicator comes after this call has returned.
     */
    static native int jn_comm_window_register(long ctx, long comm, long buffer, long bytes, int flags, LongPointer window);

    static native int jn_comm_window_deregister(long ctx, long comm, long window);

    static native int jn_win_get_user_ptr(long ctx, long comm, long window, long[] address);

    static native int jn_put_signal(long ctx, long local, long count, int type, int peer, long window, long peerOffset,
                                    int signalIndex, int context, int flags, long comm, long stream);

    static native int jn_signal(long ctx, int peer, int signalIndex, int context, int flags, long comm, long stream);

    /** {@code descriptors}: four ints per descriptor (count, peer, signal index, context), as {@code ncclWaitSignalDesc_t}. */
    static native int jn_wait_signal(long ctx, int count, int[] descriptors, long comm, long stream);

    static native int jn_mem_alloc(long ctx, long[] address, long bytes);

    static native int jn_mem_free(long ctx, long address);

    static native int jn_red_op_create_pre_mul_sum(long ctx, int[] op, long scalar, int type, int residence, long comm);

    static native int jn_red_op_create_pre_mul_sum_host(long ctx, int[] op, byte[] scalar, int scalarBytes, int type, long comm);

    static native int jn_red_op_destroy(long ctx, int op, long comm);

    static native int jn_all_reduce(long ctx, long send, long recv, long count, int type, int op, long comm, long stream);

    static native int jn_all_reduce_with_bias(long ctx, long send, long recv, long count, int type, int op, long comm, long stream, long bias);

    static native int jn_broadcast(long ctx, long send, long recv, long count, int type, int root, long comm, long stream);

    static native int jn_reduce(long ctx, long send, long recv, long count, int type, int op, int root, long comm, long stream);

    static native int jn_all_gather(long ctx, long send, long recv, long count, int type, long comm, long stream);

    static native int jn_reduce_scatter(long ctx, long send, long recv, long count, int type, int op, long comm, long stream);

    static native int jn_gather(long ctx, long send, long recv, long count, int type, int root, long comm, long stream);

    static native int jn_scatter(long ctx, long send, long recv, long count, int type, int root, long comm, long stream);

    static native int jn_all_to_all(long ctx, long send, long recv, long count, int type, long comm, long stream);

    static native int jn_all_to_allv(long ctx, long send, long[] sendCounts, long[] sendDispls, long recv, long[] recvCounts,
                                     long[] recvDispls, int type, long comm, long stream);

    static native int jn_send(long ctx, long send, long count, int type, int peer, long comm, long stream);

    static native int jn_recv(long ctx, long recv, long count, int type, int peer, long comm, long stream);

    static native int jn_group_start(long ctx);

    static native int jn_group_end(long ctx);

    static native int jn_group_simulate_end(long ctx, int version, float[] estimatedMicros);

    static native int jn_rt_device_count(long ctx, int[] count);

    static native int jn_rt_set_device(long ctx, int device);

    static native int jn_rt_get_device(long ctx, int[] device);

    static native int jn_rt_device_attribute(long ctx, int[] value, int attribute, int device);

    static native int jn_rt_pci_bus_id(long ctx, byte[] out, int length, int device);

    static native int jn_rt_device_name(long ctx, byte[] name, int length, int device);

    static native int jn_rt_mem_info(long ctx, long[] freeBytes, long[] totalBytes);

    static native int jn_rt_malloc(long ctx, long[] address, long bytes);

    static native int jn_rt_free(long ctx, long address);

    static native int jn_rt_host_alloc(long ctx, long[] address, long bytes, int flags);

    static native int jn_rt_free_host(long ctx, long address);

    static native int jn_rt_memcpy(long ctx, long dst, long src, long bytes, int kind);

    static native int jn_rt_memcpy_async(long ctx, long dst, long src, long bytes, int kind, long stream);

    static native int jn_rt_memset_async(long ctx, long dst, int value, long bytes, long stream);

    static native int jn_rt_stream_create(long ctx, long[] stream, int flags);

    static native int jn_rt_stream_destroy(long ctx, long stream);

    static native int jn_rt_stream_wait_event(long ctx, long stream, long event);

    static native int jn_rt_capture_begin(long ctx, long stream, int mode);

    static native int jn_rt_capture_end(long ctx, long stream, long[] exec);

    static native int jn_rt_graph_launch(long ctx, long exec, long stream);

    static native int jn_rt_graph_destroy(long ctx, long exec);

    static native int jn_rt_stream_synchronize(long ctx, long stream);

    static native int jn_rt_event_create(long ctx, long[] event, int flags);

    static native int jn_rt_event_record(long ctx, long event, long stream);

    static native int jn_rt_event_query(long ctx, long event);

    static native int jn_rt_event_query_all(long ctx, long[] events, int n, int[] status);

    static native int jn_rt_event_synchronize(long ctx, long event);

    static native int jn_rt_event_elapsed(long ctx, float[] millis, long start, long end);

    static native int jn_rt_event_destroy(long ctx, long event);

    static native String jn_rt_error_string(long ctx, int code);

    static native int jn_rt_version(long ctx, int[] version);

    // ---- jccl_kernels.h: the device API's host calls, then the driver API and NVRTC (their own context, "k")

    static native String jn_nccl_file(long ctx);

    static native int jn_comm_query_properties(long ctx, long comm, byte[] properties);

    static native int jn_dev_comm_create(long ctx, long comm, long requirements, long devComm);

    static native int jn_dev_comm_destroy(long ctx, long comm, long devComm);

    static native long jk_open(int hip, String driverCandidates, String rtcCandidates, byte[] error, int errorLength);

    static native int jk_driver_function_count();

    static native String jk_driver_function_name(long k, int index);

    static native int jk_driver_function_present(long k, int index);

    static native int jk_rtc_loaded(long k);

    static native int jk_rtc_function_count();

    static native String jk_rtc_function_name(long k, int index);

    static native int jk_rtc_function_present(long k, int index);

    static native String jk_driver_path(long k);

    static native String jk_rtc_path(long k);

    static native String jk_error_name(long k, int code);

    static native String jk_error_string(long k, int code);

    static native int jk_driver_version(long k, int[] version);

    static native int jk_library_load(long k, byte[] image, long[] library);

    static native int jk_library_unload(long k, long library);

    static native int jk_library_kernel(long k, long library, String name, long[] kernel);

    static native int jk_kernel_param(long k, long kernel, int index, long[] offset, long[] size);

    static native int jk_kernel_attribute(long k, int[] value, int attribute, long kernel, int device);

    static native int jk_launch(long k, long kernel, int[] dims, int sharedBytes, long stream, byte[] arguments, int[] offsets, int n);

    static native int jk_rtc_version(long k, int[] version);

    static native String jk_rtc_error_string(long k, int code);

    static native int jk_rtc_compile(long k, byte[] source, String name, int nHeaders, byte[] headers, int nOptions,
                                     byte[] options, long[] program);

    static native int jk_rtc_log_size(long k, long program, long[] size);

    static native int jk_rtc_log(long k, long program, byte[] log);

    static native int jk_rtc_code_size(long k, long program, int cubin, long[] size);

    static native int jk_rtc_code(long k, long program, int cubin, byte[] code);

    static native int jk_rtc_destroy(long k, long program);

    // ---- DLPack (jccl_dlpack.h): no library needed, so these work on every backend

    /** sizeof(DLTensor), sizeof(DLManagedTensor), offsets of shape, byte_offset, manager_ctx and deleter. */
    static native int jn_dlpack_layout(long[] out, int n);

    /** Reads a DLManagedTensor's scalar fields ({@code JN_DL_*} order) into {@code header}; -1 for address 0. */
    static native int jn_dlpack_read(long managed, long[] header);

    /** Copies {@code n} entries of shape and strides (0s where strides is NULL); -1 for address 0 or no shape. */
    static native int jn_dlpack_dims(long managed, int n, long[] shape, long[] strides);

    /** Calls the tensor's deleter. */
    static native void jn_dlpack_delete(long managed);

    /** A new compact DLManagedTensor (shape in the same allocation); 0 when out of memory. */
    static native long jn_dlpack_new(long data, int deviceType, int deviceId, int code, int bits, int ndim, long[] shape,
                                     long managerContext, DlpackDeleter deleter);

    /** The manager_ctx of a tensor {@link #jn_dlpack_new} made. */
    static native long jn_dlpack_context(long managed);

    /** Frees a tensor {@link #jn_dlpack_new} made. */
    static native void jn_dlpack_free(long managed);

    // ---- jccl's NCCL profiler plugin (jccl_profiler.h), used by NcclProfiler

    static native String jn_profiler_library();

    static native void jn_profiler_enable(int mask);

    static native void jn_profiler_tag(long commKey, long sequence);

    static native int jn_profiler_drain(byte[] out, int max);

    static native void jn_profiler_counts(long[] out);

    static native int jn_profiler_record_bytes();

    /**
     * The deleter of every DLManagedTensor jccl exports: a C function pointer whose call (by the consumer, on any of
     * its threads) comes back here. One instance serves all tensors: the tensor says which export it ends.
     */
    static final class DlpackDeleter extends FunctionPointer {
        static {
            Loader.load();
        }

        private final DlpackNative.Ending ending;

        DlpackDeleter(DlpackNative.Ending ending) {
            this.ending = ending;
            allocate();
        }

        private native void allocate();

        /** {@code void deleter(DLManagedTensor* self)}. */
        public void call(Pointer self) {
            ending.ended(self.address());
        }
    }
}
