#!/bin/bash
# Runs jccl on a GPU host without a JDK, from the repository root, with .gpu/ made by src/test/gpu/pack.sh:
#   bash src/test/gpu/run.sh tests [JUnit console options]      e.g. --include-tag gpu (the default)
#   bash src/test/gpu/run.sh main CLASS [ARGS...]               e.g. org.jccl.examples.QuickStart
# NCCL: NCCL_LIB_DIR if set, else the library of the host's Python NCCL package, else any libnccl.so.2 found.
# NVLink multicast (NVLS) stays off unless NCCL_NVLS_ENABLE is set: on shared hosts it can take GPUs out of service.
set -euo pipefail
PACK=$(pwd)/.gpu
[ -d "$PACK/lib" ] || { echo "run.sh: no .gpu/ here; run src/test/gpu/pack.sh first" >&2; exit 2; }
JRE=${TMPDIR:-/tmp}/jccl-jre
[ -x "$JRE/jre/bin/java" ] || { mkdir -p "$JRE" && tar -C "$JRE" -xJf "$PACK/jre.tar.xz"; }
JAVA="$JRE/jre/bin/java"

if [ -z "${NCCL_LIB_DIR:-}" ]; then
  NCCL_LIB_DIR=$(python3 -c 'import nvidia.nccl as m, os; print(os.path.join(list(m.__path__)[0], "lib"))' 2>/dev/null || true)
  if [ ! -f "$NCCL_LIB_DIR/libnccl.so.2" ]; then
    found=$(find / -xdev -name 'libnccl.so.2' -print -quit 2>/dev/null || true)
    NCCL_LIB_DIR=${found:+$(dirname "$found")}
  fi
fi
CUDART_DIR=$(dirname "$(find /usr/local/cuda/ -name 'libcudart.so*' -print -quit 2>/dev/null || echo /usr/lib/libcudart.so)")
export NCCL_LIB_DIR LD_LIBRARY_PATH="${NCCL_LIB_DIR}:${CUDART_DIR}:${LD_LIBRARY_PATH:-}"
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}

CP=$(ls -d "$PACK"/test-classes/* | tr '\n' ':')"$PACK/lib/*"
what=${1:-}; shift || true
case "$what" in
  tests)
    [ $# -gt 0 ] || set -- --include-tag gpu
    # The class path goes to the JVM: the console launcher's own --class-path does not expand "lib/*".
    exec "$JAVA" ${JAVA_OPTS:-} -cp "$CP:$PACK/junit-platform-console-standalone.jar" \
      org.junit.platform.console.ConsoleLauncher execute --scan-class-path --disable-banner --disable-ansi-colors "$@" ;;
  main)
    exec "$JAVA" ${JAVA_OPTS:-} -cp "$CP" "$@" ;;
  *)
    echo "usage: bash src/test/gpu/run.sh tests [JUnit options] | main CLASS [ARGS...]" >&2; exit 2 ;;
esac
