/**
 * A launcher like torchrun: {@link org.jccl.core.launch.Launcher} starts one JVM per rank with the rendezvous
 * variables set, on one host or on each of several nodes (one launcher per node, node 0 hosting the rendezvous
 * server), prefixes their output with the rank, and ends them all — on every node — when one fails.
 */
@NullMarked
package org.jccl.core.launch;

import org.jspecify.annotations.NullMarked;
