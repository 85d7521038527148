// jccl: compiled by NVRTC with -default-device. NCCL's headers declare host-only functions (__host__), which NVRTC
// refuses in that mode; declared without the attribute they are unused device declarations, and the inline
// __host__ __device__ functions stay device functions.
#undef __host__
#define __host__
