#!/bin/bash
# NCCL's network path on one host with two GPUs, in one command (with .gpu/ made by src/test/gpu/pack.sh):
#   bash examples/bench/net-path.sh
# Peer-to-peer and shared-memory transports are disabled (NCCL_P2P_DISABLE=1, NCCL_SHM_DISABLE=1), so NCCL connects
# the GPUs through its network transport (sockets, or IB where present), the path it takes between hosts. First NCCL's
# own figures in this sitting (the raw loop, one process driving both GPUs), then jccl with one process per GPU under
# jccl's launcher, every operation checked (sizes up to CHECK_MAX) and timed (up to MAX), plotted against the raw loop.
# The variables reach jccl's ranks as -Djccl.nccl.env.* properties of the launcher (which passes them to its ranks).
# NCCL's debug log (NCCL_DEBUG=INFO, subsystems INIT,NET, written to files) must show every channel "via NET/" and none
# via P2P or SHM; the script fails otherwise, or when a value is wrong. Logs in $LOGS (default /tmp/jccl-net-path).
# Set NCCL_SOCKET_IFNAME (e.g. lo) when NCCL picks an interface the host cannot use.
set -u
LOGS=${LOGS:-/tmp/jccl-net-path}
MAX=${MAX:-1G}
CHECK_MAX=${CHECK_MAX:-64M}
rm -rf "$LOGS" && mkdir -p "$LOGS"
NGPU=${NGPU:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')}
[ "$NGPU" -ge 2 ] || { echo "net-path.sh: needs 2 GPUs, found $NGPU" >&2; exit 1; }
# Two GPUs for both sides: the raw loop drives every visible GPU, jccl starts two ranks; on a bigger host they would
# otherwise compare 4 ranks with 2.
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1}
export NCCL_NVLS_ENABLE=0
NET_VARS=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET)
[ -n "${NCCL_SOCKET_IFNAME:-}" ] && NET_VARS+=("NCCL_SOCKET_IFNAME=$NCCL_SOCKET_IFNAME")

NCCL_LIB=${NCCL_LIB_DIR:-$(python3 -c 'import nvidia.nccl as n, os; print(os.path.join(list(n.__path__)[0], "lib"))')}
CUDART=$(dirname "$(find /usr/local/cuda/ -name 'libcudart.so*' | head -1)")
R=/tmp/raw_nccl_bench
gcc -O2 -o $R examples/bench/raw_nccl_bench.c -I"$NCCL_LIB/../include" -I/usr/local/cuda/include \
    -L"$NCCL_LIB" -l:libnccl.so.2 -L"$CUDART" -lcudart -Wl,-rpath,"$NCCL_LIB:$CUDART" || exit 1

SIZES=(-b 64K -e "$MAX" -f 4 -o all -w 5 -n 20)
echo "=== NCCL's own figures (raw loop, one process, both GPUs), network path"
env "${NET_VARS[@]}" NCCL_DEBUG_FILE="$LOGS/nccl-raw.%p.log" timeout 600 $R "${SIZES[@]}" | tee "$LOGS/raw.txt" || exit 1
env "${NET_VARS[@]}" NCCL_DEBUG_FILE="$LOGS/nccl-raw-json.%p.log" timeout 600 $R "${SIZES[@]}" --json >"$LOGS/raw.json" || exit 1

PROPS="-Djccl.nccl.env.NCCL_DEBUG_FILE=$LOGS/nccl-jccl.%p.log"
for v in "${NET_VARS[@]}"; do PROPS="$PROPS -Djccl.nccl.env.$v"; done
L="bash src/test/gpu/run.sh main org.jccl.core.launch.Launcher --nproc 2 -- org.jccl.examples.bench.Bench --per-process"
echo "=== jccl, one process per GPU, every operation checked up to $CHECK_MAX"
JAVA_OPTS="${JAVA_OPTS:-} $PROPS" timeout 600 $L -b 8 -e "$CHECK_MAX" -f 8 -o all -w 2 -n 5 -c 1 | tee "$LOGS/jccl-check.txt" \
  || exit 1
echo "=== jccl, one process per GPU, bandwidth (plotted against the raw loop)"
JAVA_OPTS="${JAVA_OPTS:-} $PROPS" timeout 600 $L "${SIZES[@]}" -c 0 --plot "$LOGS/net-path.svg" --compare "$LOGS/raw.json" \
  | tee "$LOGS/jccl.txt" || exit 1

echo "=== checks"
status=0
grep -q "Out of bounds values : 0 OK" "$LOGS/jccl-check.txt" || { echo "FAILED: wrong values (see jccl-check.txt)"; status=1; }
for who in raw jccl; do
  net=$(cat "$LOGS"/nccl-$who*.log 2>/dev/null | grep -c "via NET/")
  other=$(cat "$LOGS"/nccl-$who*.log 2>/dev/null | grep -E -c "via (P2P|SHM)")
  echo "$who: $net channel connection(s) via NET, $other via P2P or SHM"
  { [ "$net" -gt 0 ] && [ "$other" -eq 0 ]; } || { echo "FAILED: $who did not take only the network path"; status=1; }
done
echo "avg bus bandwidth: raw $(grep '# Avg bus bandwidth    : [0-9.]*$' "$LOGS/raw.txt" | awk '{print $NF}') GB/s," \
     "jccl $(grep '# Avg bus bandwidth    : [0-9.]*$' "$LOGS/jccl.txt" | awk '{print $NF}') GB/s (plot: $LOGS/net-path.svg)"
exit $status
