/**
 * A one-host launcher, like torchrun: {@link org.jccl.core.launch.Launcher} starts one JVM per rank with the
 * rendezvous variables set, hosts their rendezvous server, prefixes their output with the rank, and ends them all
 * when one fails.
 */
@NullMarked
package org.jccl.core.launch;

import org.jspecify.annotations.NullMarked;
