/*
 * jccl's native layer, part three: DLPack, how GPU libraries hand tensors to each other.
 *
 * The structures are those of dlpack.h v0.8 and 1.x, whose DLManagedTensor is the same in both, declared here so that
 * no header is needed: a tensor arrives as a DLManagedTensor* address, is read field by field into Java arrays, and its
 * deleter is called once jccl's last use of it ended; a buffer leaves as a DLManagedTensor that jccl allocates (the
 * shape inside the same allocation) and whose deleter, a Java callback, frees it.
 */
#ifndef JCCL_DLPACK_H
#define JCCL_DLPACK_H

#include "jccl_native.h"

typedef struct { int32_t device_type; int32_t device_id; } jn_dl_device;
typedef struct { uint8_t code; uint8_t bits; uint16_t lanes; } jn_dl_dtype;
typedef struct {
    void* data;
    jn_dl_device device;
    int32_t ndim;
    jn_dl_dtype dtype;
    int64_t* shape;
    int64_t* strides;
    uint64_t byte_offset;
} jn_dl_tensor;
typedef struct jn_dl_managed {
    jn_dl_tensor dl_tensor;
    void* manager_ctx;
    void (*deleter)(struct jn_dl_managed* self);
} jn_dl_managed;

/* The fields jn_dlpack_read fills, in order. */
#define JN_DL_DATA 0
#define JN_DL_DEVICE_TYPE 1
#define JN_DL_DEVICE_ID 2
#define JN_DL_NDIM 3
#define JN_DL_CODE 4
#define JN_DL_BITS 5
#define JN_DL_LANES 6
#define JN_DL_BYTE_OFFSET 7
#define JN_DL_HAS_STRIDES 8
#define JN_DL_HAS_DELETER 9
#define JN_DL_FIELDS 10

/* The sizes and offsets the layout above has on this platform, so a test can hold them to dlpack.h's. */
static int jn_dlpack_layout(jn_long* out, int n) {
    jn_long v[6] = { (jn_long) sizeof(jn_dl_tensor), (jn_long) sizeof(jn_dl_managed), (jn_long) offsetof(jn_dl_tensor, shape),
                     (jn_long) offsetof(jn_dl_tensor, byte_offset), (jn_long) offsetof(jn_dl_managed, manager_ctx),
                     (jn_long) offsetof(jn_dl_managed, deleter) };
    for (int i = 0; i < n && i < 6; i++) out[i] = v[i];
    return 0;
}

/* Reads a tensor's scalar fields into header[JN_DL_FIELDS]; -1 for a null address. */
static int jn_dlpack_read(jn_long managed, jn_long* header) {
    if (managed == 0) return -1;
    const jn_dl_managed* m = (const jn_dl_managed*) (intptr_t) managed;
    header[JN_DL_DATA] = (jn_long) (intptr_t) m->dl_tensor.data;
    header[JN_DL_DEVICE_TYPE] = m->dl_tensor.device.device_type;
    header[JN_DL_DEVICE_ID] = m->dl_tensor.device.device_id;
    header[JN_DL_NDIM] = m->dl_tensor.ndim;
    header[JN_DL_CODE] = m->dl_tensor.dtype.code;
    header[JN_DL_BITS] = m->dl_tensor.dtype.bits;
    header[JN_DL_LANES] = m->dl_tensor.dtype.lanes;
    header[JN_DL_BYTE_OFFSET] = (jn_long) m->dl_tensor.byte_offset;
    header[JN_DL_HAS_STRIDES] = m->dl_tensor.strides != NULL;
    header[JN_DL_HAS_DELETER] = m->deleter != NULL;
    return 0;
}

/* Copies the first n entries of shape and (where present) strides; -1 for a null address or a missing shape. */
static int jn_dlpack_dims(jn_long managed, int n, jn_long* shape, jn_long* strides) {
    if (managed == 0) return -1;
    const jn_dl_managed* m = (const jn_dl_managed*) (intptr_t) managed;
    if (n > 0 && m->dl_tensor.shape == NULL) return -1;
    for (int i = 0; i < n; i++) {
        shape[i] = m->dl_tensor.shape[i];
        strides[i] = m->dl_tensor.strides != NULL ? m->dl_tensor.strides[i] : 0;
    }
    return 0;
}

/* Calls the tensor's deleter, which frees it: the consumer's last act. */
static void jn_dlpack_delete(jn_long managed) {
    jn_dl_managed* m = (jn_dl_managed*) (intptr_t) managed;
    if (m != NULL && m->deleter != NULL) m->deleter(m);
}

/*
 * A new DLManagedTensor over data (compact, row-major: strides NULL), its shape in the same allocation, deleter the
 * given function (JavaCPP passes a Java callback's C thunk) and manager_ctx the value the caller gives; 0 if out of
 * memory.
 */
static jn_long jn_dlpack_new(jn_long data, int device_type, int device_id, int code, int bits, int ndim, jn_long* shape,
                             jn_long manager_ctx, void (*deleter)(void*)) {
    if (ndim < 0) return 0;
    jn_dl_managed* m = (jn_dl_managed*) calloc(1, sizeof(jn_dl_managed) + sizeof(int64_t) * (size_t) (ndim > 0 ? ndim : 1));
    if (m == NULL) return 0;
    int64_t* dims = (int64_t*) (m + 1);
    for (int i = 0; i < ndim; i++) dims[i] = shape[i];
    m->dl_tensor.data = (void*) (intptr_t) data;
    m->dl_tensor.device.device_type = device_type;
    m->dl_tensor.device.device_id = device_id;
    m->dl_tensor.ndim = ndim;
    m->dl_tensor.dtype.code = (uint8_t) code;
    m->dl_tensor.dtype.bits = (uint8_t) bits;
    m->dl_tensor.dtype.lanes = 1;
    m->dl_tensor.shape = dims;
    m->dl_tensor.strides = NULL;
    m->dl_tensor.byte_offset = 0;
    m->manager_ctx = (void*) (intptr_t) manager_ctx;
    /* The Java callback's thunk takes void*: the same call as DLManagedTensor* on every ABI jccl builds for. */
    m->deleter = (void (*)(jn_dl_managed*)) deleter;
    return (jn_long) (intptr_t) m;
}

/* The manager_ctx of a tensor jn_dlpack_new made: how the Java deleter finds what the tensor holds. */
static jn_long jn_dlpack_context(jn_long managed) {
    return managed == 0 ? 0 : (jn_long) (intptr_t) ((jn_dl_managed*) (intptr_t) managed)->manager_ctx;
}

/* Frees a tensor jn_dlpack_new made (its shape is in the same allocation). */
static void jn_dlpack_free(jn_long managed) {
    free((void*) (intptr_t) managed);
}

#endif /* JCCL_DLPACK_H */
