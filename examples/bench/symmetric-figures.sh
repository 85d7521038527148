#!/bin/bash
# Small collectives on symmetric buffers (docs/guides/performance.md), one sitting on a GPU host with .gpu/ made by
# src/test/gpu/pack.sh: for every GPU count to measure (all GPUs, 2 and 1 by default), the all-reduce round trip of
# the raw C loop on cudaMalloc buffers and on collective-symmetric windows (raw_nccl_bench --window), and of jccl on
# plain buffers and on a SymmetricPool (Bench --symmetric), each size back to back; then bus bandwidth 1–64 MiB the
# same four ways. NCCL 2.27+ (symmetric windows). Logs go to $LOGS (default /tmp/jccl-symmetric).
#   RANKS="4 2 1" SIZES="8 4K 64K 1M" bash examples/bench/symmetric-figures.sh
set -u
LOGS=${LOGS:-/tmp/jccl-symmetric}
mkdir -p "$LOGS"
export NCCL_NVLS_ENABLE=0
NGPU=${NGPU:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')}
RANKS=${RANKS:-$(for n in "$NGPU" 2 1; do [ "$n" -le "$NGPU" ] && echo "$n"; done | uniq | tr '\n' ' ')}
SIZES=${SIZES:-8 4K 64K 1M}
SAMPLES=${SAMPLES:-10000}
B="bash src/test/gpu/run.sh main org.jccl.examples.bench.Bench"
R=/tmp/raw_nccl_bench
NCCL_LIB=${NCCL_LIB_DIR:-$(python3 -c 'import nvidia.nccl as n, os; print(os.path.join(list(n.__path__)[0], "lib"))')}
CUDART=$(dirname "$(find /usr/local/cuda/ -name 'libcudart.so*' | head -1)")
gcc -O2 -o $R examples/bench/raw_nccl_bench.c -I"$NCCL_LIB/../include" -I/usr/local/cuda/include \
    -L"$NCCL_LIB" -l:libnccl.so.2 -L"$CUDART" -lcudart -Wl,-rpath,"$NCCL_LIB:$CUDART" || exit 1
run() {
  local name=$1; shift
  timeout "${T:-90}" "$@" 2>"$LOGS/$name.err" | tee "$LOGS/$name.txt" | grep -E "round trip|^ *[0-9]+ " | sed "s/^/$name: /"
}
for n in $RANKS; do
  echo "=== $n GPU(s), round trip, $SAMPLES samples $(date +%T)"
  for b in $SIZES; do
    run lat-raw-$n-$b        $R --mode latency -b "$b" -n "$SAMPLES" --ranks "$n"
    run lat-raw-window-$n-$b $R --mode latency -b "$b" -n "$SAMPLES" --ranks "$n" --window
    run lat-jccl-$n-$b       $B --mode latency -b "$b" -n "$SAMPLES" --ranks "$n"
    run lat-jccl-sym-$n-$b   $B --mode latency -b "$b" -n "$SAMPLES" --ranks "$n" --symmetric
  done
  echo "=== $n GPU(s), bus bandwidth $(date +%T)"
  run bw-raw-$n        $R -b 1M -e 64M -f 4 -w 5 -n 20 --ranks "$n" --out-of-place
  run bw-raw-window-$n $R -b 1M -e 64M -f 4 -w 5 -n 20 --ranks "$n" --out-of-place --window
  run bw-jccl-sym-$n   $B -b 1M -e 64M -f 4 -w 5 -n 20 -c 1 --ranks "$n" --out-of-place --symmetric
done
echo "=== done $(date +%T)"
