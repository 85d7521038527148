#!/bin/bash
# Measures the README's GPU figures in one sitting on the GPU machine (after ../shared/gpu/pack.sh here, with .gpu
# carried there): jccl's bandwidth for every operation (core path, data checked up to 64 MiB), core vs reactive at
# the large sizes, 8 B round-trip latency, pipelined operations per second, the event thread idle, and the
# torch.distributed reference. Logs go to $OUT (the device tool's output folder) or /tmp/jccl-figures.
set -u
OUT=${OUT:-/tmp/jccl-figures}
mkdir -p "$OUT"
B="bash .gpu/run.sh main org.jccl.examples.bench.Bench"
run() {
  local name=$1; shift
  echo "=== $name"
  timeout "${T:-150}" "$@" 2>"$OUT/$name.err" | tee "$OUT/$name.txt" | grep -v '^#  '
}
# The raw library in the same sitting, compiled there against the machine's own headers.
NCCL_LIB=${NCCL_LIB_DIR:-$(python3 -c 'import nvidia.nccl as n, os; print(os.path.join(list(n.__path__)[0], "lib"))')}
CUDART=$(dirname "$(find /usr/local/cuda/ -name 'libcudart.so*' | head -1)")
gcc -O2 -o /tmp/raw_nccl_bench examples/bench/raw_nccl_bench.c -I"$NCCL_LIB/../include" -I/usr/local/cuda/include \
    -L"$NCCL_LIB" -l:libnccl.so.2 -L"$CUDART" -lcudart -Wl,-rpath,"$NCCL_LIB:$CUDART"
for op in allreduce allgather reducescatter broadcast alltoall sendrecv; do
  NCCL_NVLS_ENABLE=0 run "raw-$op" /tmp/raw_nccl_bench $op
done
run bw-check      $B -b 8 -e 64M -f 8 -o all -w 2 -n 10 -c 1
run bw-core       $B -b 64M -e 2G -f 2 -o all -w 5 -n 20 -c 0
run bw-reactive   $B -b 64M -e 2G -f 2 -o allreduce -w 5 -n 20 -c 0 --path reactive
run lat-core      $B --mode latency -b 8 -n 20000
run lat-reactive  $B --mode latency -b 8 -n 20000 --path reactive
run pipe-core     $B --mode pipeline -b 8 -n 200000 --inflight 64
run pipe-reactive $B --mode pipeline -b 8 -n 200000 --inflight 64 --path reactive
run idle          $B --mode idle -b 8
PYTHONUNBUFFERED=1 T=240 run torch python3 examples/bench/torch_reference.py
