#!/bin/bash
# Runs the JUnit console launcher on the GPU machine with every packed jar on the JVM's class path.
# (.gpu/run.sh junit hands "lib/*" to the launcher's --class-path, which does not expand wildcards.)
# Usage, from the repository root there: bash examples/bench/gpu-junit.sh --include-tag gpu [launcher options]
set -e
G=$(pwd)/.gpu
TC=$(ls -d "$G"/test-classes/* | tr '\n' ':')
exec bash "$G/run.sh" java -cp "$TC$G/lib/*:$G/junit-platform-console-standalone.jar" \
  org.junit.platform.console.ConsoleLauncher execute --scan-class-path --disable-banner --disable-ansi-colors "$@"
