#!/usr/bin/env python3
"""torch.distributed side-by-side reference for jccl's benchmark, run on the GPU machine in the same sitting.

Two processes (one per GPU) over NCCL, like torch users run. Prints, in jccl bench's terms:
  * 8 B all_reduce round trip (enqueue + wait for completion): p50 / p99 / p99.9 in microseconds
  * pipelined 8 B all_reduces per second with N in flight (async_op=True, wait on the oldest)
  * all_reduce bus bandwidth at 64 MiB .. 2 GiB (nccl-tests' 2(n-1)/n factor)
Usage: python3 torch_reference.py [--latency-iters 5000] [--pipeline-ops 20000] [--inflight 64]
"""
import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def worker(rank, world, args, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", rank))
    x = torch.ones(2, dtype=torch.float32, device="cuda")
    for _ in range(200):
        dist.all_reduce(x)
    torch.cuda.synchronize()

    samples = []
    for _ in range(args.latency_iters):
        t0 = time.perf_counter_ns()
        work = dist.all_reduce(x, async_op=True)
        work.wait()
        torch.cuda.current_stream().synchronize()
        samples.append(time.perf_counter_ns() - t0)
    samples.sort()
    pct = lambda p: samples[min(len(samples) - 1, int(p * len(samples)))] / 1e3

    window = []
    t0 = time.perf_counter()
    for i in range(args.pipeline_ops):
        window.append(dist.all_reduce(x, async_op=True))
        if len(window) >= args.inflight:
            window.pop(0).wait()
    for w in window:
        w.wait()
    torch.cuda.synchronize()
    rate = args.pipeline_ops / (time.perf_counter() - t0)

    bw = []
    size = 64 << 20
    while size <= (2 << 30):
        t = torch.ones(size // 4, dtype=torch.float32, device="cuda")
        for _ in range(3):
            dist.all_reduce(t)
        torch.cuda.synchronize()
        iters = 20
        t0 = time.perf_counter()
        for _ in range(iters):
            dist.all_reduce(t)
        torch.cuda.synchronize()
        sec = (time.perf_counter() - t0) / iters
        bw.append((size, size / sec / 1e9 * 2 * (world - 1) / world))
        del t
        size *= 2

    if rank == 0:
        print(f"torch {torch.__version__}, NCCL {'.'.join(map(str, torch.cuda.nccl.version()))}, {world} processes")
        print(f"  all_reduce 8 B round trip: p50 {pct(0.5):.2f} us, p99 {pct(0.99):.2f} us, p99.9 {pct(0.999):.2f} us")
        print(f"  all_reduce 8 B pipelined, {args.inflight} in flight: {rate:.0f} ops/s")
        for size, b in bw:
            print(f"  all_reduce {size >> 20:5d} MiB: busbw {b:.1f} GB/s")
    dist.destroy_process_group()


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--latency-iters", type=int, default=5000)
    p.add_argument("--pipeline-ops", type=int, default=20000)
    p.add_argument("--inflight", type=int, default=64)
    a = p.parse_args()
    world = torch.cuda.device_count()
    mp.spawn(worker, args=(world, a, 29500 + os.getpid() % 1000), nprocs=world, join=True)
