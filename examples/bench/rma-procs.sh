#!/bin/bash
# One-sided operations with one process per GPU, raw C (examples/bench/raw_rma_procs.c) and jccl's RmaProcessBench
# under jccl's launcher, back to back in one sitting: the 8 B ping-pong and the block channel between GPUs 0 and 1,
# then puts around a ring of every GPU. Needs .gpu/ from src/test/gpu/pack.sh and NCCL 2.29.2+ in NCCL_LIB_DIR.
# Logs go to $LOGS (default /tmp/jccl-rma-procs).
set -u
LOGS=${LOGS:-/tmp/jccl-rma-procs}
mkdir -p "$LOGS"
export NCCL_NVLS_ENABLE=0
NGPU=${NGPU:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')}
[ "$NGPU" -ge 2 ] || { echo "rma-procs.sh: needs two GPUs" >&2; exit 1; }
NCCL_LIB=${NCCL_LIB_DIR:?set NCCL_LIB_DIR to an NCCL 2.29.2+ lib folder}
CUDART=$(dirname "$(find /usr/local/cuda/ -name 'libcudart.so*' | head -1)")
R=/tmp/raw_rma_procs
gcc -O2 -o $R examples/bench/raw_rma_procs.c -I"$NCCL_LIB/../include" -I/usr/local/cuda/include \
    -L"$NCCL_LIB" -l:libnccl.so.2 -L"$CUDART" -lcudart -Wl,-rpath,"$NCCL_LIB:$CUDART" || exit 1
J="bash src/test/gpu/run.sh main org.jccl.core.launch.Launcher"
run() {
  local name=$1; shift
  echo "=== $name: $*"
  timeout "${T:-180}" "$@" 2>"$LOGS/$name.err" | tee "$LOGS/$name.txt"
}
for round in 1 2; do
  run pingpong-raw-$round  $R pingpong 2
  run pingpong-jccl-$round $J --nproc 2 -- org.jccl.examples.bench.RmaProcessBench pingpong
done
run channel-raw  $R channel 2
run channel-jccl $J --nproc 2 -- org.jccl.examples.bench.RmaProcessBench channel
run ring-raw-$NGPU  $R ring "$NGPU"
run ring-jccl-$NGPU $J --nproc "$NGPU" -- org.jccl.examples.bench.RmaProcessBench ring
