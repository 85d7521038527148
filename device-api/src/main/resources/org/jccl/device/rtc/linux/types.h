/* jccl: <linux/types.h> for NVRTC: the kernel's fixed-width names NCCL's GIN structures use. */
#pragma once
typedef unsigned char __u8; typedef unsigned short __u16; typedef unsigned int __u32; typedef unsigned long long __u64;
typedef signed char __s8; typedef short __s16; typedef int __s32; typedef long long __s64;
typedef __u16 __be16; typedef __u32 __be32; typedef __u64 __be64; typedef __u16 __le16; typedef __u32 __le32; typedef __u64 __le64;
