#!/bin/bash
# Measures the KV-transfer figures (docs/guides/performance.md, docs/design.md) in one sitting on a GPU host with
# .gpu/ made by src/test/gpu/pack.sh: the raw C transfer (examples/bench/raw_kv_bench.c: contiguous puts and the
# per-block loop), then jccl's KvBench one process per GPU: 1P1D on every path the loaded NCCL has, and, with 3 GPUs
# or more, 2P1D and 1P2D with the heads split. NCCL_LIB_DIR names the NCCL to use (2.29.2+ for puts and for the raw
# program; the device API path works from 2.28). Logs go to $LOGS (default /tmp/jccl-kv).
#   NCCL_LIB_DIR=... TOKENS=1024,4096,16384 bash examples/bench/kv-figures.sh
set -u
LOGS=${LOGS:-/tmp/jccl-kv}
mkdir -p "$LOGS"
export NCCL_NVLS_ENABLE=0
NGPU=${NGPU:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')}
TOKENS=${TOKENS:-1024,4096,16384}
REPEATS=${REPEATS:-10}
NCCL_LIB=${NCCL_LIB_DIR:-$(python3 -c 'import nvidia.nccl as n, os; print(os.path.join(list(n.__path__)[0], "lib"))')}
CUDART=$(dirname "$(find /usr/local/cuda/ -name 'libcudart.so*' | head -1)")
L="bash src/test/gpu/run.sh main org.jccl.core.launch.Launcher"
# Every run's output in one file, the summary lines on the console.
run() {
  local name=$1; shift
  echo "=== $name: $*" | tee -a "$LOGS/all.txt"
  timeout "${T:-240}" "$@" 2>>"$LOGS/errors.txt" | tee -a "$LOGS/all.txt" | grep -E 'median|aggregate|^#|streaming'
}

if gcc -O2 -o /tmp/raw_kv_bench examples/bench/raw_kv_bench.c -I"$NCCL_LIB/../include" -I/usr/local/cuda/include \
    -L"$NCCL_LIB" -l:libnccl.so.2 -L"$CUDART" -lcudart -Wl,-rpath,"$NCCL_LIB:$CUDART" 2>>"$LOGS/errors.txt"; then
  for t in ${TOKENS//,/ }; do
    run raw-contiguous-$t env CUDA_VISIBLE_DEVICES=0,1 /tmp/raw_kv_bench contiguous "$t" "$REPEATS"
    run raw-per-block-$t env CUDA_VISIBLE_DEVICES=0,1 /tmp/raw_kv_bench per-block "$t" 3
  done
else
  echo "=== raw_kv_bench not built (ncclPutSignal needs NCCL 2.29.2+): $(tail -1 "$LOGS/errors.txt")"
fi

for path in ${PATHS:-LSA_KERNEL PUT_SIGNAL SEND_RECV}; do
  run jccl-1p1d-$path env CUDA_VISIBLE_DEVICES=0,1 $L --nproc 2 -- org.jccl.examples.bench.KvBench "$TOKENS" "$REPEATS" "$path" 200
done
if [ "$NGPU" -ge 3 ]; then
  run jccl-2p1d env CUDA_VISIBLE_DEVICES=0,1,2 $L --nproc 3 -- org.jccl.examples.bench.KvBench "$TOKENS" "$REPEATS" AUTO 0 2
  run jccl-1p2d-split env CUDA_VISIBLE_DEVICES=0,1,2 $L --nproc 3 -- org.jccl.examples.bench.KvBench "$TOKENS" "$REPEATS" AUTO 0 1 split
fi
