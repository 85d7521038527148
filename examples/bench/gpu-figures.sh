#!/bin/bash
# Measures the GPU figures of docs/guides/performance.md in one sitting on a GPU host (with .gpu/ made by
# src/test/gpu/pack.sh), on every GPU present (1 or more): the raw NCCL loop and jccl's bandwidth for every
# operation (core path, data checked up to 64 MiB, plotted against the raw loop), core vs reactive at the large
# sizes, then 8 B round-trip latency and pipelined operations per second for raw, core and reactive back to back
# (and on one GPU too when there are several), the same round trip after 5 ms pauses (with the default spin and with
# jccl.spin=10ms), the event thread idle, and the torch.distributed reference (TORCH=0 leaves it out).
# Logs go to $LOGS (default /tmp/jccl-figures); when $ARCHIVE names a folder they are also packed into
# $ARCHIVE/jccl-figures.tgz, with the plot beside it.
set -u
LOGS=${LOGS:-/tmp/jccl-figures}
mkdir -p "$LOGS"
# src/test/gpu/run.sh sets this for jccl; the raw loop must measure the same NCCL configuration.
export NCCL_NVLS_ENABLE=0
NGPU=${NGPU:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')}
[ "$NGPU" -ge 1 ] || { echo "gpu-figures.sh: no GPU found (set NGPU to override)" >&2; exit 1; }
B="bash src/test/gpu/run.sh main org.jccl.examples.bench.Bench"
R=/tmp/raw_nccl_bench
run() {
  local name=$1; shift
  echo "=== $name: $*"
  timeout "${T:-150}" "$@" 2>"$LOGS/$name.err" | tee "$LOGS/$name.txt" | grep -v '^#  '
}
# The raw library in the same sitting, compiled there against the machine's own headers.
NCCL_LIB=${NCCL_LIB_DIR:-$(python3 -c 'import nvidia.nccl as n, os; print(os.path.join(list(n.__path__)[0], "lib"))')}
CUDART=$(dirname "$(find /usr/local/cuda/ -name 'libcudart.so*' | head -1)")
gcc -O2 -o $R examples/bench/raw_nccl_bench.c -I"$NCCL_LIB/../include" -I/usr/local/cuda/include \
    -L"$NCCL_LIB" -l:libnccl.so.2 -L"$CUDART" -lcudart -Wl,-rpath,"$NCCL_LIB:$CUDART" || exit 1

# Bandwidth: the raw loop's table, then the same run as JSON for the plot, then jccl.
run raw-bw        $R -b 64M -e 2G -f 2 -o all -w 5 -n 20
run raw-bw-json   $R -b 64M -e 2G -f 2 -o all -w 5 -n 20 --json
run bw-check      $B -b 8 -e 64M -f 8 -o all -w 2 -n 10 -c 1
run bw-core       $B -b 64M -e 2G -f 2 -o all -w 5 -n 20 -c 0 --plot "$LOGS/bw-core.svg" --compare "$LOGS/raw-bw-json.txt"
run bw-reactive   $B -b 64M -e 2G -f 2 -o allreduce -w 5 -n 20 -c 0 --path reactive

# Round trips and pipelines: raw, core, reactive back to back, on every GPU and, when there are several, on one.
RANKS=$NGPU
[ "$NGPU" -gt 1 ] && RANKS="$NGPU 1"
for n in $RANKS; do
  run lat-raw-${n}gpu       $R --mode latency -b 8 -n 20000 --ranks $n
  run lat-core-${n}gpu      $B --mode latency -b 8 -n 20000 --ranks $n
  run lat-reactive-${n}gpu  $B --mode latency -b 8 -n 20000 --ranks $n --path reactive
  run pause-raw-${n}gpu     $R --mode latency -b 8 -n 2000 --pause-us 5000 --ranks $n
  run pause-core-${n}gpu    $B --mode latency -b 8 -n 2000 --pause-us 5000 --ranks $n
  run pause-spin-${n}gpu    env JAVA_OPTS=-Djccl.spin=10ms $B --mode latency -b 8 -n 2000 --pause-us 5000 --ranks $n
  run pipe-raw-${n}gpu      $R --mode pipeline -b 8 -n 200000 --inflight 64 --ranks $n
  run pipe-core-${n}gpu     $B --mode pipeline -b 8 -n 200000 --inflight 64 --ranks $n
  run pipe-reactive-${n}gpu $B --mode pipeline -b 8 -n 200000 --inflight 64 --ranks $n --path reactive
done
run idle          $B --mode idle -b 8
[ "${TORCH:-1}" = 1 ] && PYTHONUNBUFFERED=1 T=240 run torch python3 examples/bench/torch_reference.py

if [ -n "${ARCHIVE:-}" ]; then
  mkdir -p "$ARCHIVE"
  tar -czf "$ARCHIVE/jccl-figures.tgz" -C "$LOGS" .
  cp "$LOGS"/*.svg "$ARCHIVE"/ 2>/dev/null
  echo "=== packed $LOGS into $ARCHIVE/jccl-figures.tgz"
fi
