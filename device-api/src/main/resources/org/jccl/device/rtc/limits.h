/* jccl: <limits.h> for NVRTC, from libcu++. */
#pragma once
#include <cuda/std/climits>
