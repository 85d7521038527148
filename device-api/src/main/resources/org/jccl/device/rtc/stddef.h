/* jccl: <stddef.h> for NVRTC, from libcu++. */
#pragma once
#include <cuda/std/cstddef>
using cuda::std::size_t; using cuda::std::ptrdiff_t; using cuda::std::nullptr_t;
