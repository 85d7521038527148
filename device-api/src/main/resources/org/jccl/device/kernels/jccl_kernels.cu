// Kernels jccl ships, compiled at run time by KernelCompiler against the loaded NCCL's device headers.
// Every size and offset is in bytes and a multiple of 16 (checked in Java), so data moves as 16-byte vectors.
#include <nccl_device.h>

// Copies n16 16-byte vectors from src to dst with every thread of the grid.
__device__ __forceinline__ void jccl_copy16(uint4* dst, const uint4* src, size_t n16, size_t thread, size_t threads) {
  for (size_t i = thread; i < n16; i += threads) dst[i] = src[i];
}

// All-to-all inside one LSA team (every rank reachable by load/store): rank r's block p of the send window (at
// sendOffset + p * blockBytes) lands in rank p's receive window at recvOffset + r * blockBytes. Each block of the grid
// moves a share of every peer's block between two LSA barriers: the first so that no peer's receive buffer is written
// while the previous round may still read it, the second so that every write has landed before the stream moves on.
// Needs lsaBarrierCount >= gridDim.x.
extern "C" __global__ void jccl_lsa_all_to_all(ncclWindow_t sendWin, size_t sendOffset, ncclWindow_t recvWin,
                                               size_t recvOffset, size_t blockBytes, ncclDevComm devComm) {
  ncclLsaBarrierSession<ncclCoopCta> bar{ncclCoopCta(), devComm, ncclTeamLsa(devComm), devComm.lsaBarrier, blockIdx.x};
  bar.sync(ncclCoopCta(), cuda::memory_order_relaxed);
  const size_t n16 = blockBytes / 16;
  const size_t thread = threadIdx.x + (size_t) blockIdx.x * blockDim.x;
  const size_t threads = (size_t) blockDim.x * gridDim.x;
  for (int k = 0; k < devComm.lsaSize; k++) {
    int peer = (devComm.lsaRank + k) % devComm.lsaSize; // start with a different peer on every rank
    const uint4* src = (const uint4*) ncclGetLocalPointer(sendWin, sendOffset + (size_t) peer * blockBytes);
    uint4* dst = (uint4*) ncclGetLsaPointer(recvWin, recvOffset + (size_t) devComm.lsaRank * blockBytes, peer);
    jccl_copy16(dst, src, n16, thread, threads);
  }
  bar.sync(ncclCoopCta(), cuda::memory_order_release);
}

// Put with signal over LSA: copies bytes from this rank's window (srcOffset) into LSA peer's window (dstOffset), then
// adds 1 to the 64-bit signal word at slotOffset in the peer's window. The word after it (in the sender's own window)
// counts arriving blocks: the last block of the grid to finish its share raises the signal, after every block's
// stores were fenced system-wide, and resets the count for the next put.
extern "C" __global__ void jccl_lsa_put_signal(ncclWindow_t win, size_t srcOffset, size_t dstOffset, size_t bytes,
                                               int peer, size_t slotOffset) {
  const uint4* src = (const uint4*) ncclGetLocalPointer(win, srcOffset);
  uint4* dst = (uint4*) ncclGetLsaPointer(win, dstOffset, peer);
  jccl_copy16(dst, src, bytes / 16, threadIdx.x + (size_t) blockIdx.x * blockDim.x, (size_t) blockDim.x * gridDim.x);
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence_system();
    unsigned int* arrivals = (unsigned int*) ncclGetLocalPointer(win, slotOffset + 8);
    if (atomicAdd(arrivals, 1u) == gridDim.x - 1) {
      *arrivals = 0;
      __threadfence_system();
      cuda::atomic_ref<unsigned long long, cuda::thread_scope_system> signal(
          *(unsigned long long*) ncclGetLsaPointer(win, slotOffset, peer));
      signal.fetch_add(1ull, cuda::memory_order_release);
    }
  }
}

// Holds the stream until the signal word at slotOffset in this rank's window reaches expected (puts are counted
// cumulatively), with acquire ordering so that the data the puts wrote is visible to the work that follows.
extern "C" __global__ void jccl_lsa_wait_signal(ncclWindow_t win, size_t slotOffset, unsigned long long expected) {
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_system> signal(
        *(unsigned long long*) ncclGetLocalPointer(win, slotOffset));
    while (signal.load(cuda::memory_order_acquire) < expected) __nanosleep(64);
  }
}

// KV-cache transfer over LSA: copies one layer of a request from this rank's paged pool into the peer's, straight to
// its scattered destination blocks. items holds (source offset, destination offset, bytes) per item, relative to a
// tensor's start in each pool; an item is contiguous on both sides (a block, a run of tokens, a token's share of the
// heads) and at most a few KiB, so one CTA moves one item at a time with 16-byte vectors. Item i of tensor t is work
// i + t * count; CTAs take works in turn. Every thread fences its stores system-wide; the last CTA to finish (counted
// in arrivals, reset for the next launch) then stores signalValue into the 64-bit word at signalOffset of the peer's
// window with release ordering (value 0: none): the layer's device signal, which the peer's jccl_kv_wait acquires.
// The peer's host still learns of the layer from this kernel's completion.
extern "C" __global__ void jccl_kv_put(ncclWindow_t win, int peer, const long long* items, int count, int tensors,
                                       size_t srcBase, size_t srcStride, size_t dstBase, size_t dstStride,
                                       unsigned int* arrivals, size_t signalOffset, unsigned long long signalValue) {
  const int works = count * tensors;
  for (int w = blockIdx.x; w < works; w += gridDim.x) {
    const int t = w / count;
    const long long* item = items + 3 * (w - t * count);
    const size_t src = srcBase + t * srcStride + (size_t) item[0];
    const size_t dst = dstBase + t * dstStride + (size_t) item[1];
    const size_t bytes = (size_t) item[2];
    const char* s = (const char*) ncclGetLocalPointer(win, src);
    char* d = (char*) ncclGetLsaPointer(win, dst, peer);
    if ((((size_t) s | (size_t) d | bytes) & 15) == 0) {
      jccl_copy16((uint4*) d, (const uint4*) s, bytes / 16, threadIdx.x, blockDim.x);
    } else {
      for (size_t k = threadIdx.x; k < bytes; k += blockDim.x) d[k] = s[k];
    }
  }
  __threadfence_system();
  __syncthreads();
  if (threadIdx.x == 0 && atomicAdd(arrivals, 1u) == gridDim.x - 1) {
    *arrivals = 0;
    if (signalValue != 0) {
      __threadfence_system();
      cuda::atomic_ref<unsigned long long, cuda::thread_scope_system> signal(
          *(unsigned long long*) ncclGetLsaPointer(win, signalOffset, peer));
      signal.store(signalValue, cuda::memory_order_release);
    }
  }
}

// Holds the stream until the layer signal word at signalOffset in this rank's window reaches value (a request's
// generation: words only grow), or the request's cancel word in pinned host memory does (its receiver ended it), with
// acquire ordering so that the layer's data is visible to the work that follows on the stream.
extern "C" __global__ void jccl_kv_wait(ncclWindow_t win, size_t signalOffset, const unsigned long long* cancel,
                                        unsigned long long value) {
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_system> signal(
        *(unsigned long long*) ncclGetLocalPointer(win, signalOffset));
    const volatile unsigned long long* cancelled = cancel;
    while (signal.load(cuda::memory_order_acquire) < value && *cancelled < value) __nanosleep(64);
  }
}
