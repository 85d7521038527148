/* jccl: <errno.h> for NVRTC: device code needs nothing from it (C++ has bool; printf is built in). */
#pragma once
