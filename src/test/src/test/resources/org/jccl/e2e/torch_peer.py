"""Rank 1 of an NCCL communicator whose rank 0 is a jccl (JVM) process: TorchInteropGpuTest's peer.

A PyTorch worker: its memory and stream are torch's (tensors on GPU 1, torch's current stream), its NCCL is the
library torch itself uses, called through ctypes (torch.cuda.nccl's init_rank is broken in torch 2.11 on
Python 3.12: "PY_SSIZE_T_CLEAN macro must be defined"). Reads the 128-byte unique id jccl made from the file named
by argv[1], joins as rank 1, runs the same operations in the same order as the Java side, checks every element it
receives and exits 0 only if all are right.
"""
import ctypes
import os
import sys

import nvidia.nccl
import torch

N = 1024
FLOAT32, SUM = 7, 0  # ncclFloat32, ncclSum


class UniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_byte * 128)]


def main():
    lib = ctypes.CDLL(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))
    lib.ncclGetErrorString.restype = ctypes.c_char_p
    lib.ncclCommInitRank.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, UniqueId, ctypes.c_int]

    def call(name, *args):
        code = getattr(lib, name)(*args)
        if code != 0:
            raise RuntimeError("%s: %s" % (name, lib.ncclGetErrorString(code).decode()))

    uid = UniqueId()
    ctypes.memmove(ctypes.byref(uid), open(sys.argv[1], "rb").read(), 128)
    torch.cuda.set_device(1)
    dev = torch.device("cuda", 1)
    comm = ctypes.c_void_p()
    call("ncclCommInitRank", ctypes.byref(comm), 2, uid, 1)
    stream = ctypes.c_void_p(torch.cuda.current_stream(dev).cuda_stream)
    p = lambda t: ctypes.c_void_p(t.data_ptr())
    n = ctypes.c_size_t(N)

    idx = torch.arange(N, dtype=torch.float32, device=dev)
    mine = idx + 1000.0  # this rank's contribution; rank 0 contributes idx
    wrong = []

    def expect(name, got, want):
        torch.cuda.synchronize(dev)
        if not torch.equal(got, want):
            wrong.append(name)

    out = torch.zeros(N, device=dev)
    call("ncclAllReduce", p(mine), p(out), n, FLOAT32, SUM, comm, stream)
    expect("allReduce", out, 2 * idx + 1000)

    out = torch.zeros(N, device=dev)
    call("ncclBroadcast", p(mine), p(out), n, FLOAT32, 0, comm, stream)
    expect("broadcast", out, 2 * idx)

    call("ncclReduce", p(mine), p(out), n, FLOAT32, SUM, 0, comm, stream)  # the root is the Java rank
    torch.cuda.synchronize(dev)

    out = torch.zeros(2 * N, device=dev)
    call("ncclAllGather", p(mine), p(out), n, FLOAT32, comm, stream)
    expect("allGather", out, torch.cat([idx, idx + 1000]))

    two = torch.arange(2 * N, dtype=torch.float32, device=dev) + 1000.0  # block j goes to rank j
    out = torch.zeros(N, device=dev)
    call("ncclReduceScatter", p(two), p(out), n, FLOAT32, SUM, comm, stream)
    expect("reduceScatter", out, 2 * torch.arange(N, 2 * N, dtype=torch.float32, device=dev) + 1000)

    out = torch.zeros(2 * N, device=dev)
    call("ncclAlltoAll", p(two), p(out), n, FLOAT32, comm, stream)
    expect("allToAll", out, torch.cat([torch.arange(N, 2 * N, dtype=torch.float32, device=dev),
                                       torch.arange(N, 2 * N, dtype=torch.float32, device=dev) + 1000]))

    out = torch.zeros(N, device=dev)
    call("ncclGroupStart")
    call("ncclSend", p(mine), n, FLOAT32, 0, comm, stream)
    call("ncclRecv", p(out), n, FLOAT32, 0, comm, stream)
    call("ncclGroupEnd")
    expect("send/recv", out, idx)

    torch.cuda.synchronize(dev)
    call("ncclCommDestroy", comm)
    print("torch peer: torch %s, wrong: %s" % (torch.__version__, wrong or "none"), flush=True)
    sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
