#!/bin/bash
# Packs everything a GPU host WITHOUT a JDK needs to run jccl's gpu-tagged suites and examples into .gpu/ at the
# repository root (ignored by git): a small JRE made by jlink from this build's JDK, the project's jars and test
# classes, every dependency jar, and the JUnit console launcher. Copy or carry .gpu/ and the repository there and use
# src/test/gpu/run.sh. On a GPU host WITH a JDK and Maven, use `mvn -B verify -Pgpu` instead.
# The JRE includes jdk.jfr, so runs there can be profiled: JAVA_OPTS=-XX:StartFlightRecording=filename=run.jfr
#
# Usage, from the repository root:  bash src/test/gpu/pack.sh
set -euo pipefail
[ -f pom.xml ] && [ -d core ] || { echo "pack.sh: run it from the repository root" >&2; exit 2; }
OUTDIR=$(pwd)/.gpu
mkdir -p "$OUTDIR"
JAVA_BIN=$(readlink -f "$(command -v javac)")
JDK=${JAVA_HOME:-$(dirname "$(dirname "$JAVA_BIN")")}

if [ ! -f "$OUTDIR/jre.tar.xz" ]; then
  echo "pack.sh: making a JRE with jlink"
  tmp=$(mktemp -d)
  "$JDK/bin/jlink" --add-modules java.base,java.logging,java.management,java.naming,java.net.http,java.xml,jdk.unsupported,jdk.crypto.ec,jdk.jfr \
      --strip-debug --no-man-pages --no-header-files --output "$tmp/jre"
  tar -C "$tmp" -cJf "$OUTDIR/jre.tar.xz" jre
  rm -rf "$tmp"
fi

rm -rf "$OUTDIR/lib" "$OUTDIR/test-classes"
mkdir -p "$OUTDIR/lib" "$OUTDIR/test-classes"
# Build (tests compiled, not run) and copy every module's dependencies (test scope included) in one reactor run, so
# the project's own modules resolve from their target/ folders and nothing is installed into the local repository.
echo "pack.sh: building (tests skipped)"
mvn -q -B -DskipTests package dependency:copy-dependencies -DincludeScope=test -DexcludeGroupIds=org.jccl \
    -DoutputDirectory="$OUTDIR/lib"
for module in core reactive device-api window-rma examples src/test; do
  for jar in "$module"/target/*.jar; do
    case "$jar" in *-sources.jar|*-javadoc.jar|*-tests.jar|*'*'*) ;; *) cp "$jar" "$OUTDIR/lib/" ;; esac
  done
  [ -d "$module/target/test-classes" ] && cp -r "$module/target/test-classes" "$OUTDIR/test-classes/$(echo "$module" | tr / _)"
done
platform=$(ls "$OUTDIR/lib" | sed -n 's/^junit-platform-engine-\(.*\)\.jar$/\1/p' | head -1)
mvn -q -B dependency:copy -Dartifact="org.junit.platform:junit-platform-console-standalone:${platform}" \
    -DoutputDirectory="$OUTDIR" -Dmdep.stripVersion=true
echo "pack.sh: .gpu/ holds $(ls "$OUTDIR/lib" | wc -l) jars, $(du -sm "$OUTDIR" | cut -f1) MiB"
