/**
 * Who owns the Netty event loops that jccl's network code runs on (the rendezvous server and clients, the host
 * backend's transport between processes). {@link org.jccl.core.net.NetLoops} hands out leases on a group of
 * loops: either threads jccl starts on first use and stops when the last lease is given back, or an
 * application's own {@link io.netty.channel.EventLoopGroup}, which jccl uses but never shuts down.
 */
@NullMarked
package org.jccl.core.net;

import org.jspecify.annotations.NullMarked;
